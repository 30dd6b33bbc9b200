import { describe, expect, test } from "bun:test";
import { GatewayError } from "../../src/errors.ts";
import { anthropic } from "../../src/wire/anthropic/codec.ts";
import type { Codec } from "../../src/wire/codec.ts";
import { openaiChat } from "../../src/wire/openai-chat/codec.ts";
import { responses } from "../../src/wire/responses/codec.ts";
import { guardStream, openChunks } from "../../src/lib/sse.ts";

/** The stream guard on its own: a body cut into the given pieces, what the client reads, and the usage it reported. */
async function guarded(codec: Codec, pieces: Uint8Array[], iterator = false) {
  let i = 0;
  const body = iterator
    ? { next: async () => (i < pieces.length ? { done: false as const, value: pieces[i++]! } : { done: true as const, value: undefined }) }
    : new ReadableStream<Uint8Array>({ pull: (c) => (i < pieces.length ? c.enqueue(pieces[i++]!) : c.close()) }, { highWaterMark: 0 });
  const ending = { last: codec.lastEvent, names: codec.endEvents, error: (e: GatewayError) => codec.streamEncoder("m", {} as never).error(e) };
  let usage: unknown = "not reported";
  let broke: string | undefined;
  const chunks = openChunks(body);
  const out = guardStream(chunks, await chunks.next(), ending, (e) => e as Error, () => new GatewayError(503, "service_unavailable_error", "cut short"), (e) => (broke = e.message), (tail) => (usage = tail === undefined ? "left" : codec.usageIn?.(tail)));
  return { text: await new Response(out).text(), usage, broke };
}

const bytes = (text: string) => new TextEncoder().encode(text);
const cut = (text: string, at: number[]) => {
  const all = bytes(text);
  const bounds = [0, ...at, all.length];
  return bounds.slice(1).map((end, k) => all.slice(bounds[k], end));
};

const delta = (text: string) => `data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":${JSON.stringify(text)}},"finish_reason":null}]}\n\n`;
const openaiStream = (n: number) =>
  [
    ...Array.from({ length: n }, (_, k) => delta(`tok${k} é `)),
    'data: {"id":"c1","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n',
    'data: {"id":"c1","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":12,"completion_tokens":34,"total_tokens":46}}\n\n',
    "data: [DONE]\n\n",
  ].join("");
const counted = { input: { total: 12, cacheRead: 0, cacheWrite: 0 }, output: 34 };

describe("the stream guard reads only the end of a stream", () => {
  test("cut anywhere, a complete stream passes untouched and its usage is read", async () => {
    const text = openaiStream(3);
    for (let at = 1; at < text.length; at++) {
      const { text: out, usage, broke } = await guarded(openaiChat, cut(text, [at]));
      expect({ at, out, usage, broke }).toEqual({ at, out: text, usage: counted, broke: undefined });
    }
  });

  test("a usage event split over several chunks at the tail", async () => {
    const text = openaiStream(20);
    const usageAt = text.lastIndexOf("data: {", text.lastIndexOf('"usage"'));
    const done = text.lastIndexOf("data: [DONE]");
    const pieces = cut(text, [usageAt - 1, usageAt + 5, usageAt + 40, usageAt + 90, done - 1, done + 3]);
    expect(await guarded(openaiChat, pieces)).toEqual({ text, usage: counted, broke: undefined });
  });

  test("a very large last chunk: the whole stream in one", async () => {
    const text = openaiStream(5000);
    expect(text.length).toBeGreaterThan(500_000);
    expect(await guarded(openaiChat, [bytes(text)])).toEqual({ text, usage: counted, broke: undefined });
    expect(await guarded(openaiChat, cut(text, [1000, text.length - 10]))).toEqual({ text, usage: counted, broke: undefined });
  });

  test("cut short before [DONE]: the error event follows, no usage", async () => {
    const text = openaiStream(30);
    const short = text.slice(0, text.lastIndexOf("data: [DONE]"));
    const { text: out, usage, broke } = await guarded(openaiChat, cut(short, [100, short.length - 50]));
    expect(out).toStartWith(short);
    expect(out.slice(short.length)).toStartWith('data: {"error":');
    expect(broke).toBe("cut short");
    expect(usage).toBe("not reported");
  });

  test("Anthropic: Bedrock's invocation metrics on message_stop, the stream read from a provider's own reader", async () => {
    const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
    const text = [
      event("message_start", { message: { id: "m", usage: { input_tokens: 7, output_tokens: 1 } } }),
      ...Array.from({ length: 40 }, (_, k) => event("content_block_delta", { index: 0, delta: { type: "text_delta", text: `t${k}` } })),
      event("message_delta", { delta: { stop_reason: "end_turn" }, usage: { output_tokens: 40 } }),
      event("message_stop", { "amazon-bedrock-invocationMetrics": { inputTokenCount: 7, outputTokenCount: 40 } }),
    ].join("");
    const at = Array.from({ length: 30 }, (_, k) => Math.floor(((k + 1) * text.length) / 31));
    expect(await guarded(anthropic, cut(text, at), true)).toEqual({ text, usage: { input: { total: 7, cacheRead: 0, cacheWrite: 0 }, output: 40 }, broke: undefined });
    const short = text.slice(0, text.lastIndexOf("event: message_stop"));
    expect((await guarded(anthropic, cut(short, at.filter((n) => n < short.length)), true)).broke).toBe("cut short");
  });

  test("Responses: a large response.completed over many chunks, its usage read from the whole event", async () => {
    const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
    const reply = "ü".repeat(40_000);
    const text = [
      event("response.created", { response: { id: "r", output: [] } }),
      event("response.output_text.delta", { delta: "event: response.completed" }),
      event("response.completed", { response: { id: "r", output: [{ type: "message", content: [{ type: "output_text", text: reply }] }], usage: { input_tokens: 5, output_tokens: 9 } } }),
    ].join("");
    const start = text.lastIndexOf("event: response.completed");
    const at = [start - 1, start + 3, ...Array.from({ length: 20 }, (_, k) => start + 100 + k * 4001)];
    expect(await guarded(responses, cut(text, at))).toEqual({ text, usage: { input: { total: 5, cacheRead: 0, cacheWrite: 0 }, output: 9 }, broke: undefined });
  });

  const responsesStream = () => {
    const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
    return [
      event("response.created", { response: { id: "r", output: [] } }),
      ...Array.from({ length: 3 }, (_, k) => event("response.output_text.delta", { delta: `tok${k} é` })),
      event("response.completed", { response: { id: "r", output: [], usage: { input_tokens: 5, output_tokens: 9 } } }),
    ].join("");
  };

  test("Responses: cut anywhere, or in pieces of a few bytes, the stream passes untouched and its usage is read", async () => {
    const text = responsesStream();
    const usage = { input: { total: 5, cacheRead: 0, cacheWrite: 0 }, output: 9 };
    for (let at = 1; at < text.length; at++) {
      const { text: out, usage: read, broke } = await guarded(responses, cut(text, [at]));
      expect({ at, out, read, broke }).toEqual({ at, out: text, read: usage, broke: undefined });
    }
    for (const size of [1, 2, 3, 5, 7]) {
      const at = Array.from({ length: Math.ceil(text.length / size) - 1 }, (_, k) => (k + 1) * size);
      expect({ size, ...(await guarded(responses, cut(text, at))) }).toEqual({ size, text, usage, broke: undefined });
    }
  });

  test("Responses: cut short anywhere in its last event, the error event follows", async () => {
    const text = responsesStream();
    const start = text.lastIndexOf("event: response.completed");
    for (const end of [start, start + 3, start + 20, start + 26, text.length - 30, text.length - 1]) {
      const short = text.slice(0, end);
      const { text: out, broke } = await guarded(responses, cut(short, [Math.floor(end / 2), end - 2].filter((n) => n > 0 && n < end)));
      expect({ end, broke, tail: out.slice(short.length).includes("event: error") }).toEqual({ end, broke: "cut short", tail: true });
    }
  });

  test("Responses: a last event over the kept limit still ends the stream by its name", async () => {
    const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`;
    const text = [
      event("response.created", { response: { id: "r", output: [] } }),
      event("response.completed", { response: { id: "r", output: [{ type: "message", content: [{ type: "output_text", text: "x".repeat(5_000_000) }] }], usage: { input_tokens: 5, output_tokens: 9 } } }),
    ].join("");
    const start = text.lastIndexOf("event: response.completed");
    const at = [start + 2, ...Array.from({ length: 50 }, (_, k) => start + 10 + k * 100_003)];
    // Complete, though the front of its data (and so its usage) is beyond what is kept.
    expect(await guarded(responses, cut(text, at))).toMatchObject({ text, broke: undefined });
  });
});
