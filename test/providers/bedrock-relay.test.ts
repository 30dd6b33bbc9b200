import { describe, expect, test } from "bun:test";
import { EventStreamCodec } from "@smithy/core/event-streams";
import { GatewayError } from "../../src/errors.ts";
import { decodeBase64, relay } from "../../src/providers/bedrock/relay.ts";

const encoder = new TextEncoder();
const codec = new EventStreamCodec((bytes) => new TextDecoder().decode(bytes), (text) => encoder.encode(text));
const up = { label: "Bedrock", status: 200 } as never;

/** A chunk frame as Bedrock writes it: the event's JSON, base64, in `{"bytes": …}` (or a payload given whole). */
const frame = (event: object | string, payload?: string) => codec.encode({
  headers: { ":event-type": { type: "string", value: "chunk" }, ":content-type": { type: "string", value: "application/json" }, ":message-type": { type: "string", value: "event" } },
  body: encoder.encode(payload ?? JSON.stringify({ bytes: Buffer.from(typeof event === "string" ? event : JSON.stringify(event)).toString("base64"), p: "abcd" })),
});

/** What the relay writes for these frames, sent in `pieces` chunks; the error it ends with, if any. */
async function relayed(frames: Uint8Array[], requested = "claude-x", pieces = 1) {
  const all = Buffer.concat(frames);
  const size = Math.ceil(all.length / pieces);
  let i = 0;
  const body = new ReadableStream<Uint8Array>({ pull: (c) => (i < all.length ? c.enqueue(all.subarray(i, (i += size))) : c.close()) });
  const events = relay(up, body[Symbol.asyncIterator](), requested);
  let text = "";
  try {
    for (let next = await events.next(); !next.done; next = await events.next()) text += new TextDecoder().decode(next.value as Uint8Array);
    return { text };
  } catch (error) {
    return { text, error: error instanceof GatewayError ? error.message : String(error) };
  }
}

const sse = (event: { type: string; [field: string]: unknown }) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;

describe("Bedrock's event stream relayed as Anthropic's events", () => {
  const start = { type: "message_start", message: { id: "m", type: "message", role: "assistant", model: "claude-on-bedrock", content: [], usage: { input_tokens: 3, output_tokens: 1 } } };
  const deltas = ["naïve ", "日本語 ", "😀", "a/b+c"].map((text) => ({ type: "content_block_delta", index: 0, delta: { type: "text_delta", text } }));
  const stop = { type: "message_stop" };

  test("each event as it came, message_start naming the model asked for, in one piece or in many", async () => {
    const expected = sse({ ...start, message: { ...start.message, model: "claude-x" } }) + deltas.map(sse).join("") + sse(stop);
    for (const pieces of [1, 3, 50]) expect(await relayed([start, ...deltas, stop].map((e) => frame(e)), "claude-x", pieces)).toEqual({ text: expected });
  });

  test("a model name longer than Bedrock's, and events the fast way does not take (a long name, escaped base64), are relayed too", async () => {
    const long = `claude-${"x".repeat(3000)}`;
    const named = { type: `content_block_delta_${"z".repeat(40)}`, index: 0 };
    // JSON may escape a slash, and atob skips spaces: neither is plain base64.
    const base64 = Buffer.from(JSON.stringify(deltas[3])).toString("base64").replaceAll("/", "\\/").replace(/(.{8})/, "$1 ");
    const frames = [frame(start), frame(named), frame({}, `{"bytes":"${base64}"}`), frame(stop)];
    const { text } = await relayed(frames, long);
    expect(text).toBe(sse({ ...start, message: { ...start.message, model: long } }) + sse(named) + sse(deltas[3]!) + sse(stop));
  });

  test.each([
    ["not JSON", frame("{\"type\":\"content_block_delta\",\"index\":0"), "a stream event that is not JSON"],
    ["a type that is no event name", frame({ type: "Content Block" }), "a stream event without a type"],
    ["bytes that are not base64", frame({}, '{"bytes":"eyJ0eXBlIjoi=ZXZlbnQifQ=="}'), "a chunk whose bytes are not base64"],
    ["no bytes", frame({}, '{"p":"abc"}'), "a chunk without bytes"],
  ])("an event that is %s: the events before it go out, then the error", async (_, bad, message) => {
    const { text, error } = await relayed([frame(start), frame(deltas[0]!), bad, frame(stop)]);
    expect(text).toBe(sse({ ...start, message: { ...start.message, model: "claude-x" } }) + sse(deltas[0]!));
    expect(error).toContain(message);
  });
});

describe("base64 read from bytes", () => {
  const decode = (text: string) => {
    const out = new Uint8Array(text.length);
    const end = decodeBase64(encoder.encode(text), 0, text.length, out, 0);
    return end < 0 ? undefined : Buffer.from(out.subarray(0, end)).toString("hex");
  };

  test("every length, padded or not, as atob reads it", () => {
    for (let length = 0; length < 70; length++) {
      const bytes = Buffer.from(Array.from({ length }, (_, i) => (i * 73 + length * 31) & 255));
      const padded = bytes.toString("base64");
      expect({ length, padded: decode(padded) }).toEqual({ length, padded: bytes.toString("hex") });
      expect({ length, unpadded: decode(padded.replace(/=+$/, "")) }).toEqual({ length, unpadded: bytes.toString("hex") });
    }
  });

  test.each(["Zm9v YmFy", "Zm9v\\/mFy", "Zm9vY", "Zm9vYm=y", "Zm=vYmFy", "Zm9vY===", "Zm9v====", "Zg=", "Zm9vYmFy=", "Zm9vYmFy\n", "Zm9v-_Fy"])("%p is left to the slow way", (text) => {
    expect(decode(text)).toBeUndefined();
  });
});
