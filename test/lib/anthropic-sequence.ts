import { expect } from "bun:test";
import type { SseMessage } from "./gateway.ts";

/** The Anthropic event grammar: start, blocks opened and closed in order from 0, delta, stop. */
export function expectAnthropicSequence(events: SseMessage[]) {
  expect(events[0]!.event).toBe("message_start");
  expect(events.at(-1)!.event).toBe("message_stop");
  expect(events.at(-2)!.event).toBe("message_delta");
  let open: number | undefined;
  let next = 0;
  for (const e of events) {
    expect(e.data.type).toBe(e.event!);
    if (e.event === "content_block_start") {
      expect(open).toBeUndefined();
      expect(e.data.index).toBe(next++);
      open = e.data.index;
    } else if (e.event === "content_block_delta") {
      expect(e.data.index).toBe(open!);
    } else if (e.event === "content_block_stop") {
      expect(e.data.index).toBe(open!);
      open = undefined;
    }
  }
  expect(open).toBeUndefined();
}
