import type { ChatRequest } from "../ir.ts";
import { optionalBoolean, optionalString, type Json } from "../lib/read.ts";
import type { Dialect } from "../providers/provider.ts";
import type { Facts } from "../routing/when.ts";
import type { Codec } from "../wire/codec.ts";

/**
 * Dialects read lazily: their decoders read `model`, `stream` and `file_ids` at the body's top
 * level, and a body going up as sent is checked by the upstream, whose 4xx the client gets as it
 * was written (contract 9, 14). Not `/v1/chat/completions`' OpenAI Chat: contract 2 has every bad
 * body refused before any upstream is called (test/chat/errors.test.ts), so it is decoded at once.
 */
const LAZY = new Set<Dialect | undefined>(["anthropic-messages", "openai-responses", "openai-completions"]);

/**
 * A client's request as the core and the routes' `when` read it (it is the routing's `Facts`).
 * A passthrough needs only the model and `stream`: in the dialects that write them at the body's
 * top level they are read there, and the whole request is decoded into the IR only when something
 * asks for it (a converted route, a `when` on tools, images, thinking or tokens), then once. Any
 * other body (file_ids, a dialect that names its model elsewhere, one decoded for its checks) is
 * decoded at once.
 */
export class ClientRequest implements Facts {
  readonly model: string | undefined;
  readonly stream: boolean;
  #decoded: ChatRequest | undefined;
  // What `when` reads beside the request, and keeps once read (see Facts).
  endpoint: string | undefined;
  key: string | undefined;
  headers: Headers | undefined;
  tokens: number | undefined = undefined;
  images: boolean | undefined = undefined;
  seen: (string | null)[] | undefined = undefined;
  flags: number | undefined = undefined;
  session: string | null | undefined = undefined;

  constructor(
    private readonly codec: Codec,
    private readonly body: Json,
    caller: { endpoint: string; key: string; headers: Headers } | undefined,
  ) {
    this.endpoint = caller?.endpoint;
    this.key = caller?.key;
    this.headers = caller?.headers;
    if (codec.named) {
      this.model = codec.named.model;
      this.stream = codec.named.stream;
    } else if (LAZY.has(codec.dialect) && body.file_ids === undefined) {
      this.model = optionalString(body, "model");
      this.stream = optionalBoolean(body, "stream") ?? false;
    } else {
      const decoded = this.request;
      this.model = decoded.model;
      this.stream = decoded.stream;
    }
  }

  /** The request in the IR, decoded on first use; a body it cannot be throws its 400/422 then. */
  get request(): ChatRequest {
    return (this.#decoded ??= this.codec.decodeRequest(this.body));
  }

  /**
   * The request for a stream encoder that writes a passthrough's error event (which reads nothing of
   * it): decoded if it can be, else a blank one, so that a body the upstream took never fails here.
   */
  forEncoder(): ChatRequest {
    try {
      return this.request;
    } catch {
      return { system: [], messages: [], stream: this.stream, includeUsage: false, fileIds: [] };
    }
  }

  /** `max_tokens` and `temperature` as asked: from the IR when decoded already, else the body's top level (where the lazy dialects write them). */
  settings(): { maxTokens: unknown; temperature: unknown } {
    const decoded = this.#decoded;
    if (decoded) return { maxTokens: decoded.maxTokens, temperature: decoded.temperature };
    const body = this.body;
    return { maxTokens: body.max_tokens ?? body.max_output_tokens ?? body.max_completion_tokens, temperature: body.temperature };
  }

  /** The Responses (and Chat) `prompt_cache_key`, at the body's top level: a session's name when no header gives one. */
  promptCacheKey(): string | undefined {
    const key = this.body.prompt_cache_key;
    return typeof key === "string" && key ? key : undefined;
  }

  /** Whether it names files to attach (only a body decoded at once can: without `file_ids` it names none). */
  get namesFiles(): boolean {
    return this.#decoded !== undefined && this.#decoded.fileIds.length > 0;
  }
}
