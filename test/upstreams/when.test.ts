import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { fleetApp, startFakes, where, type Endpoint } from "./fleet.ts";

const fakes = await startFakes();
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

const TEAM_KEY = "sk-team-a-0123456789";

/**
 * One route for each condition alone (`c-<condition>` to openrouter when it holds), a default for
 * the rest (`c-*` to groq), and combinations: all must hold, the first route that holds wins.
 */
const ROUTES = `
[[routes]]
name = "tokens"
match = "c-tokens"
when = { input_tokens_over = 300 }
to = ["openrouter"]

[[routes]]
name = "thinking"
match = "c-thinking"
when = { thinking = true }
to = ["openrouter"]

[[routes]]
name = "tools"
match = "c-tools"
when = { tools = true }
to = ["openrouter"]

[[routes]]
name = "images"
match = "c-images"
when = { images = true }
to = ["openrouter"]

[[routes]]
name = "stream"
match = "c-stream"
when = { stream = true }
to = ["openrouter"]

[[routes]]
name = "endpoint"
match = "c-endpoint"
when = { endpoint = "/v1/messages" }
to = ["openrouter"]

[[routes]]
name = "key"
match = "c-key"
when = { key = "team-*" }
to = ["openrouter"]

[[routes]]
name = "header"
match = "c-header"
to = ["openrouter"]
[routes.when]
header = { user-agent = "claude-cli/*", x-team = "blue" }

# no thinking, tools false: a condition may ask for the feature's absence
[[routes]]
name = "plain"
match = "c-plain"
when = { thinking = false, tools = false, images = false }
to = ["openrouter"]

[[routes]]
name = "both"
match = "c-combo"
when = { thinking = true, tools = true, stream = true }
to = ["openrouter"]

[[routes]]
name = "either-thinking"
match = "c-combo"
when = { thinking = true }
to = ["ollama"]

[[routes]]
name = "count"
match = "c-count"
model = "claude-sonnet-4-5"
when = { header = { x-team = "blue" } }
to = ["bedrock-us"]

[[routes]]
name = "embed-team"
match = "e-*"
when = { key = "team-*", endpoint = "/v1/embeddings" }
to = ["openrouter"]

[[routes]]
name = "fim-local"
match = "e-*"
when = { endpoint = "/v1/completions", stream = true }
to = ["ollama"]

[[routes]]
name = "embed-any-thinking"
match = "e-*"
when = { thinking = true }
to = ["ollama"]

[[routes]]
name = "ingress-team"
match = "c-ingress"
when = { endpoint = "/model/{modelId}/converse", key = "team-*" }
to = ["openrouter"]

[[routes]]
name = "default"
match = "c-*"
to = ["groq"]

[[routes]]
name = "e-default"
match = "e-*"
to = ["groq"]

[[routes]]
name = "fallback-home"
match = "fb-*"
when = { header = { x-team = "blue" } }
to = ["openrouter"]

[[routes]]
name = "fallback-rest"
match = "fb-*"
to = ["ollama"]

[[routes]]
name = "failing"
match = "failing"
to = ["groq"]
`;

const { json } = fleetApp(fakes, { API_KEYS: `team-a=${TEAM_KEY}:chat`, MODEL_FALLBACKS: "failing=fb-next", UPSTREAM_RETRIES: "0", UPSTREAM_COOLDOWN_S: "0" }, ROUTES);

type Feature = "plain" | "tokens" | "thinking" | "tools" | "images";
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const LONG = "the quick brown fox jumps over the lazy dog ".repeat(60);

/** A body for `path` that has `feature` (and nothing else of the others). */
function body(path: Endpoint, model: string, feature: Feature, stream: boolean): Record<string, unknown> {
  const text = feature === "tokens" ? LONG : "hi";
  if (path === "/v1/messages") {
    const content = feature === "images" ? [{ type: "text", text }, { type: "image", source: { type: "base64", media_type: "image/png", data: PNG } }] : text;
    return {
      model, max_tokens: 2048, stream, messages: [{ role: "user", content }],
      ...(feature === "thinking" ? { thinking: { type: "enabled", budget_tokens: 1024 } } : {}),
      ...(feature === "tools" ? { tools: [{ name: "look", description: "looks", input_schema: { type: "object", properties: {} } }] } : {}),
    };
  }
  if (path === "/v1/responses") {
    const content = feature === "images" ? [{ type: "input_text", text }, { type: "input_image", image_url: `data:image/png;base64,${PNG}` }] : text;
    return {
      model, stream, input: [{ role: "user", content }],
      ...(feature === "thinking" ? { reasoning: { effort: "high" } } : {}),
      ...(feature === "tools" ? { tools: [{ type: "function", name: "look", parameters: { type: "object", properties: {} } }] } : {}),
    };
  }
  const content = feature === "images" ? [{ type: "text", text }, { type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }] : text;
  return {
    model, stream, messages: [{ role: "user", content }],
    ...(feature === "thinking" ? { reasoning_effort: "high" } : {}),
    ...(feature === "tools" ? { tools: [{ type: "function", function: { name: "look", parameters: { type: "object", properties: {} } } }] } : {}),
  };
}

/** Sends it, reads the whole answer (a stream to its end), and says where it went. */
async function send(path: Endpoint, model: string, feature: Feature, stream: boolean, init: { key?: string; headers?: Record<string, string> } = {}) {
  const response = await json(path, body(path, model, feature, stream), init);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${path} ${model}: ${response.status} ${text}`);
  if (stream) expect(response.headers.get("content-type")).toStartWith("text/event-stream");
  return where(response);
}

const ENDPOINTS: Endpoint[] = ["/v1/chat/completions", "/v1/messages", "/v1/responses"];
const EVERY = ENDPOINTS.flatMap((path) => [false, true].map((stream) => ({ path, stream })));
const label = ({ path, stream }: { path: Endpoint; stream: boolean }) => `${path}${stream ? ", streamed" : ""}`;

describe("each condition alone (contract 15), on every chat endpoint, streamed and not", () => {
  for (const on of EVERY) {
    const { path, stream } = on;
    test(`input_tokens_over, thinking, tools, images: ${label(on)}`, async () => {
      for (const feature of ["tokens", "thinking", "tools", "images"] as const) {
        // With the feature the route holds; without it, the next rule (the default) is taken.
        expect({ feature, ...(await send(path, `c-${feature}`, feature, stream)) }).toMatchObject({ feature, upstream: "openrouter", route: feature });
        expect({ feature, ...(await send(path, `c-${feature}`, "plain", stream)) }).toMatchObject({ feature, upstream: "groq", route: "default" });
      }
      // The other features do not make a route hold that asks for another one.
      for (const feature of ["thinking", "tools"] as const) {
        expect(await send(path, "c-tokens", feature, stream)).toMatchObject({ upstream: "groq", route: "default" });
      }
      // An image counts as count_tokens counts it: about 1,600 tokens.
      expect(await send(path, "c-tokens", "images", stream)).toMatchObject({ upstream: "openrouter", route: "tokens" });
    });

    test(`stream, endpoint, key, header: ${label(on)}`, async () => {
      expect(await send(path, "c-stream", "plain", stream)).toMatchObject(stream ? { upstream: "openrouter", route: "stream" } : { upstream: "groq", route: "default" });
      expect(await send(path, "c-endpoint", "plain", stream)).toMatchObject(path === "/v1/messages" ? { upstream: "openrouter", route: "endpoint" } : { upstream: "groq", route: "default" });
      expect(await send(path, "c-key", "plain", stream, { key: TEAM_KEY })).toMatchObject({ upstream: "openrouter", route: "key" });
      expect(await send(path, "c-key", "plain", stream)).toMatchObject({ upstream: "groq", route: "default" });
      const claudeCode = { "user-agent": "claude-cli/2.0.14 (external, cli)", "x-team": "blue" };
      expect(await send(path, "c-header", "plain", stream, { headers: claudeCode })).toMatchObject({ upstream: "openrouter", route: "header" });
      // Every header must match: one absent, or one of another value, fails the route.
      expect(await send(path, "c-header", "plain", stream, { headers: { "user-agent": claudeCode["user-agent"] } })).toMatchObject({ route: "default" });
      expect(await send(path, "c-header", "plain", stream, { headers: { ...claudeCode, "user-agent": "codex_cli_rs/0.40.0" } })).toMatchObject({ route: "default" });
      expect(await send(path, "c-header", "plain", stream, { headers: { ...claudeCode, "x-team": "Blue" } })).toMatchObject({ route: "default" });
    });
  }
});

describe("conditions combined: all must hold, the first route that holds wins", () => {
  for (const on of EVERY) {
    const { path, stream } = on;
    test(`${label(on)}`, async () => {
      // thinking = false, tools = false, images = false: a plain call holds, each feature breaks it.
      expect(await send(path, "c-plain", "plain", stream)).toMatchObject({ upstream: "openrouter", route: "plain" });
      for (const feature of ["thinking", "tools", "images"] as const) expect(await send(path, "c-plain", feature, stream)).toMatchObject({ route: "default" });
      // thinking + tools + stream: thinking alone fails "both" and takes the next rule that holds.
      expect(await send(path, "c-combo", "thinking", stream)).toMatchObject({ upstream: "ollama", route: "either-thinking" });
      expect(await send(path, "c-combo", "tools", stream)).toMatchObject({ upstream: "groq", route: "default" });
    });
  }

  test("thinking and tools together, streamed: the first route; not streamed: the next", async () => {
    const both = (path: Endpoint, stream: boolean) => {
      const b = body(path, "c-combo", "thinking", stream);
      const tools = body(path, "c-combo", "tools", stream).tools;
      return json(path, { ...b, tools });
    };
    for (const path of ENDPOINTS) {
      const streamed = await both(path, true);
      await streamed.text();
      expect({ path, ...where(streamed) }).toMatchObject({ path, status: 200, upstream: "openrouter", route: "both" });
      const whole = await both(path, false);
      await whole.text();
      expect({ path, ...where(whole) }).toMatchObject({ path, status: 200, upstream: "ollama", route: "either-thinking" });
    }
  });
});

describe("what a route's conditions read", () => {
  test("thinking: Anthropic's thinking disabled, or an effort of none, is not thinking", async () => {
    const messages = await json("/v1/messages", { ...body("/v1/messages", "c-thinking", "plain", false), thinking: { type: "disabled" } });
    expect(where(messages)).toMatchObject({ status: 200, route: "default" });
    const adaptive = await json("/v1/messages", { ...body("/v1/messages", "c-thinking", "plain", false), thinking: { type: "adaptive" } });
    expect(where(adaptive)).toMatchObject({ status: 200, route: "thinking" });
    const none = await json("/v1/chat/completions", { ...body("/v1/chat/completions", "c-thinking", "plain", false), reasoning_effort: "none" });
    expect(where(none)).toMatchObject({ status: 200, route: "default" });
    const minimal = await json("/v1/chat/completions", { ...body("/v1/chat/completions", "c-thinking", "plain", false), reasoning_effort: "minimal" });
    expect(where(minimal)).toMatchObject({ status: 200, route: "thinking" });
    const summary = await json("/v1/responses", { ...body("/v1/responses", "c-thinking", "plain", false), reasoning: { summary: "auto" } });
    expect(where(summary)).toMatchObject({ status: 200, route: "thinking" });
  });

  test("input_tokens_over counts as count_tokens estimates: just under the bound is not over", async () => {
    const count = async (content: string) => {
      const response = await json("/v1/messages/count_tokens", { model: "c-default", messages: [{ role: "user", content }] });
      return ((await response.json()) as { input_tokens: number }).input_tokens;
    };
    // Find a text whose estimate is exactly 300, then one token more.
    let words = 1;
    while ((await count("dog ".repeat(words))) < 300) words += 10;
    while ((await count("dog ".repeat(words))) > 300) words--;
    expect(await count("dog ".repeat(words))).toBe(300);
    const ask = (content: string) => json("/v1/messages", { model: "c-tokens", max_tokens: 16, messages: [{ role: "user", content }] });
    expect(where(await ask("dog ".repeat(words)))).toMatchObject({ status: 200, route: "default" });
    expect(where(await ask("dog ".repeat(words + 1)))).toMatchObject({ status: 200, route: "tokens" });
  });

  test("count_tokens counts where the request itself would go", async () => {
    const count = (headers: Record<string, string> = {}) => json("/v1/messages/count_tokens", { model: "c-count", messages: [{ role: "user", content: "hi" }] }, { headers });
    // Routed to Bedrock: its own count (no estimate mark).
    const blue = await count({ "x-team": "blue" });
    expect(blue.status).toBe(200);
    expect(blue.headers.get("x-parley-token-count")).toBeNull();
    expect(fakes.us.last()).toMatchObject({ action: "count-tokens" });
    // Otherwise to groq, which cannot count: the estimate.
    const other = await count();
    expect(other.headers.get("x-parley-token-count")).toBe("estimate");
    expect(fakes.us.received.length).toBe(1);
  });

  test("the route that answered is named on errors too", async () => {
    fakes.openrouter.next({ kind: "error", status: 400, message: "bad image" });
    const response = await json("/v1/chat/completions", body("/v1/chat/completions", "c-images", "images", false));
    expect(where(response)).toMatchObject({ status: 400, upstream: "openrouter", route: "images" });
  });

  test("MODEL_FALLBACKS models are routed with the same request's facts", async () => {
    fakes.groq.next({ kind: "error", status: 503, message: "down" });
    const blue = await json("/v1/chat/completions", body("/v1/chat/completions", "failing", "plain", false), { headers: { "x-team": "blue" } });
    expect(where(blue)).toMatchObject({ status: 200, upstream: "openrouter", route: "fallback-home", attempts: "2" });
    fakes.groq.next({ kind: "error", status: 503, message: "down" });
    const other = await json("/v1/chat/completions", body("/v1/chat/completions", "failing", "plain", false));
    expect(where(other)).toMatchObject({ status: 200, upstream: "ollama", route: "fallback-rest", attempts: "2" });
  });

  test("/v1/completions and /v1/embeddings are routed by key, endpoint and stream too; an embedding never thinks", async () => {
    const embed = (key?: string) => json("/v1/embeddings", { model: "e-small", input: "hello" }, { key });
    expect(where(await embed(TEAM_KEY))).toMatchObject({ status: 200, upstream: "openrouter", route: "embed-team" });
    expect(where(await embed())).toMatchObject({ status: 200, upstream: "groq", route: "e-default" });
    const complete = async (stream: boolean) => {
      const response = await json("/v1/completions", { model: "e-coder", prompt: "def add(a, b):", suffix: "\n", stream, max_tokens: 16 }, { key: TEAM_KEY });
      await response.text();
      return where(response);
    };
    expect(await complete(true)).toMatchObject({ status: 200, upstream: "ollama", route: "fim-local" });
    expect(await complete(false)).toMatchObject({ status: 200, upstream: "groq", route: "e-default" });
  });

  test("Bedrock's own operations are routed by their endpoint and key too", async () => {
    const converse = (op: string, key?: string) => json(`/model/c-ingress/${op}`, { messages: [{ role: "user", content: [{ text: "hi" }] }] }, { key });
    const team = await converse("converse", TEAM_KEY);
    expect(where(team)).toMatchObject({ status: 200, upstream: "openrouter", route: "ingress-team" });
    expect(where(await converse("converse"))).toMatchObject({ status: 200, upstream: "groq", route: "default" });
    const streamed = await converse("converse-stream", TEAM_KEY);
    await streamed.arrayBuffer();
    expect(where(streamed)).toMatchObject({ status: 200, upstream: "groq", route: "default" });
  });

  test("/v1/models names the upstream a request without conditions takes", async () => {
    const { call } = fleetApp(fakes, {}, ROUTES);
    const response = await call("/v1/models/c-tokens");
    expect(((await response.json()) as { provider: string }).provider).toBe("groq");
  });
});
