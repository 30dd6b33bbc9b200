import { EventStreamCodec } from "@smithy/core/event-streams";
import { expect, test } from "bun:test";
import { writeEvents } from "../../src/wire/event-stream/write.ts";

/** parley's frames, read with smithy's codec (the one the AWS SDKs read Bedrock's streams with): CRCs, lengths and headers checked. */
const codec = new EventStreamCodec((bytes) => new TextDecoder().decode(bytes), (text) => new TextEncoder().encode(text));

function split(bytes: Uint8Array) {
  const out = [];
  for (let at = 0; at < bytes.length;) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + at).getUint32(0);
    out.push(codec.decode(bytes.subarray(at, at + length)));
    at += length;
  }
  return out;
}

test("events become event frames named by their type; several are written back to back", () => {
  const frames = split(writeEvents([{ event: "messageStart", data: { role: "assistant" } }, { event: "contentBlockDelta", data: { contentBlockIndex: 0, delta: { text: "héllo" } } }]));
  expect(frames.map((f) => [f.headers[":message-type"]?.value, f.headers[":event-type"]?.value, f.headers[":content-type"]?.value])).toEqual([
    ["event", "messageStart", "application/json"],
    ["event", "contentBlockDelta", "application/json"],
  ]);
  expect(JSON.parse(new TextDecoder().decode(frames[1]!.body))).toEqual({ contentBlockIndex: 0, delta: { text: "héllo" } });
});

test("an exception event becomes an exception frame with its type and message", () => {
  const [frame] = split(writeEvents([{ event: "exception", data: { type: "throttlingException", message: "Slow down." } }]));
  expect(frame!.headers[":message-type"]?.value).toBe("exception");
  expect(frame!.headers[":exception-type"]?.value).toBe("throttlingException");
  expect(JSON.parse(new TextDecoder().decode(frame!.body))).toEqual({ message: "Slow down." });
});
