import { sseData } from "../../lib/sse.ts";
import { fetchFailed, parseUpstreamJson, streamedBody, type Upstream } from "../../wire/upstream-errors.ts";

/**
 * The JSON of each server-sent event of an upstream's stream (Gemini's chunks, Claude's events on
 * Vertex), as they come, every silence bounded by UPSTREAM_TIMEOUT_MS; a failed read is a dropped
 * connection or silence, never an unreachable upstream.
 */
export async function* sseJson(up: Upstream, response: Response, timeoutMs: number): AsyncGenerator<unknown> {
  try {
    for await (const ready of sseData(streamedBody(up, response, timeoutMs))) for (const data of ready) yield parseUpstreamJson(up, data);
  } catch (error) {
    fetchFailed(up, error, true);
  }
}
