import { createParser } from "eventsource-parser";
import { fetchFailed, parseUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";

/**
 * The JSON of each server-sent event of an upstream's stream (Gemini's chunks, Claude's events on
 * Vertex), as they come, every silence bounded by UPSTREAM_TIMEOUT_MS; a failed read is a dropped
 * connection or silence, never an unreachable upstream.
 */
export async function* sseJson(up: Upstream, response: Response, timeoutMs: number): AsyncGenerator<unknown> {
  let events: string[] = [];
  const parser = createParser({ onEvent: ({ data }) => void events.push(data) });
  const text = new TextDecoder();
  try {
    for await (const bytes of streamedBody(up, response, timeoutMs)) {
      parser.feed(text.decode(bytes, { stream: true }));
      const ready = events;
      events = [];
      for (const data of ready) yield parseUpstreamJson(up, data);
    }
  } catch (error) {
    fetchFailed(up, error, true);
  }
}
