/**
 * A prompt cache as Anthropic's API and Bedrock keep one: per upstream (one account, one region),
 * opt-in on the fakes (`fake.cache.reply = promptCache(clock).reply`). A request's prefix is its
 * blocks in the order the model reads them (tools, system, messages' content blocks); a
 * `cache_control` block is a breakpoint. A prefix seen on this upstream within five minutes (its
 * lifetime starts again on every read) is read from the cache, the rest up to the last breakpoint
 * is written (billed at 1.25x), and the usage says so. Prefixes under the minimum are not cached.
 */

type Json = Record<string, any>;

export const CACHE_LIFETIME_MS = 5 * 60 * 1000;
/** The shortest prefix Claude Sonnet caches. */
const MIN_CACHED = 1024;

/** Tokens of a block: about four characters each, as a tokenizer would say within a few percent. */
const tokensOf = (block: unknown) => Math.ceil(JSON.stringify(block).length / 4);

export interface CacheUsage {
  input_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

/** The blocks of an Anthropic Messages body, in the order the cache reads them. */
function blocksOf(body: Json): Json[] {
  const blocks: Json[] = [...(body.tools ?? [])];
  if (typeof body.system === "string") blocks.push({ type: "text", text: body.system });
  else if (Array.isArray(body.system)) blocks.push(...body.system);
  for (const message of body.messages ?? []) {
    if (typeof message.content === "string") blocks.push({ role: message.role, type: "text", text: message.content });
    else for (const block of message.content ?? []) blocks.push({ role: message.role, ...block });
  }
  return blocks;
}

/** One upstream's cache. `now` is the test's clock, so that a pause of ten minutes takes none. */
export function promptCache(now: () => number) {
  const entries = new Map<string, number>();
  const totals = { requests: 0, read: 0, written: 0, input: 0 };

  function usage(body: Json): CacheUsage {
    totals.requests++;
    const blocks = blocksOf(body);
    let hash = "";
    let sum = 0;
    const at = now();
    const boundaries: { hash: string; tokens: number; breakpoint: boolean }[] = [];
    for (const block of blocks) {
      const { cache_control, ...plain } = block;
      sum += tokensOf(plain);
      hash = Bun.hash.wyhash(`${hash}\u0000${JSON.stringify(plain)}`).toString(36);
      boundaries.push({ hash, tokens: sum, breakpoint: cache_control !== undefined });
    }
    const last = boundaries.findLastIndex((b) => b.breakpoint);
    let read = 0;
    for (let i = 0; i <= last; i++) {
      const seen = entries.get(boundaries[i]!.hash);
      if (seen !== undefined && at - seen < CACHE_LIFETIME_MS) {
        read = boundaries[i]!.tokens;
        entries.set(boundaries[i]!.hash, at);
      }
    }
    let written = 0;
    for (let i = 0; i <= last; i++) {
      const b = boundaries[i]!;
      if (!b.breakpoint || b.tokens < MIN_CACHED) continue;
      entries.set(b.hash, at);
      written = Math.max(written, b.tokens - read);
    }
    const input = sum - read - written;
    totals.read += read;
    totals.written += written;
    totals.input += input;
    return { input_tokens: input, cache_read_input_tokens: read, cache_creation_input_tokens: written };
  }

  return {
    usage,
    totals,
    /** The upstream's reply to a Messages body (JSON, or Anthropic's events), its usage from the cache. */
    message(body: Json, text = "Done.") {
      const cached = usage(body);
      const message = { id: `msg_cache_${totals.requests}`, type: "message", role: "assistant", model: body.model ?? "claude", content: [{ type: "text", text }], stop_reason: "end_turn", stop_sequence: null, usage: { ...cached, output_tokens: 5 } };
      if (!body.stream) return { kind: "json" as const, body: message };
      const events: Json[] = [
        { type: "message_start", message: { ...message, content: [], stop_reason: null, usage: { ...cached, output_tokens: 1 } } },
        { type: "content_block_start", index: 0, content_block: { type: "text", text: "" } },
        { type: "content_block_delta", index: 0, delta: { type: "text_delta", text } },
        { type: "content_block_stop", index: 0 },
        { type: "message_delta", delta: { stop_reason: "end_turn", stop_sequence: null }, usage: { output_tokens: 5 } },
        { type: "message_stop" },
      ];
      return { kind: "stream" as const, events };
    },
    reset() {
      entries.clear();
      Object.assign(totals, { requests: 0, read: 0, written: 0, input: 0 });
    },
  };
}

export type PromptCache = ReturnType<typeof promptCache>;
