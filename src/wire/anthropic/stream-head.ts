import { utf8Slice } from "../../lib/bytes.ts";
import { isObject } from "../../lib/read.ts";
import { dataOf, firstEventEnd } from "../../lib/sse.ts";
import type { InputTokens } from "../../ir.ts";
import type { Upstream } from "../upstream-errors.ts";
import { streamError } from "./errors.ts";
import { renamedStart } from "./reply.ts";
import { fromAnthropic } from "./usage.ts";

/**
 * Claude's stream as an upstream sends it (the Anthropic API, Vertex), relayed as sent but for its
 * first event: message_start is read for the input's tokens (the cache included: message_delta
 * gives the output) and renamed to the model the client asked for; an `error` event in its place
 * (an overload sent after a 200) fails the call before the answer began, so another upstream may
 * answer.
 */
export function openedStream(up: Upstream, chunks: AsyncIterator<Uint8Array, unknown>, requested: string) {
  let head: Uint8Array | undefined;
  let input: InputTokens | undefined;
  let first = true;
  return {
    input: () => input,
    async next(): Promise<IteratorResult<Uint8Array, unknown>> {
      if (!first) return chunks.next();
      for (;;) {
        const read = await chunks.next();
        if (read.done) {
          first = false;
          return head ? { done: false, value: head } : read;
        }
        head = head ? Buffer.concat([head, read.value]) : read.value;
        const end = firstEventEnd(head);
        if (end < 0 && head.length < MAX_HEAD) continue;
        first = false;
        return { done: false, value: end < 0 ? head : firstEvent(up, head, end, requested, (tokens) => (input = tokens)) };
      }
    },
    return: (reason?: unknown) => chunks.return?.(reason) ?? Promise.resolve({ done: true as const, value: undefined }),
  };
}

function firstEvent(up: Upstream, head: Uint8Array, end: number, requested: string, found: (input: InputTokens) => void): Uint8Array {
  let event: unknown;
  try {
    event = JSON.parse(dataOf(utf8Slice.call(head, 0, end)));
  } catch {
    return head;
  }
  if (!isObject(event)) return head;
  if (event.type === "error") throw streamError(up, event, true);
  if (event.type !== "message_start" || !isObject(event.message)) return head;
  if (isObject(event.message.usage)) found(fromAnthropic(event.message.usage).input);
  if (event.message.model === requested) return head;
  return Buffer.concat([Buffer.from(renamedStart(event, event.message, requested)), head.subarray(end)]);
}

/** Bytes read at most for the first event: message_start is small. */
const MAX_HEAD = 64 * 1024;
