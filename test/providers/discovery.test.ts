import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openDatabase } from "../../src/lib/db.ts";
import { createLogger } from "../../src/log.ts";
import { createDiscovery } from "../../src/routing/discovery.ts";
import { testConfig } from "../lib/app.ts";
import { startGateway } from "../lib/gateway.ts";

const gateway = await startGateway();
afterAll(() => gateway.stop());
beforeEach(() => {
  gateway.reset();
  gateway.openai.catalogue.failing = false;
  gateway.openai.catalogue.ids = ["gpt-4o", "gpt-4o-mini"];
  gateway.bedrock.control.failing = false;
});

/** A discovery of its own over the fakes, on a data directory that may be shared to test the SQLite cache. */
function discovery(env: Record<string, string> = {}, dataDir = mkdtempSync(join(tmpdir(), "parley-discovery-"))) {
  const config = testConfig({
    ALPHA_API_KEY: "sk-upstream-openai-key", ALPHA_BASE_URL: gateway.openai.url,
    BETA_REGION: "us-east-1", BETA_ACCESS_KEY_ID: "AKIAFAKEFAKEFAKE", BETA_SECRET_ACCESS_KEY: "fake-secret-access-key",
    BETA_ENDPOINT_URL: gateway.bedrock.url, BETA_CONTROL_ENDPOINT_URL: gateway.bedrock.url, MODELS_REFRESH_S: "600", PARLEY_DATA_DIR: dataDir, ...env,
  });
  const db = openDatabase(dataDir);
  const found = createDiscovery({ config, database: () => db, log: createLogger("silent"), upstreams: () => config.upstreams.upstreams });
  const list = () => found.list(() => undefined);
  return { found, list, dataDir, close: () => (found.stop(), db.close()) };
}

describe("model discovery", () => {
  test("lists what each upstream serves: OpenAI's /models, Bedrock's on-demand models and inference profiles (both pages)", async () => {
    const { found, list, close } = discovery();
    await found.refresh();
    const ids = list().map((m) => `${m.provider}:${m.id}:${m.source}`);
    expect(ids).toEqual(expect.arrayContaining([
      "alpha:gpt-4o:discovered", "alpha:gpt-4o-mini:discovered",
      "beta:anthropic.claude-3-5-haiku-20241022-v1:0:discovered", "beta:amazon.nova-micro-v1:0:discovered",
      "beta:us.anthropic.claude-sonnet-4-5-20250929-v1:0:discovered", "beta:us.meta.llama3-3-70b-instruct-v1:0:discovered",
      "mock:mock:catalogue",
    ]));
    // Only callable by a profile: not listed by its bare id.
    expect(ids.some((id) => id.startsWith("beta:anthropic.claude-sonnet-4-5"))).toBe(false);
    expect(list().find((m) => m.id === "us.meta.llama3-3-70b-instruct-v1:0")!.owned_by).toBe("meta");
    close();
  });

  test("a failed first refresh serves the built-in catalogue; a failure after a success keeps the last list", async () => {
    gateway.openai.catalogue.failing = true;
    const { found, list, close } = discovery();
    await found.refresh();
    expect(list().filter((m) => m.provider === "alpha").every((m) => m.source === "catalogue")).toBe(true);
    gateway.openai.catalogue.failing = false;
    gateway.openai.catalogue.ids = ["llama3.2"];
    await found.refresh();
    expect(list().filter((m) => m.provider === "alpha").map((m) => m.id)).toEqual(["llama3.2"]);
    gateway.openai.catalogue.failing = true;
    await found.refresh();
    expect(list().filter((m) => m.provider === "alpha").map((m) => `${m.id}:${m.source}`)).toEqual(["llama3.2:discovered"]);
    close();
  });

  test("after a restart with the upstream down, the list comes from SQLite, marked cached", async () => {
    gateway.openai.catalogue.ids = ["qwen2.5-coder"];
    const first = discovery();
    await first.found.refresh();
    first.close();
    gateway.openai.catalogue.failing = true;
    const second = discovery({}, first.dataDir);
    await second.found.refresh();
    expect(second.list().filter((m) => m.provider === "alpha").map((m) => `${m.id}:${m.source}`)).toEqual(["qwen2.5-coder:cached"]);
    expect(second.found.upstreamsOf("qwen2.5-coder")).toEqual(["alpha"]);
    second.close();
  });

  test("MODELS_REFRESH_S refreshes in the background", async () => {
    const { found, list, close } = discovery({ MODELS_REFRESH_S: "1" });
    await found.start();
    gateway.openai.catalogue.ids = ["added-later"];
    // Nothing asks for a refresh here: the new id can only come from the timer.
    const deadline = Date.now() + 10_000;
    while (!list().some((m) => m.id === "added-later") && Date.now() < deadline) await Bun.sleep(50);
    expect(list().map((m) => m.id)).toContain("added-later");
    close();
  });

  test("a Bedrock API key goes as a bearer token, to the control plane and the runtime; a wrong one is refused", async () => {
    const good = discovery({ BETA_API_KEY: "bedrock-api-key-test-0001", BETA_ACCESS_KEY_ID: "", BETA_SECRET_ACCESS_KEY: "" });
    await good.found.refresh();
    expect(good.found.upstreamsOf("amazon.nova-micro-v1:0")).toEqual(["beta"]);
    good.close();
    const bad = discovery({ BETA_API_KEY: "bedrock-api-key-wrong", BETA_ACCESS_KEY_ID: "", BETA_SECRET_ACCESS_KEY: "" });
    await bad.found.refresh();
    expect(bad.found.upstreamsOf("amazon.nova-micro-v1:0")).toEqual([]);
    bad.close();
  });
});

/** The first refresh runs in the background at start: ask until it has landed (at most 10 s). */
async function eventually(call: () => Promise<Response>): Promise<Response> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const response = await call();
    if (response.status !== 404 || Date.now() > deadline) return response;
    await Bun.sleep(50);
  }
}

describe("routing by what exists", () => {
  test("an id the OpenAI-compatible upstream lists routes there without any MODEL_ROUTES", async () => {
    gateway.openai.catalogue.ids = ["llama3.2", "qwen2.5-coder:7b"];
    const local = await startGateway({ MODELS_REFRESH_S: "600" });
    local.openai.catalogue.ids = ["llama3.2", "qwen2.5-coder:7b"];
    const response = await eventually(() => local.json("/v1/chat/completions", { model: "qwen2.5-coder:7b", messages: [{ role: "user", content: "hi" }] }));
    expect(response.status).toBe(200);
    expect(local.openai.last().body.model).toBe("qwen2.5-coder:7b");
    const listed = (await (await local.call("/v1/models")).json()).data as { id: string; provider: string }[];
    expect(listed.filter((m) => m.provider === "alpha").map((m) => m.id)).toEqual(["llama3.2", "qwen2.5-coder:7b"]);
    // The chat's default model is the first listed: the first configured provider's first model.
    expect(listed[0]!.id).toBe("llama3.2");
    const unknown = await local.json("/v1/chat/completions", { model: "qwen2.5-coder", messages: [{ role: "user", content: "hi" }] });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).error.message).toContain("Did you mean 'qwen2.5-coder:7b'");
    await local.stop();
  });

  test("MODEL_ROUTES still comes first", async () => {
    const local = await startGateway({ MODELS_REFRESH_S: "600", MODEL_ROUTES: "llama*=mock" });
    local.openai.catalogue.ids = ["llama3.2"];
    // Wait for the first refresh to land, so the upstream does list the id.
    // /v1/models names the upstream that routes the id: the mock, though alpha lists it.
    const listed = async () => ((await (await local.call("/v1/models")).json()).data as { id: string; provider: string }[]).find((m) => m.id === "llama3.2")?.provider;
    for (const deadline = Date.now() + 10_000; !(await listed()) && Date.now() < deadline; ) await Bun.sleep(50);
    expect(await listed()).toBe("mock");

    const reply = await (await local.json("/v1/chat/completions", { model: "llama3.2", messages: [{ role: "user", content: "to the mock" }] })).json();
    expect(reply.choices[0].message.content).toBe("to the mock");
    await local.stop();
  });
});

describe("inference profile and custom model ARNs", () => {
  const claudeProfile = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/claude-team";
  const novaProfile = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/nova-team";
  const custom = "arn:aws:bedrock:us-east-1:123456789012:custom-model/claude-tuned";
  const ask = (model: string) => gateway.json("/v1/chat/completions", { model, messages: [{ role: "user", content: "hi" }] });

  test("a Claude application profile gets the Claude body, another the Converse API; the lookup is cached", async () => {
    expect((await ask(claudeProfile)).status).toBe(200);
    expect(gateway.bedrock.last()).toMatchObject({ modelId: claudeProfile, action: "invoke" });
    expect(gateway.bedrock.last().body.anthropic_version).toBe("bedrock-2023-05-31");
    const calls = gateway.bedrock.control.calls;
    await ask(claudeProfile);
    expect(gateway.bedrock.control.calls).toBe(calls);
    expect((await ask(novaProfile)).status).toBe(200);
    expect(gateway.bedrock.last()).toMatchObject({ modelId: novaProfile, action: "converse" });
  });

  test("a custom model ARN takes its base model's family", async () => {
    await ask(custom);
    expect(gateway.bedrock.last()).toMatchObject({ modelId: custom, action: "invoke" });
  });
});

describe("parley models", () => {
  test("prints the live list with provider and source; --json for scripts", async () => {
    const { runCli, userDir } = await import("../lib/cli.ts");
    gateway.openai.catalogue.ids = ["llama3.2"];
    const env = { ...userDir().env, ALPHA_BASE_URL: gateway.openai.url, BETA_REGION: "us-east-1", BETA_API_KEY: "bedrock-api-key-test-0001", BETA_CONTROL_ENDPOINT_URL: gateway.bedrock.url };
    const table = await runCli(["models"], { env });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^MODEL +UPSTREAM +OWNED BY +SOURCE$/m);
    expect(table.stdout).toMatch(/^llama3\.2 +alpha +local +discovered$/m);
    const json = JSON.parse((await runCli(["models", "--json"], { env })).stdout);
    expect(json).toContainEqual({ id: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", provider: "beta", owned_by: "anthropic", source: "discovered" });
    gateway.openai.catalogue.failing = true;
    const offline = JSON.parse((await runCli(["models", "--json"], { env: { ...env, BETA_API_KEY: "bedrock-api-key-wrong" } })).stdout);
    expect(offline.find((m: { id: string }) => m.id === "llama3.2").source).toBe("cached");
    expect(offline.filter((m: { provider: string }) => m.provider === "beta").every((m: { source: string }) => m.source === "cached")).toBe(true);
  });
});
