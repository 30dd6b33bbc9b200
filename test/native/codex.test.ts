/**
 * What Codex needs of a gateway (contract 26): its reasoning items round-trip exact (OpenAI's as
 * sent; Claude's thinking and signature sealed in encrypted_content on the conversion), and its
 * compaction is answered on every route, passed through only to a server that compacts.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import OpenAI from "openai";
import { anthropicReply, thinkingEvents } from "../lib/fake-bedrock.ts";
import { readSse, startGateway, TEST_KEY } from "../lib/gateway.ts";

const file = join(mkdtempSync(join(tmpdir(), "parley-codex-")), "parley.toml");
const gateway = await startGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" });
// Another parley, whose upstream is declared to compact itself as OpenAI's own API does: on the first one's fake OpenAI.
writeFileSync(file, `[upstreams.openai-native]\nkind = "openai"\nbase_url = "${gateway.openai.url}"\ncompaction = "native"\nmodels = ["gpt-native"]\ndiscover = false\n`);
const native = await startGateway({ PARLEY_UPSTREAMS: file, UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" });
const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gateway.listen()}/v1`, maxRetries: 0 });
afterAll(async () => {
  await native.stop();
  await gateway.stop();
});
beforeEach(() => gateway.reset());

const CLAUDE = "anthropic.claude-sonnet-4-5-20250929-v1:0";
const SIGNATURE = "EqQBCkYIARgCIkD0sig==";
const post = (body: object, path = "/v1/responses") => gateway.json(path, body);
const call = { type: "function_call", call_id: "call_1", name: "shell", arguments: '{"command":["ls"]}' };
const result = { type: "function_call_output", call_id: "call_1", output: "README.md" };
const tools = [{ type: "function", name: "shell", parameters: { type: "object", properties: { command: { type: "array", items: { type: "string" } } } } }];

describe("reasoning items", () => {
  test("Claude's thinking comes back sealed in a reasoning item, and reaches Claude again exactly, signature included", async () => {
    gateway.bedrock.next({ kind: "stream", events: thinkingEvents() });
    const events = await readSse(await post({ model: CLAUDE, stream: true, store: false, include: ["reasoning.encrypted_content"], reasoning: { effort: "medium" }, input: "list files", tools }));
    const item = events.map((e) => e.data).find((d) => d.type === "response.output_item.done" && d.item.type === "reasoning")!.item;
    expect(item.encrypted_content).toStartWith("parley.v1.");
    // Sealed: neither the thinking nor its signature can be read in it.
    expect(Buffer.from(item.encrypted_content.slice(10), "base64url").toString("latin1")).not.toContain("Let me think");
    expect(item.encrypted_content).not.toContain(SIGNATURE.slice(0, 12));
    expect(events.at(-1)!.data.response.output[0].type).toBe("reasoning");

    const { id: _id, ...sentBack } = item;
    expect((await post({ model: CLAUDE, store: false, input: ["list files", sentBack, call, result].map((i) => (typeof i === "string" ? { role: "user", content: i } : i)), tools })).status).toBe(200);
    const assistant = gateway.bedrock.last().body.messages[1];
    expect(assistant.content[0]).toEqual({ type: "thinking", thinking: "Let me think about it.", signature: SIGNATURE });
    expect(assistant.content[1]).toMatchObject({ type: "tool_use", id: "call_1", name: "shell" });
  });

  test("a JSON reply's thinking is sealed too; a changed or foreign encrypted_content never reaches Claude as thinking", async () => {
    gateway.bedrock.next({ kind: "json", body: anthropicReply([{ type: "thinking", thinking: "Plan.", signature: SIGNATURE }, { type: "text", text: "Done." }]) });
    const reply = await (await post({ model: CLAUDE, input: "hi" })).json();
    const item = reply.output[0];
    expect([item.type, item.summary]).toEqual(["reasoning", [{ type: "summary_text", text: "Plan." }]]);
    const changed = `${item.encrypted_content.slice(0, -4)}AAAA`;
    for (const encrypted of [changed, "gAAAAABopenaiEncryptedReasoning=="]) {
      expect((await post({ model: CLAUDE, input: [{ role: "user", content: "hi" }, { type: "reasoning", summary: [], encrypted_content: encrypted }, { role: "assistant", content: "Done." }, { role: "user", content: "again" }] })).status).toBe(200);
      expect(JSON.stringify(gateway.bedrock.last().body)).not.toContain('"thinking"');
    }
  });

  test("to an OpenAI-compatible upstream, OpenAI's encrypted reasoning goes up byte for byte", async () => {
    const body = { model: "gpt-4.1", store: false, include: ["reasoning.encrypted_content"], input: [{ role: "user", content: "hi" }, { type: "reasoning", id: "rs_1", summary: [], encrypted_content: "gAAAAABopenai+/=Encrypted" }, { role: "user", content: "go on" }] };
    expect((await post(body)).status).toBe(200);
    expect(gateway.openai.last().raw).toBe(JSON.stringify(body));
  });
});

describe("compaction", () => {
  const history = [{ role: "user", content: "Refactor the parser." }, { role: "assistant", content: "Done: parser.ts split in two." }];

  test("a compaction_trigger on a converted route: exactly one compaction item, whose summary is expanded when it comes back", async () => {
    gateway.bedrock.next({ kind: "json", body: anthropicReply([{ type: "text", text: "SUMMARY: parser.ts was split." }]) });
    const reply = await (await post({ model: CLAUDE, store: false, input: [...history, { type: "compaction_trigger" }] })).json();
    expect(reply.output).toHaveLength(1);
    const sealed: string = reply.output[0].encrypted_content;
    expect([reply.output[0].type, sealed.startsWith("parley.v1."), sealed.includes("SUMMARY")]).toEqual(["compaction", true, false]);
    expect(JSON.stringify(gateway.bedrock.last().body.messages.at(-1))).toContain("summary");

    await post({ model: CLAUDE, store: false, input: [reply.output[0], { role: "user", content: "Now add tests." }] });
    expect(JSON.stringify(gateway.bedrock.last().body.messages)).toContain("SUMMARY: parser.ts was split.");
  });

  test("streamed, and to an OpenAI-compatible server that does not compact: the summary comes from its chat completions", async () => {
    const events = await readSse(await post({ model: "gpt-4.1", stream: true, store: false, input: [...history, { type: "compaction_trigger" }] }));
    expect(gateway.openai.last().path).toBe("/v1/chat/completions");
    const done = events.at(-1)!.data;
    expect(done.type).toBe("response.completed");
    expect(done.response.output.map((i: { type: string }) => i.type)).toEqual(["compaction"]);
    expect(events.filter((e) => e.data.type === "response.output_item.done")).toHaveLength(1);

    // The compacted conversation is parley's to read: it goes to the same server converted, never as sent.
    await post({ model: "gpt-4.1", store: false, input: [done.response.output[0], { role: "user", content: "next" }] });
    expect(gateway.openai.last().path).toBe("/v1/chat/completions");
    expect(JSON.stringify(gateway.openai.last().body.messages)).toContain("Hello from OpenAI");
  });

  test("POST /v1/responses/compact, converted, through the OpenAI SDK: the user messages, then one compaction item", async () => {
    gateway.bedrock.next({ kind: "json", body: anthropicReply([{ type: "text", text: "SUMMARY" }]) });
    const compacted = await client.responses.compact({ model: CLAUDE, input: history as OpenAI.Responses.ResponseInput });
    expect(compacted.object).toBe("response.compaction");
    expect(compacted.output.map((i) => i.type)).toEqual(["message", "compaction"]);
    expect(compacted.usage.input_tokens).toBeGreaterThan(0);
  });

  test("to a server that compacts (compaction = \"native\"), the trigger and /compact go up as sent", async () => {
    const body = { model: "gpt-native", store: false, input: [...history, { type: "compaction_trigger" }] };
    expect((await native.json("/v1/responses", body)).status).toBe(200);
    expect([gateway.openai.last().path, gateway.openai.last().raw]).toEqual(["/v1/responses", JSON.stringify(body)]);
    const compact = { model: "gpt-native", input: history };
    const reply = await native.json("/v1/responses/compact", compact);
    expect((await reply.json()).output.at(-1)).toEqual({ id: "cmp_fake", type: "compaction", encrypted_content: "gAAAAfakeOpenAICompaction" });
    expect(gateway.openai.last().raw).toBe(JSON.stringify(compact));
  });
});
