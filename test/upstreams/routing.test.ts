import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { bodyFor, EU, fleetApp, startFakes, US, where, type Endpoint } from "./fleet.ts";

const fakes = await startFakes();
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

/** One parley in front of all five, with aliases and MODEL_ROUTES naming the file's upstreams. */
const { json, call } = fleetApp(fakes, {
  MODEL_ALIASES: "quick=shared-model,ollama/aliased=groq/llama-3.1-8b-instant,my-coder=coder-fast,coder-alias=coder-x",
  MODEL_ROUTES: "coder-x=openrouter,ollama/special=groq,mr-*=bedrock-eu",
  UPSTREAM_COOLDOWN_S: "0",
});

const ask = (model: string, path: Endpoint = "/v1/chat/completions", stream = false) => json(path, bodyFor(path, model, stream));

/** How many calls each fake received, by upstream name. */
const counts = () => ({
  ollama: fakes.ollama.received.length,
  openrouter: fakes.openrouter.received.length,
  groq: fakes.groq.received.length,
  "bedrock-us": fakes.us.received.length,
  "bedrock-eu": fakes.eu.received.length,
});
const only = (name: keyof ReturnType<typeof counts>, n = 1) => ({ ollama: 0, openrouter: 0, groq: 0, "bedrock-us": 0, "bedrock-eu": 0, [name]: n });

describe("<upstream>/<model> addressing (contract 13)", () => {
  test("ollama/qwen2.5-coder:7b reaches ollama as qwen2.5-coder:7b, and the reply names it", async () => {
    const response = await ask("ollama/qwen2.5-coder:7b");
    expect(where(response)).toMatchObject({ status: 200, upstream: "ollama", attempts: "1" });
    expect(response.headers.get("x-parley-model")).toBe("qwen2.5-coder:7b");
    expect(fakes.ollama.last().body.model).toBe("qwen2.5-coder:7b");
    expect(counts()).toEqual(only("ollama"));
    // The reply carries the id the client sent.
    expect((await response.json()).model).toBe("ollama/qwen2.5-coder:7b");
  });

  test("openrouter/anthropic/claude-sonnet-4.5 sends anthropic/claude-sonnet-4.5 with openrouter's key (from ${OPENROUTER_KEY})", async () => {
    const response = await ask("openrouter/anthropic/claude-sonnet-4.5");
    expect(where(response)).toMatchObject({ status: 200, upstream: "openrouter" });
    expect(fakes.openrouter.last().body.model).toBe("anthropic/claude-sonnet-4.5");
    expect(fakes.openrouter.last().headers.get("authorization")).toBe("Bearer sk-or-v1-openrouter-key");
    expect(counts()).toEqual(only("openrouter"));
  });

  test("each upstream gets its own key; ollama, which has none, gets nobody else's", async () => {
    await ask("groq/llama-3.1-8b-instant");
    await ask("ollama/llama3");
    expect(fakes.groq.last().headers.get("authorization")).toBe("Bearer gsk-groq-key");
    expect(fakes.ollama.last().headers.get("authorization")).toBe("Bearer none");
  });

  test("a Bedrock upstream addressed by name gets the id as given, signed with its own account and region", async () => {
    const response = await ask("bedrock-eu/anthropic.claude-3-5-haiku-20241022-v1:0");
    expect(where(response)).toMatchObject({ status: 200, upstream: "bedrock-eu" });
    expect(fakes.eu.last().modelId).toBe("anthropic.claude-3-5-haiku-20241022-v1:0");
    expect(fakes.eu.last().headers.get("authorization")).toContain(`Credential=${EU.accessKeyId}/`);
    expect(fakes.eu.last().headers.get("authorization")).toContain(`/${EU.region}/bedrock/aws4_request`);
    expect(counts()).toEqual(only("bedrock-eu"));
  });

  test("a Claude name addressed to a Bedrock upstream is sent as that region's inference profile", async () => {
    const response = await ask("bedrock-us/claude-sonnet-4-5", "/v1/messages");
    expect(where(response)).toMatchObject({ status: 200, upstream: "bedrock-us" });
    expect(fakes.us.last().modelId).toBe("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
  });

  test("the mock is addressed as mock/<id> and answers without calling out", async () => {
    const response = await ask("mock/echo");
    expect(where(response)).toMatchObject({ status: 200, upstream: "mock" });
    expect(counts()).toEqual(only("ollama", 0));
  });

  test("a prefix that names no upstream is not an address: the whole id is routed (and here unknown)", async () => {
    const response = await ask("olama/qwen2.5-coder:7b");
    expect(response.status).toBe(404);
    expect(counts()).toEqual(only("ollama", 0));
  });
});

describe("the routing order (contract 13), first match wins", () => {
  test("MODEL_ALIASES comes first: an alias may name <upstream>/<model>, and beats an address", async () => {
    const quick = await ask("quick");
    expect(where(quick)).toMatchObject({ status: 200, upstream: "ollama" });
    expect(fakes.ollama.last().body.model).toBe("shared-model");
    // "ollama/aliased" looks like an address of ollama, but the alias is read first.
    const aliased = await ask("ollama/aliased");
    expect(where(aliased)).toMatchObject({ status: 200, upstream: "groq" });
    expect(fakes.groq.last().body.model).toBe("llama-3.1-8b-instant");
    expect(counts()).toEqual({ ...only("ollama"), groq: 1 });
  });

  test("addressing comes before MODEL_ROUTES", async () => {
    // MODEL_ROUTES sends ollama/special to groq, but ollama/ is an address.
    const response = await ask("ollama/special");
    expect(where(response)).toMatchObject({ status: 200, upstream: "ollama" });
    expect(fakes.ollama.last().body.model).toBe("special");
  });

  test("MODEL_ROUTES names any upstream of the file, and comes before the file's routes and the listings", async () => {
    // coder-x matches the file's route coder-* too.
    const coder = await ask("coder-x");
    expect(where(coder)).toMatchObject({ status: 200, upstream: "openrouter", route: null });
    expect(fakes.openrouter.last().body.model).toBe("coder-x");
    // An alias's target goes through MODEL_ROUTES as well.
    const alias = await ask("coder-alias");
    expect(where(alias)).toMatchObject({ status: 200, upstream: "openrouter" });
    // mr-* goes to a Bedrock upstream.
    const bedrock = await ask("mr-nova", "/v1/messages");
    expect(where(bedrock).upstream).toBe("bedrock-eu");
    expect(fakes.eu.last().modelId).toBe("mr-nova");
  });

  test("a file route: its glob, its targets in order, its model, and its name in x-parley-route", async () => {
    const response = await ask("coder-fast");
    expect(where(response)).toMatchObject({ status: 200, upstream: "groq", route: "coder", attempts: "1" });
    expect(fakes.groq.last().body.model).toBe("qwen2.5-coder:7b");
    expect(counts()).toEqual(only("groq"));
    // Its second target, when the first fails: the route's model again.
    fakes.groq.next({ kind: "error", status: 503, message: "overloaded" });
    const second = await ask("coder-fast");
    expect(where(second)).toMatchObject({ status: 200, upstream: "ollama", route: "coder", attempts: "2" });
    expect(fakes.ollama.last().body.model).toBe("qwen2.5-coder:7b");
    // Through an alias: the route matches the aliased id.
    const aliased = await ask("my-coder");
    expect(where(aliased)).toMatchObject({ upstream: "groq", route: "coder" });
  });

  test("a target's own model, and a route without a name is called by its place", async () => {
    fakes.openrouter.next({ kind: "error", status: 503, message: "overloaded" });
    const response = await ask("big-one");
    expect(where(response)).toMatchObject({ status: 200, upstream: "groq", route: "2", attempts: "2" });
    expect(fakes.openrouter.last().body.model).toBe("meta-llama/llama-3.3-70b-instruct");
    // The second target has no model of its own and the route none: the client's id.
    expect(fakes.groq.last().body.model).toBe("big-one");
  });

  test("the file's routes come before the upstreams that list the id", async () => {
    // ollama lists routed-listed; the route sends it to groq.
    const response = await ask("routed-listed");
    expect(where(response)).toMatchObject({ status: 200, upstream: "groq", route: "routed" });
    expect(counts()).toEqual(only("groq"));
  });

  test("an id some upstreams list goes to every one of them in declaration order", async () => {
    const first = await ask("shared-model");
    expect(where(first)).toMatchObject({ status: 200, upstream: "ollama", route: null });
    fakes.ollama.next({ kind: "error", status: 503, message: "loading model" });
    const second = await ask("shared-model");
    expect(where(second)).toMatchObject({ status: 200, upstream: "openrouter", attempts: "2" });
    expect(counts()).toEqual({ ...only("ollama", 2), openrouter: 1 });
  });

  test("a listed id comes before the Claude names and the built-in patterns", async () => {
    // gpt-4o is openrouter's (listed); gpt-* alone would go to the first openai upstream, ollama.
    expect(where(await ask("gpt-4o")).upstream).toBe("openrouter");
    // claude-local is ollama's; claude-* alone would go to Bedrock.
    expect(where(await ask("claude-local")).upstream).toBe("ollama");
    expect(counts()).toEqual({ ...only("openrouter"), ollama: 1 });
  });

  test("claude-* goes to the Bedrock upstreams in order, each sent its own region's inference profile, signed with its own account", async () => {
    const first = await ask("claude-sonnet-4-5", "/v1/messages");
    expect(where(first)).toMatchObject({ status: 200, upstream: "bedrock-us", attempts: "1" });
    expect(first.headers.get("x-parley-model")).toBe("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect(fakes.us.last().modelId).toBe("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect(fakes.us.last().headers.get("authorization")).toContain(`Credential=${US.accessKeyId}/`);

    fakes.us.next({ kind: "error", status: 503, type: "ServiceUnavailableException", message: "Bedrock is unavailable" });
    const second = await ask("claude-sonnet-4-5", "/v1/messages");
    expect(where(second)).toMatchObject({ status: 200, upstream: "bedrock-eu", attempts: "2" });
    expect(second.headers.get("x-parley-model")).toBe("eu.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect(fakes.eu.last().modelId).toBe("eu.anthropic.claude-sonnet-4-5-20250929-v1:0");
    expect((await second.json()).model).toBe("claude-sonnet-4-5");
    expect([fakes.us.refused, fakes.eu.refused]).toEqual([[], []]);
  });

  test("built-in patterns go to the configured upstreams of their kind in declaration order, less those whose model list lacks the id", async () => {
    // alpha (the spec's variables) is not configured here; ollama and openrouter list their models, and
    // not gpt-4.1-mini: only groq, which lists nothing (discovery off), may serve it.
    expect(where(await ask("gpt-4.1-mini"))).toMatchObject({ status: 200, upstream: "groq", attempts: "1" });
    expect(fakes.ollama.received).toHaveLength(0);
    expect(fakes.openrouter.received).toHaveLength(0);
    expect(fakes.groq.last().body.model).toBe("gpt-4.1-mini");

    expect(where(await ask("amazon.nova-micro-v1:0"))).toMatchObject({ status: 200, upstream: "bedrock-us" });
    fakes.us.next({ kind: "error", status: 503, type: "ServiceUnavailableException", message: "down" });
    expect(where(await ask("amazon.nova-micro-v1:0"))).toMatchObject({ status: 200, upstream: "bedrock-eu", attempts: "2" });
    expect(fakes.eu.last().modelId).toBe("amazon.nova-micro-v1:0");
  });

  test("an id nothing routes is a 404 that calls no upstream", async () => {
    const response = await ask("llama3");
    expect(response.status).toBe(404);
    expect((await response.json()).error.message).toContain("'llama3' is not routed to any upstream");
    expect(counts()).toEqual(only("ollama", 0));
  });

  test("GET /v1/models/<id> names the upstream each id routes to", async () => {
    const provider = async (id: string) => ((await (await call(`/v1/models/${encodeURIComponent(id)}`)).json()) as { provider?: string }).provider;
    expect(await provider("shared-model")).toBe("ollama");
    expect(await provider("gpt-4o")).toBe("openrouter");
  });
});

describe("each Bedrock fake checks signatures for its own account and region", () => {
  test("an upstream signing with another account, or for another region, is refused and the client told whose credentials", async () => {
    // bedrock-eu's account sent to the us endpoint; the us account signing for eu-west-1.
    const wrong = `
[upstreams.eu-at-us]
kind = "bedrock"
region = "${EU.region}"
access_key_id = "${EU.accessKeyId}"
secret_access_key = "${EU.secretAccessKey}"
endpoint_url = "${fakes.us.url}"

[upstreams.us-in-eu]
kind = "bedrock"
region = "${EU.region}"
access_key_id = "${US.accessKeyId}"
secret_access_key = "${US.secretAccessKey}"
endpoint_url = "${fakes.us.url}"
`;
    const other = fleetApp(fakes, { UPSTREAM_RETRIES: "0" }, wrong);
    const account = await other.json("/v1/messages", bodyFor("/v1/messages", "eu-at-us/anthropic.claude-3-5-haiku-20241022-v1:0"));
    expect(where(account)).toMatchObject({ status: 502, upstream: "eu-at-us" });
    expect((await account.json()).error.message).toContain("'eu-at-us' rejected parley's credentials");
    const region = await other.json("/v1/messages", bodyFor("/v1/messages", "us-in-eu/anthropic.claude-3-5-haiku-20241022-v1:0"));
    expect(region.status).toBe(502);
    expect(fakes.us.refused).toEqual(["UnrecognizedClientException", "InvalidSignatureException"]);
    expect(fakes.us.received).toHaveLength(0);
  });
});

describe("the spec's variables' upstreams, alpha and beta, beside the file's", () => {
  test("beta (BETA_*) comes first of the Bedrock upstreams: the variables' are declared before the file's", async () => {
    const { json: app } = fleetApp(fakes, { BETA_REGION: US.region, BETA_ACCESS_KEY_ID: US.accessKeyId, BETA_SECRET_ACCESS_KEY: US.secretAccessKey, BETA_ENDPOINT_URL: fakes.us.url });
    const response = await app("/v1/messages", bodyFor("/v1/messages", "claude-sonnet-4-5"));
    expect(where(response)).toMatchObject({ status: 200, upstream: "beta" });
    expect(fakes.us.last().modelId).toBe("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
  });

  test("[upstreams.alpha] in the file replaces the ALPHA_* one and keeps its place before the file's", async () => {
    const alpha = `\n[upstreams.alpha]\nkind = "openai"\nbase_url = "${fakes.groq.url}"\napi_key = "sk-alpha-from-file"\n`;
    const { json: app, call: get } = fleetApp(fakes, { ALPHA_BASE_URL: "http://127.0.0.1:9/v1", ALPHA_API_KEY: "sk-alpha-variable", MODEL_ROUTES: "ft:*=openai" }, alpha);
    // gpt-* goes to the first openai upstream: alpha, now the groq fake.
    expect(where(await app("/v1/chat/completions", bodyFor("/v1/chat/completions", "gpt-4.1-mini")))).toMatchObject({ status: 200, upstream: "alpha" });
    expect(fakes.groq.last().headers.get("authorization")).toBe("Bearer sk-alpha-from-file");
    // MODEL_ROUTES may still call it by its kind, as before there were others.
    expect(where(await app("/v1/chat/completions", bodyFor("/v1/chat/completions", "ft:gpt-4o:team")))).toMatchObject({ status: 200, upstream: "alpha" });
    expect(fakes.groq.received).toHaveLength(2);
    expect(Object.keys((await (await get("/health")).json()).services)).toEqual(["alpha", "beta", "ollama", "openrouter", "groq", "bedrock-us", "bedrock-eu", "mock"]);
  });
});
