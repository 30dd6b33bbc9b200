import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../lib/fake-anthropic.ts";
import { startFakeBedrock } from "../lib/fake-bedrock.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { bodyFor, US, where, writeToml } from "./fleet.ts";

/**
 * Built-in names and Claude names go only to upstreams that may serve the id (contract 13): a
 * llama.cpp server whose discovered list holds only its own model is not asked for gpt-4o; Bedrock,
 * whose ids are not all in its lists (profiles, ARNs), keeps its fallback.
 */
const [local, anthropic, bedrock] = await Promise.all([startFakeOpenAI(), startFakeAnthropic(), startFakeBedrock(US)]);
afterAll(() => [local, anthropic, bedrock].forEach((f) => f.stop()));
beforeEach(() => {
  [local, anthropic, bedrock].forEach((f) => f.reset());
  local.catalogue.ids = ["readme-llama-1m"];
});

const toml = `
[upstreams.local]
kind = "openai"
base_url = "${local.url}"

[upstreams.anthropic]
kind = "anthropic"
api_key = "${FAKE_ANTHROPIC_KEY}"
base_url = "${anthropic.url}"
models = ["claude-opus-4-1"]

[upstreams.bedrock]
kind = "bedrock"
region = "${US.region}"
access_key_id = "${US.accessKeyId}"
secret_access_key = "${US.secretAccessKey}"
endpoint_url = "${bedrock.url}"
models = ["amazon.nova-micro-v1:0"]
`;

/** Until `until` holds for /v1/models' ids, or a generous deadline. */
async function listed(call: ReturnType<typeof testApp>["call"], until: (ids: string[]) => boolean) {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    const ids = ((await (await call("/v1/models")).json()).data as { id: string }[]).map((m) => m.id);
    if (until(ids)) return ids;
    await Bun.sleep(50);
  }
  throw new Error("discovery never listed what the test waits for");
}

describe("routing by what an upstream lists", () => {
  const { file } = writeToml(toml);
  const { json, call } = testApp({ PARLEY_UPSTREAMS: file, MODELS_REFRESH_S: "600", RATE_LIMIT_RPM: "0" });

  test("gpt-4o is not sent to a local server whose discovered list lacks it: 404 naming it, no call", async () => {
    await listed(call, (ids) => ids.includes("readme-llama-1m"));
    const response = await json("/v1/chat/completions", bodyFor("/v1/chat/completions", "gpt-4o"));
    expect(response.status).toBe(404);
    const { error } = await response.json();
    expect(error.type).toBe("not_found_error");
    expect(error.message).toContain("'local' does not list it");
    expect(local.received.length).toBe(0);
  });

  test("the model it lists goes to it", async () => {
    await listed(call, (ids) => ids.includes("readme-llama-1m"));
    const response = await json("/v1/chat/completions", bodyFor("/v1/chat/completions", "readme-llama-1m"));
    expect(where(response)).toMatchObject({ status: 200, upstream: "local" });
  });

  test("a Claude name Anthropic's list lacks goes to Bedrock, whose ids are not all listable", async () => {
    const response = await json("/v1/messages", bodyFor("/v1/messages", "claude-sonnet-4-5"));
    expect(where(response)).toMatchObject({ status: 200, upstream: "bedrock" });
    expect(anthropic.received.length).toBe(0);
    expect(bedrock.last().modelId).toBe("us.anthropic.claude-sonnet-4-5-20250929-v1:0");
  });

  test("a Bedrock id its list lacks (an inference profile) still goes to Bedrock", async () => {
    const response = await json("/v1/chat/completions", bodyFor("/v1/chat/completions", "us.meta.llama3-3-70b-instruct-v1:0"));
    expect(where(response)).toMatchObject({ status: 200, upstream: "bedrock" });
  });
});
