import { EventSourceParserStream } from "eventsource-parser/stream";

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

export type ChatPiece = { type: "text"; text: string } | { type: "usage"; input: number; output: number };

/** An error parley answered with, in its envelope; status 0 when it came inside a stream. */
export class ServerError extends Error {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
  }
}

/** Talks to a running parley like any other OpenAI client would. */
export function createClient(serverUrl: string, apiKey: string | undefined) {
  const base = serverUrl.replace(/\/+$/, "");
  const headers = { "content-type": "application/json", ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) };

  async function request(path: string, init: RequestInit): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, { ...init, headers });
    } catch (error) {
      if (init.signal?.aborted) throw error;
      throw new ServerError(0, "connection_error", `Cannot reach parley at ${base}: is \`parley serve\` running?`);
    }
    if (!response.ok) {
      const body = (await response.json().catch(() => undefined)) as { error?: { type?: string; message?: string } } | undefined;
      throw new ServerError(response.status, body?.error?.type ?? "error", body?.error?.message ?? response.statusText);
    }
    return response;
  }

  return {
    async models(): Promise<string[]> {
      const body = (await (await request("/v1/models", { method: "GET" })).json()) as { data: { id: string }[] };
      return body.data.map((m) => m.id);
    },

    async *chat(model: string, messages: Message[], settings: Settings, signal: AbortSignal): AsyncGenerator<ChatPiece> {
      const body = JSON.stringify({
        model,
        messages: settings.system ? [{ role: "system", content: settings.system }, ...messages] : messages,
        ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
        ...(settings.maxTokens !== undefined ? { max_tokens: settings.maxTokens } : {}),
        ...(settings.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
      });
      const response = await request("/v1/chat/completions", { method: "POST", body, signal });
      // Some OpenAI-compatible servers answer a streaming request with one JSON reply: take it as it is.
      if (!settings.stream || !response.headers.get("content-type")?.includes("event-stream")) {
        const reply = (await response.json()) as { choices: { message: { content: string | null } }[]; usage?: { prompt_tokens: number; completion_tokens: number } };
        yield { type: "text", text: reply.choices[0]?.message.content ?? "" };
        if (reply.usage) yield { type: "usage", input: reply.usage.prompt_tokens, output: reply.usage.completion_tokens };
        return;
      }
      const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
      let done = false;
      for await (const event of events) {
        if (event.data === "[DONE]") {
          done = true;
          break;
        }
        const chunk = parse(event.data);
        if (chunk.error) throw new ServerError(0, chunk.error.type ?? "error", chunk.error.message ?? "The stream failed.");
        const text = chunk.choices?.[0]?.delta?.content;
        if (text) yield { type: "text", text };
        if (chunk.usage) yield { type: "usage", input: chunk.usage.prompt_tokens, output: chunk.usage.completion_tokens };
      }
      if (!done && !signal.aborted) throw new ServerError(0, "stream_error", "The stream ended before the reply was complete.");
    },
  };
}

export type Client = ReturnType<typeof createClient>;

interface Chunk {
  error?: { type?: string; message?: string };
  choices?: { delta?: { content?: string } }[];
  usage?: { prompt_tokens: number; completion_tokens: number };
}

function parse(data: string): Chunk {
  try {
    return JSON.parse(data) as Chunk;
  } catch {
    return { error: { type: "stream_error", message: "The server sent an event that is not JSON." } };
  }
}
