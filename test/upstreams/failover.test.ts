import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { bodyFor, fleetApp, startFakes, where, type Endpoint } from "./fleet.ts";

const fakes = await startFakes();
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

const { json } = fleetApp(fakes, { UPSTREAM_COOLDOWN_S: "0" });

const ENDPOINTS: Endpoint[] = ["/v1/chat/completions", "/v1/messages", "/v1/responses"];

/** The answer's text, whatever the dialect, streamed or not. */
async function textOf(response: Response, path: Endpoint, stream: boolean): Promise<string> {
  if (stream) return response.text();
  const body = await response.json();
  if (path === "/v1/messages") return body.content.map((b: { text?: string }) => b.text ?? "").join("");
  if (path === "/v1/responses") return body.output.flatMap((o: { content?: { text: string }[] }) => o.content ?? []).map((c: { text: string }) => c.text).join("");
  return body.choices[0].message.content;
}

describe("ordered failover: the first target answers 503, the second answers (contract 13)", () => {
  for (const path of ENDPOINTS) {
    for (const stream of [false, true]) {
      test(`${path}${stream ? ", streamed" : ""}: two OpenAI-compatible upstreams`, async () => {
        fakes.ollama.next({ kind: "error", status: 503, message: "ollama is loading the model" });
        const response = await json(path, bodyFor(path, "pair-model", stream));
        expect(where(response)).toEqual({ status: 200, upstream: "openrouter", attempts: "2", route: "pair" });
        const text = await textOf(response, path, stream);
        expect(text).toContain(stream ? "OpenAI" : "Hello from OpenAI");
        expect([fakes.ollama.received.length, fakes.openrouter.received.length, fakes.groq.received.length]).toEqual([1, 1, 0]);
        // Both were sent the same request.
        expect(fakes.openrouter.last().body.model).toBe(fakes.ollama.last().body.model);
      });

      test(`${path}${stream ? ", streamed" : ""}: two Bedrock accounts in two regions`, async () => {
        fakes.us.next({ kind: "error", status: 503, type: "ServiceUnavailableException", message: "Bedrock is unavailable" });
        const response = await json(path, bodyFor(path, "twin-model", stream));
        expect(where(response)).toEqual({ status: 200, upstream: "bedrock-eu", attempts: "2", route: "bedrock-pair" });
        expect(await textOf(response, path, stream)).toContain(stream ? "Claude" : "Hello from Claude");
        expect([fakes.us.received.length, fakes.eu.received.length]).toEqual([1, 1]);
        expect([fakes.us.refused, fakes.eu.refused]).toEqual([[], []]);
        // The route's Claude model, as each account's region names it.
        expect([fakes.us.last().modelId, fakes.eu.last().modelId]).toEqual(["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "eu.anthropic.claude-sonnet-4-5-20250929-v1:0"]);
      });
    }
  }

  test("a Claude name fails over from us-east-1 to eu-west-1 on /v1/messages, streamed, each region sent its own profile", async () => {
    fakes.us.next({ kind: "error", status: 429, type: "ThrottlingException", message: "Too many requests" });
    const response = await json("/v1/messages", bodyFor("/v1/messages", "claude-haiku-4-5", true));
    expect(where(response)).toMatchObject({ status: 200, upstream: "bedrock-eu", attempts: "2" });
    expect(await response.text()).toContain("message_stop");
    expect(fakes.us.last().modelId).toBe("us.anthropic.claude-haiku-4-5-20251001-v1:0");
    expect(fakes.eu.last().modelId).toBe("eu.anthropic.claude-haiku-4-5-20251001-v1:0");
  });

  for (const path of ENDPOINTS) {
    test(`${path}: a 400 from the first target is the client's to fix, not failed over`, async () => {
      fakes.ollama.next({ kind: "error", status: 400, message: "max_tokens is too large" });
      const response = await json(path, bodyFor(path, "pair-model"));
      expect(where(response)).toEqual({ status: 400, upstream: "ollama", attempts: "1", route: "pair" });
      expect(JSON.stringify(await response.json())).toContain("max_tokens is too large");
      expect([fakes.ollama.received.length, fakes.openrouter.received.length]).toEqual([1, 0]);
    });
  }

  test("when every target fails, the client gets the last error, naming the last upstream tried", async () => {
    fakes.ollama.next({ kind: "error", status: 503, message: "down" });
    fakes.openrouter.next({ kind: "error", status: 503, message: "down too" });
    const { json: once } = fleetApp(fakes, { UPSTREAM_RETRIES: "0", UPSTREAM_COOLDOWN_S: "0" });
    const response = await once("/v1/chat/completions", bodyFor("/v1/chat/completions", "pair-model"));
    expect(where(response)).toEqual({ status: 503, upstream: "openrouter", attempts: "2", route: "pair" });
    expect([fakes.ollama.received.length, fakes.openrouter.received.length]).toEqual([1, 1]);
  });
});

describe("weighted targets (contract 13)", () => {
  test("weights 3:1 spread the first calls 3:1 within a few percent", async () => {
    const { json } = fleetApp(fakes, { RATE_LIMIT_RPM: "0" });
    const calls = 800;
    // In batches: parallel enough to be quick, few enough sockets at once.
    for (let done = 0; done < calls; done += 50) {
      const replies = await Promise.all(Array.from({ length: 50 }, () => json("/v1/chat/completions", bodyFor("/v1/chat/completions", "spread"))));
      for (const reply of replies) expect(reply.status).toBe(200);
    }
    const ollama = fakes.ollama.received.length;
    const openrouter = fakes.openrouter.received.length;
    expect(ollama + openrouter).toBe(calls);
    // 3/4 of the calls; the standard deviation over 800 draws is 1.5 points, so 5 points is 3.3 of them.
    expect(Math.abs(ollama / calls - 0.75)).toBeLessThan(0.05);
  });

  test("a weighted route's other target takes the call when the drawn one fails", async () => {
    // Every call to ollama fails: each request still ends at openrouter, in at most two calls.
    const { json: weighted } = fleetApp(fakes, { UPSTREAM_RETRIES: "0", UPSTREAM_COOLDOWN_S: "0" });
    for (let i = 0; i < 40; i++) fakes.ollama.next({ kind: "error", status: 503, message: "down" });
    const replies = await Promise.all(Array.from({ length: 40 }, () => weighted("/v1/chat/completions", bodyFor("/v1/chat/completions", "spread"))));
    expect(replies.map((r) => where(r).upstream)).toEqual(Array(40).fill("openrouter"));
    expect(fakes.openrouter.received.length).toBe(40);
    // Each call ollama took was one of these 40 requests' first draw.
    expect(fakes.ollama.received.length).toBeGreaterThan(20);
  });
});

describe("after the route's targets, and each upstream's own settings", () => {
  test("MODEL_FALLBACKS comes after every target of the route", async () => {
    const { json: app } = fleetApp(fakes, { UPSTREAM_RETRIES: "0", UPSTREAM_COOLDOWN_S: "0", MODEL_FALLBACKS: "pair-model=groq/llama-3.1-8b-instant" });
    fakes.ollama.next({ kind: "error", status: 503, message: "down" });
    fakes.openrouter.next({ kind: "error", status: 503, message: "down too" });
    const response = await app("/v1/chat/completions", bodyFor("/v1/chat/completions", "pair-model"));
    expect(where(response)).toMatchObject({ status: 200, upstream: "groq", attempts: "3" });
    expect(fakes.groq.last().body.model).toBe("llama-3.1-8b-instant");
    expect([fakes.ollama.received.length, fakes.openrouter.received.length]).toEqual([1, 1]);
  });

  const own = (url: string) => `
[upstreams.slow]
kind = "openai"
base_url = "${url}"
timeout_ms = 300
retries = 0
headers = { X-Team = "search" }

[[routes]]
name = "slow-first"
match = "slow-first"
to = ["slow", "openrouter"]
`;

  test("an upstream's timeout_ms ends its call, and the next target answers", async () => {
    const { json: app } = fleetApp(fakes, { UPSTREAM_COOLDOWN_S: "0" }, own(fakes.ollama.url));
    fakes.ollama.next({ kind: "hang" });
    const response = await app("/v1/chat/completions", bodyFor("/v1/chat/completions", "slow-first"));
    expect(where(response)).toMatchObject({ status: 200, upstream: "openrouter", attempts: "2", route: "slow-first" });
    expect(fakes.ollama.last().headers.get("x-team")).toBe("search");
    expect(fakes.openrouter.last().headers.get("x-team")).toBeNull();
  });

  test("an upstream's retries, not UPSTREAM_RETRIES, bound the calls to it alone", async () => {
    const { json: app } = fleetApp(fakes, { UPSTREAM_RETRIES: "3", UPSTREAM_COOLDOWN_S: "0" }, own(fakes.ollama.url));
    fakes.ollama.next({ kind: "error", status: 503, message: "down" });
    const response = await app("/v1/chat/completions", bodyFor("/v1/chat/completions", "slow/llama3"));
    expect(where(response)).toMatchObject({ status: 503, upstream: "slow", attempts: "1" });
    expect(fakes.ollama.received).toHaveLength(1);
  });
});
