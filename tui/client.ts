import { basename } from "node:path";
import { createParser } from "eventsource-parser";

/** What the chat client sends with each request; changed with /settings. */
export interface Settings {
  temperature?: number;
  maxTokens?: number;
  system: string;
  stream: boolean;
}

export interface Message {
  role: "system" | "user" | "assistant";
  content: string;
}

export type ChatPiece =
  | { type: "text"; text: string }
  | { type: "tool"; index: number; name?: string; arguments: string }
  | { type: "finish"; reason: string }
  /** `cached`: of the input, the tokens the upstream read from its prompt cache. */
  | { type: "usage"; input: number; output: number; cached: number }
  /** The server retries: the call it makes next, of how many at most, after waiting how long, and why. */
  | { type: "retry"; attempt: number; of: number; waitMs: number; status: number; retryAfter?: number };

export interface ServerFile {
  id: string;
  filename: string;
  bytes: number;
  status?: string;
  created_at?: number;
}

export interface ListedModel {
  id: string;
  /** The upstream that serves it. */
  provider?: string;
}

/** An error parley answered with, in its envelope; status 0 when it came inside a stream. */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    /** Seconds from a 429's Retry-After header. */
    readonly retryAfter?: number,
  ) {
    super(message);
  }
}

/** Talks to a running parley like any other OpenAI client would. */
export function createClient(serverUrl: string, apiKey: string | undefined) {
  const base = serverUrl.replace(/\/+$/, "");
  const auth: Record<string, string> = apiKey ? { authorization: `Bearer ${apiKey}` } : {};

  async function request(path: string, init: RequestInit): Promise<Response> {
    let response: Response;
    try {
      const json: Record<string, string> = typeof init.body === "string" ? { "content-type": "application/json" } : {};
      response = await fetch(`${base}${path}`, { ...init, headers: { ...json, ...auth, ...(init.headers as Record<string, string> | undefined) } });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new ServerError(0, "connection_error", `Cannot reach parley at ${base}: is \`parley serve\` running?`);
    }
    if (!response.ok) {
      const body = (await response.json().catch(() => undefined)) as { error?: { type?: string; message?: string } } | undefined;
      const retryAfter = Number(response.headers.get("retry-after") ?? NaN);
      throw new ServerError(response.status, body?.error?.type ?? "error", body?.error?.message ?? response.statusText, Number.isFinite(retryAfter) ? retryAfter : undefined);
    }
    return response;
  }

  return {
    /** The models the server lists, each with the upstream that serves it (parley's `provider` field). */
    async models(): Promise<ListedModel[]> {
      const body = (await (await request("/v1/models", { method: "GET" })).json()) as { data: ListedModel[] };
      return body.data.map(({ id, provider }) => (provider ? { id, provider } : { id }));
    },

    async files(): Promise<ServerFile[]> {
      const body = (await (await request("/v1/files?limit=100", { method: "GET" })).json()) as { data: ServerFile[] };
      return body.data;
    },

    /** Uploads a local file through the files API, for use as `file_ids` in a chat. */
    async upload(path: string): Promise<ServerFile> {
      const form = new FormData();
      form.append("purpose", "user_data");
      form.append("file", Bun.file(path), basename(path));
      return (await (await request("/v1/files", { method: "POST", body: form })).json()) as ServerFile;
    },

    /** What the server recorded as spent under this tag (GET /v1/usage); undefined when unknown or the key may not ask. */
    async cost(tag: string): Promise<number | undefined> {
      try {
        const body = (await (await request(`/v1/usage?by=tag&since=3650d`, { method: "GET" })).json()) as { data: { group: string | null; cost_usd: number | null }[] };
        return body.data.find((row) => row.group === tag)?.cost_usd ?? undefined;
      } catch {
        return undefined;
      }
    },

    /** `tag` goes as x-parley-tag, so the server's usage records can be summed per conversation. */
    async *chat(model: string, messages: Message[], settings: Settings, signal: AbortSignal, fileIds: string[] = [], tag?: string): AsyncGenerator<ChatPiece> {
      const body = JSON.stringify({
        model,
        messages: settings.system ? [{ role: "system", content: settings.system }, ...messages] : messages,
        ...(fileIds.length ? { file_ids: fileIds } : {}),
        ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
        ...(settings.maxTokens !== undefined ? { max_tokens: settings.maxTokens } : {}),
        ...(settings.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      });
      // x-parley-progress: the server tells a streamed reply's retries in SSE comments.
      // The tag names the conversation as a session too: on a route of several upstreams it stays on one, its prompt cache warm.
      const headers = { ...(tag ? { "x-parley-tag": tag, "x-parley-session": tag } : {}), ...(settings.stream ? { "x-parley-progress": "1" } : {}) };
      const response = await request("/v1/chat/completions", { method: "POST", body, signal, headers });
      // Some OpenAI-compatible servers answer a streaming request with one JSON reply: take it as it is.
      if (!settings.stream || !response.headers.get("content-type")?.includes("event-stream")) {
        const reply = (await response.json()) as Reply;
        const choice = reply.choices?.[0];
        if (choice?.message?.content) yield { type: "text", text: choice.message.content };
        for (const [index, call] of (choice?.message?.tool_calls ?? []).entries()) yield { type: "tool", index, name: call.function?.name, arguments: call.function?.arguments ?? "" };
        if (choice?.finish_reason) yield { type: "finish", reason: choice.finish_reason };
        if (reply.usage) yield usagePiece(reply.usage);
        return;
      }
      const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(sseMessages());
      let done = false;
      for await (const event of events) {
        if (event.comment !== undefined) {
          const retry = retryIn(event.comment);
          if (retry) yield retry;
          continue;
        }
        if (event.data === "[DONE]") {
          done = true;
          break;
        }
        const chunk = parse(event.data ?? "");
        if (chunk.error) throw new ServerError(chunk.error.status ?? 0, chunk.error.type ?? "error", chunk.error.message ?? "The stream failed.", chunk.error.retry_after);
        const choice = chunk.choices?.[0];
        if (choice?.delta?.content) yield { type: "text", text: choice.delta.content };
        for (const call of choice?.delta?.tool_calls ?? []) yield { type: "tool", index: call.index ?? 0, name: call.function?.name, arguments: call.function?.arguments ?? "" };
        if (choice?.finish_reason) yield { type: "finish", reason: choice.finish_reason };
        if (chunk.usage) yield usagePiece(chunk.usage);
      }
      if (!done && !signal.aborted) throw new ServerError(0, "stream_error", "The stream ended before the reply was complete.");
    },
  };
}

export type Client = ReturnType<typeof createClient>;

interface ToolCall {
  index?: number;
  function?: { name?: string; arguments?: string };
}

type ReplyUsage = { prompt_tokens: number; completion_tokens: number; prompt_tokens_details?: { cached_tokens?: number } };

const usagePiece = (usage: ReplyUsage): ChatPiece => ({ type: "usage", input: usage.prompt_tokens, output: usage.completion_tokens, cached: usage.prompt_tokens_details?.cached_tokens ?? 0 });

interface Reply {
  choices?: { message?: { content?: string | null; tool_calls?: ToolCall[] }; finish_reason?: string | null }[];
  usage?: ReplyUsage;
}

interface Chunk {
  /** `status` and `retry_after` come when the server answered early to tell its retries. */
  error?: { type?: string; message?: string; status?: number; retry_after?: number };
  choices?: { delta?: { content?: string; tool_calls?: ToolCall[] }; finish_reason?: string | null }[];
  usage?: ReplyUsage;
}

function parse(data: string): Chunk {
  try {
    return JSON.parse(data) as Chunk;
  } catch {
    return { error: { type: "stream_error", message: "The server sent an event that is not JSON." } };
  }
}

/** Server-sent events and comments, in the order they come. */
function sseMessages(): TransformStream<string, { data?: string; comment?: string }> {
  let parser: ReturnType<typeof createParser>;
  return new TransformStream({
    start(controller) {
      parser = createParser({ onEvent: (event) => controller.enqueue({ data: event.data }), onComment: (comment) => controller.enqueue({ comment }) });
    },
    transform: (text) => parser.feed(text),
  });
}

/** `: retry attempt=2 of=3 wait_ms=1200 status=429 retry_after=1`, as parley writes it. */
function retryIn(comment: string): Extract<ChatPiece, { type: "retry" }> | undefined {
  const match = /^\s*retry((?: \w+=\d+)+)\s*$/.exec(comment);
  if (!match) return undefined;
  const fields = new Map(match[1]!.trim().split(" ").map((pair) => pair.split("=") as [string, string]));
  const number = (name: string) => Number(fields.get(name) ?? 0);
  return { type: "retry", attempt: number("attempt"), of: number("of"), waitMs: number("wait_ms"), status: number("status"), ...(fields.has("retry_after") ? { retryAfter: number("retry_after") } : {}) };
}
