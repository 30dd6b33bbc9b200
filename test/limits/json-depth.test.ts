import { afterAll, expect, test } from "bun:test";
import { startGateway } from "../lib/gateway.ts";

/** Contract 25: JSON that parley parses, nested deeper than 512 levels, is a 400. */
const gateway = await startGateway();
afterAll(() => gateway.stop());

const nested = (depth: number) => "[".repeat(depth) + "]".repeat(depth);
const chat = (parameters: string) =>
  `{"model":"anthropic.claude-3-haiku-20240307-v1:0","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":{"type":"array","items":${parameters}}}}}}]}`;

test("a tool schema nested a million levels deep is a 400, not a 500", async () => {
  const response = await gateway.call("/v1/chat/completions", { method: "POST", body: chat(nested(1_000_000)), headers: { "content-type": "application/json" } });
  expect(response.status).toBe(400);
  const body = await response.json();
  expect(body.error.type).toBe("invalid_request_error");
  expect(body.error.message).toContain("512");
});

test("JSON nested within the limit is served, and the limit is the same on every front door", async () => {
  const ok = await gateway.call("/v1/chat/completions", { method: "POST", body: chat(`{"type":"array","items":${"[".repeat(400)}${"]".repeat(400)}}`), headers: { "content-type": "application/json" } });
  expect(ok.status).not.toBe(400);
  const messages = await gateway.call("/v1/messages", { method: "POST", body: `{"model":"mock","max_tokens":5,"messages":[{"role":"user","content":"hi"}],"metadata":${nested(600)}}`, headers: { "content-type": "application/json" } });
  expect(messages.status).toBe(400);
});

test("a long body is measured before it is parsed, and brackets inside its strings (escaped quotes too) are text, not depth", async () => {
  // Over 256 KB: looked at before parsing. 600 brackets in a string, after an escaped quote, are not nesting.
  const text = `say \\"${"[{".repeat(300)}\\" then ${"x".repeat(300_000)}`;
  const long = `{"model":"mock","messages":[{"role":"user","content":"${text}"}]}`;
  expect(long.length).toBeGreaterThan(256 * 1024);
  const served = await gateway.call("/v1/chat/completions", { method: "POST", body: long, headers: { "content-type": "application/json" } });
  expect(served.status).toBe(200);
  const deep = `{"model":"mock","messages":[{"role":"user","content":"${"x".repeat(300_000)}"}],"metadata":${nested(513)}}`;
  const refused = await gateway.call("/v1/chat/completions", { method: "POST", body: deep, headers: { "content-type": "application/json" } });
  expect(refused.status).toBe(400);
  expect((await refused.json()).error.message).toContain("nested deeper than 512 levels");
});
