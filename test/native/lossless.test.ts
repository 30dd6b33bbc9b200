import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { startClaudeGateway } from "../lib/claude-gateway.ts";
import { messageEvents } from "../lib/fake-anthropic.ts";
import { TEST_KEY } from "../lib/gateway.ts";
import { recordsOf } from "../usage/lib.ts";

/** Bodies as SDKs other than Anthropic's TypeScript one write them: `model` last, pretty-printed, escapes, numbers JSON.parse would round. */
const gw = await startClaudeGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0", UPSTREAM_COOLDOWN_S: "0" }, `
[[routes]]
match = "claude-x"
model = "claude-sonnet-4-5-20250929"
to = ["anthropic"]

[[routes]]
match = "claude-b"
model = "claude-sonnet-4-5-20250929"
to = ["bedrock-us"]
`);
const base = gw.listen();
afterAll(() => gw.stop());
beforeEach(() => gw.reset());
const post = (body: string) => fetch(`${base}/v1/messages`, { method: "POST", body, headers: { authorization: `Bearer ${TEST_KEY}`, "anthropic-version": "2023-06-01", "content-type": "application/json" } });

const TOOL_TURN = `[{"role":"user","content":"go"},{"role":"assistant","content":[{"type":"tool_use","id":"t2","name":"f","input":{"order_id":12345678901234567890,"price":1.10,"city":"Z\\u00fcrich"}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"t2","content":"ok"}]}]`;

describe("a request passed through keeps every byte but the model (contract 9 and 14)", () => {
  test("to the Anthropic API: model last (Python's order), or pretty-printed", async () => {
    for (const raw of [
      `{"max_tokens":100,"messages":${TOOL_TURN},"model":"claude-x"}`,
      `{\n  "max_tokens": 100,\n  "messages": ${TOOL_TURN},\n  "model": "claude-x",\n  "temperature": 1.0\n}`,
    ]) {
      gw.reset();
      expect((await post(raw)).status).toBe(200);
      expect(gw.anthropic.received[0]!.raw).toBe(raw.replace('"claude-x"', '"claude-sonnet-4-5-20250929"'));
    }
  });

  test("to Bedrock Claude: only model and stream leave and Bedrock's members come first, wherever the client put them", async () => {
    const raw = `{"max_tokens":100,"messages":${TOOL_TURN},"model":"claude-b","stream":false,"temperature":1.0}`;
    expect((await post(raw)).status).toBe(200);
    const sent = gw.bedrock.received[0]!.text;
    expect(sent).toStartWith('{"anthropic_version":"bedrock-2023-05-31"');
    expect(sent).toContain(`"max_tokens":100,"messages":${TOOL_TURN},"temperature":1.0}`);
    expect(sent).not.toContain('"model"');
    expect(sent).not.toContain('"stream"');
  });
});

describe("streams passed through from the Anthropic API", () => {
  test("usage with nested objects in message_delta is recorded whole (server_tool_use, cache_creation)", async () => {
    const events = messageEvents("claude-sonnet-4-5-20250929");
    const delta = events.find((e) => e.type === "message_delta")!;
    delta.usage = { input_tokens: 21, cache_creation_input_tokens: 100, cache_read_input_tokens: 2048, server_tool_use: { web_search_requests: 1 }, output_tokens: 503 };
    gw.anthropic.next({ kind: "stream", events });
    await (await post(JSON.stringify({ model: "claude-x", max_tokens: 10, stream: true, messages: [{ role: "user", content: "hi" }] }))).text();
    const records = await recordsOf(gw.config, () => gw.call("/v1/usage"));
    expect(records.at(-1)).toMatchObject({ output_tokens: 503 });
  });
});

describe("Bedrock's paths with ids that are no UTF-8", () => {
  test("are Bedrock's errors (404/400 with x-amzn-ErrorType), never a 405 or a 500", async () => {
    for (const [method, path] of [["GET", "/foundation-models/%E0"], ["GET", "/inference-profiles/%ED%A0%80"], ["POST", "/model/%ED%A0%80/converse"]] as const) {
      const response = await fetch(`${base}${path}`, { method, headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, ...(method === "POST" ? { body: '{"messages":[{"role":"user","content":[{"text":"hi"}]}]}' } : {}) });
      expect({ path, status: response.status, type: response.headers.get("x-amzn-errortype") }).toMatchObject({ path, status: 404, type: expect.stringContaining("ResourceNotFoundException") });
    }
  });
});
