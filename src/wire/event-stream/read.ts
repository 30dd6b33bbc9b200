import { isObject } from "../../lib/read.ts";
import { utf8Slice } from "../../lib/bytes.ts";
import { awsError } from "../aws-errors.ts";
import { badShape, fetchFailed, parseUpstreamJson, type Upstream } from "../upstream-errors.ts";
import { decodeFrame, frameSplitter, type Span } from "./frames.ts";

/** One event of a Bedrock response stream: its `:event-type` and its JSON payload. */
export interface BedrockEvent {
  type: string;
  body: Record<string, unknown>;
}

/** The frames of a Bedrock event stream, decoded and checksummed; an exception frame throws. */
export async function* events(up: Upstream, chunks: AsyncIterable<Uint8Array>): AsyncGenerator<BedrockEvent> {
  const decode = eventDecoder(up);
  try {
    for await (const chunk of chunks) {
      for (const frame of decode.frames(chunk)) {
        const { type, payload } = decode.event(frame);
        yield { type, body: parsePayload(up, payload) };
      }
    }
    decode.end();
  } catch (error) {
    fetchFailed(up, error, true);
  }
}

/** An event's JSON payload, which must be an object. */
export function parsePayload(up: Upstream, payload: Span): Record<string, unknown> {
  const text = utf8Slice.call(payload.bytes, payload.start, payload.end);
  const body = parseUpstreamJson(up, text);
  if (!isObject(body)) throw badShape(up, "an event whose payload is not an object", text);
  return body;
}

/**
 * Bedrock's event stream read as its chunks come: `frames` gives the frames a chunk completed,
 * `event` each one's type and payload as bytes (a caller that hands the payload on need not parse
 * it). An exception or error frame throws the error it names.
 */
export function eventDecoder(up: Upstream) {
  const split = frameSplitter(up);
  return {
    frames: split.push,
    event(frame: Span): { type: string; payload: Span } {
      const { headers, payload: body } = decodeCheckedFrame(up, frame);
      const kind = headers[":message-type"];
      if (kind === "event") return { type: String(headers[":event-type"]), payload: body };
      const payload = parsePayload(up, body);
      if (kind === "exception") throw awsError(up, String(headers[":exception-type"]), undefined, String(payload.message ?? "The model stream failed."));
      throw awsError(up, String(headers[":error-code"]), undefined, headers[":error-message"] ?? "The model stream failed.");
    },
    end: split.end,
  };
}

function decodeCheckedFrame(up: Upstream, frame: Span) {
  try {
    return decodeFrame(frame);
  } catch (error) {
    throw badShape(up, `a broken event-stream frame (${error instanceof Error ? error.message : String(error)})`);
  }
}
