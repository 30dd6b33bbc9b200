/**
 * `/v1/chat/completions?target_format=beta_messages` (Anthropic Messages as Bedrock serves them),
 * converted from an OpenAI upstream: every body and event checked against the Anthropic SDK's types
 * vendored in test/schemas, where a tool_use block requires `caller` (contract 26).
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { readSse, startGateway } from "../lib/gateway.ts";
import { anthropicRef, eventRef, problems } from "./vendor.ts";

const gateway = await startGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const CALL = { id: "call_1", name: "get_weather" };
const tools = [{ type: "function", function: { name: CALL.name, description: "Weather", parameters: { type: "object", properties: { city: { type: "string" } } } } }];
const ask = (stream: boolean) =>
  gateway.json("/v1/chat/completions?target_format=beta_messages", { model: "gpt-4o-mini", stream, max_tokens: 50, tools, messages: [{ role: "user", content: "Weather in Paris?" }] });

describe("beta_messages: a converted tool call in the Anthropic SDK's shape", () => {
  test("JSON: the tool_use block says who called it", async () => {
    gateway.openai.next({ kind: "reply", toolCalls: [{ id: CALL.id, name: CALL.name, arguments: '{"city":"Paris"}' }] });
    const response = await ask(false);
    expect(response.status).toBe(200);
    const reply = await response.json();
    expect(problems(anthropicRef("Message"), reply)).toEqual([]);
    expect(reply.content.find((b: any) => b.type === "tool_use").caller).toEqual({ type: "direct" });
  });

  test("stream: the tool_use block's start says who called it", async () => {
    gateway.openai.next({ kind: "stream", chunks: [], toolCalls: [{ id: CALL.id, name: CALL.name, arguments: ['{"city":', '"Paris"}'] }] });
    const response = await ask(true);
    expect(response.status).toBe(200);
    const found: string[] = [];
    for (const { event, data } of await readSse(response)) {
      if (data?.type === "ping") continue;
      const ref = eventRef("anthropic", data?.type);
      found.push(...(ref ? problems(ref, data) : [`no event has type ${data?.type}`]).map((p) => `${event}: ${p}`));
    }
    expect(found).toEqual([]);
  });
});
