import { basename } from "node:path";
import { EventSourceParserStream } from "eventsource-parser/stream";
import { loadConfig, type Config } from "../config.ts";
import { exitUsage } from "./fail.ts";

/** The flags `parley chat` takes for one question asked from a script. */
export const ONE_SHOT_ARGS = {
  message: { type: "positional", required: false, description: "the question, for one answer without the full-screen client (same as --prompt)" },
  prompt: { type: "string", alias: "p", description: "the question: prints the answer and exits (also read from stdin when it is not a terminal)" },
  system: { type: "string", description: "system prompt for the question" },
  file: { type: "string", description: "a file to attach (uploaded, sent as file_ids, deleted after); repeat for more" },
  json: { type: "boolean", description: "print one JSON object {text, model, finish_reason, usage, tool_calls} instead of the text" },
} as const;

interface OnceArgs {
  message?: string;
  prompt?: string;
  system?: string;
  file?: string;
  json?: boolean;
  model?: string;
  "server-url"?: string;
  "api-key"?: string;
}

/** A prompt given any way, a one-shot flag, or no terminal to draw on: one answer, no Ink. */
export function isOneShot(args: OnceArgs): boolean {
  return args.prompt !== undefined || args.message !== undefined || args.system !== undefined || args.file !== undefined || !!args.json || !process.stdin.isTTY;
}

/** The local server parley's own settings point at; 0.0.0.0 and :: are reached through loopback. */
export function localServerUrl(config: Config): string {
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host;
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`;
}

interface ToolCall {
  id: string;
  type: "function";
  function: { name: string; arguments: string };
}

interface Answer {
  text: string;
  model: string | null;
  finish_reason: string | null;
  usage: Record<string, number> | null;
  tool_calls: ToolCall[];
}

async function firstModel(server: ReturnType<typeof createServer>): Promise<string> {
  const listed = (await (await server.send("/v1/models", { method: "GET" })).json().catch(() => undefined)) as { data?: { id?: unknown }[] } | undefined;
  const id = listed?.data?.[0]?.id;
  if (typeof id !== "string") exitUsage("no model: the server lists none; pass --model M (or set DEFAULT_ALPHA_MODEL)");
  return id;
}

/** Asks once, prints the answer (streamed, or as JSON), exits 0; 1 when the request fails, 2 when it cannot be made. */
export async function chatOnce(args: OnceArgs, rawArgs: string[]): Promise<void> {
  const prompt = await readPrompt(args);
  const { config } = loadConfig();
  const apiKey = args["api-key"] ?? config.apiKey;
  if (!apiKey) exitUsage("no API key: pass --api-key K or set API_KEY (parley serve prints the one it generates)");
  const paths = repeated(rawArgs, "file");
  for (const path of paths) if (!(await Bun.file(path).exists())) exitUsage(`--file ${path}: no such file`);

  const server = createServer((args["server-url"] ?? localServerUrl(config)).replace(/\/+$/, ""), apiKey);
  const fileIds: string[] = [];
  try {
    // As the full-screen chat: --model, else DEFAULT_ALPHA_MODEL, else the first model the server lists.
    const model = args.model ?? config.defaultModel ?? (await firstModel(server));
    for (const path of paths) fileIds.push(await server.upload(path));
    const body = {
      model,
      messages: [...(args.system ? [{ role: "system", content: args.system }] : []), { role: "user", content: prompt }],
      ...(fileIds.length ? { file_ids: fileIds } : {}),
      ...(args.json ? {} : { stream: true }),
    };
    const response = await server.send("/v1/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
    if (args.json) {
      process.stdout.write(`${JSON.stringify(fromCompletion(await response.json().catch(() => undefined)))}\n`);
      return;
    }
    const answer = await streamText(response, (text) => process.stdout.write(text));
    if (answer.text && !answer.text.endsWith("\n")) process.stdout.write("\n");
    if (answer.tool_calls.length) {
      process.stderr.write(`parley: the model asked to call ${answer.tool_calls.map((c) => c.function.name).join(", ")}; --json shows the calls\n`);
    }
  } catch (error) {
    if (!(error instanceof RequestFailed)) throw error;
    process.stderr.write(`parley: ${error.message}\n`);
    process.exitCode = 1;
  } finally {
    await Promise.all(fileIds.map((id) => server.remove(id)));
  }
}

class RequestFailed extends Error {}

async function readPrompt(args: OnceArgs): Promise<string> {
  if (args.prompt !== undefined && args.message !== undefined) exitUsage("give the question once: either -p \"...\" or as an argument");
  const given = args.prompt ?? args.message ?? (process.stdin.isTTY ? undefined : (await Bun.stdin.text()).trimEnd());
  if (!given?.trim()) exitUsage('no question: parley chat -p "question", parley chat "question", or pipe it in: echo question | parley chat');
  return given;
}

/** Every value of a repeatable `--name V` / `--name=V` flag; citty keeps only the last. */
function repeated(rawArgs: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < rawArgs.length; i++) {
    const token = rawArgs[i]!;
    if (token === "--") break;
    if (token === `--${name}` && i + 1 < rawArgs.length) values.push(rawArgs[++i]!);
    else if (token.startsWith(`--${name}=`)) values.push(token.slice(name.length + 3));
  }
  return values;
}

function createServer(base: string, apiKey: string) {
  async function send(path: string, init: RequestInit): Promise<Response> {
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, { ...init, headers: { ...init.headers, authorization: `Bearer ${apiKey}` } });
    } catch (error) {
      const cause = (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
      throw new RequestFailed(`cannot reach parley at ${base} (${cause}): is \`parley serve\` running?`);
    }
    if (response.ok) return response;
    const text = await response.text();
    throw new RequestFailed(`${response.status} from ${base}${path}: ${errorMessage(text) ?? (oneLine(text) || response.statusText)}`);
  }
  return {
    send,
    async upload(path: string): Promise<string> {
      const form = new FormData();
      form.append("purpose", "user_data");
      form.append("file", Bun.file(path), basename(path));
      const reply = parseJson(await (await send("/v1/files", { method: "POST", body: form })).text()) as { id?: unknown } | undefined;
      if (typeof reply?.id !== "string") throw new RequestFailed(`uploading ${path}: the server's reply has no file id`);
      return reply.id;
    },
    /** Best effort: the answer is already out; a file left behind is not worth failing it for. */
    async remove(id: string): Promise<void> {
      await fetch(`${base}/v1/files/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${apiKey}` } }).catch(() => undefined);
    },
  };
}

/** Reads an OpenAI chat stream, handing each piece of text on as it comes. */
async function streamText(response: Response, write: (text: string) => void): Promise<Answer> {
  // Some OpenAI-compatible servers answer a streaming request with one JSON reply.
  if (!response.headers.get("content-type")?.includes("event-stream")) {
    const answer = fromCompletion(await response.json().catch(() => undefined));
    write(answer.text);
    return answer;
  }
  const events = response.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  try {
    return await readEvents(events, write);
  } catch (error) {
    if (error instanceof RequestFailed) throw error;
    throw new RequestFailed(`the connection broke off mid-reply (${error instanceof Error ? error.message : error})`);
  }
}

async function readEvents(events: ReadableStream<{ data: string }>, write: (text: string) => void): Promise<Answer> {
  const answer: Answer = { text: "", model: null, finish_reason: null, usage: null, tool_calls: [] };
  for await (const event of events) {
    if (event.data === "[DONE]") return answer;
    const chunk = parseJson(event.data) as Chunk | undefined;
    if (!chunk) throw new RequestFailed("the server sent a stream event that is not JSON");
    if (chunk.error) throw new RequestFailed(`the reply broke off: ${oneLine(chunk.error.message ?? "the stream failed")}`);
    answer.model ??= chunk.model ?? null;
    if (chunk.usage) answer.usage = chunk.usage;
    const choice = chunk.choices?.[0];
    if (choice?.finish_reason) answer.finish_reason = choice.finish_reason;
    const text = choice?.delta?.content;
    if (text) {
      answer.text += text;
      write(text);
    }
    for (const part of choice?.delta?.tool_calls ?? []) {
      const call = (answer.tool_calls[part.index ?? 0] ??= { id: "", type: "function", function: { name: "", arguments: "" } });
      if (part.id) call.id = part.id;
      if (part.function?.name) call.function.name += part.function.name;
      if (part.function?.arguments) call.function.arguments += part.function.arguments;
    }
  }
  throw new RequestFailed("the stream ended before the reply was complete");
}

interface Chunk {
  model?: string;
  error?: { message?: string };
  usage?: Record<string, number>;
  choices?: {
    finish_reason?: string | null;
    delta?: { content?: string | null; tool_calls?: { index?: number; id?: string; function?: { name?: string; arguments?: string } }[] };
  }[];
}

function fromCompletion(body: unknown): Answer {
  const reply = body as { model?: string; usage?: Record<string, number>; choices?: { finish_reason?: string; message?: { content?: string | null; tool_calls?: ToolCall[] } }[] } | undefined;
  const choice = reply?.choices?.[0];
  if (!choice?.message) throw new RequestFailed("the server's reply is not a chat completion");
  return {
    text: choice.message.content ?? "",
    model: reply!.model ?? null,
    finish_reason: choice.finish_reason ?? null,
    usage: reply!.usage ?? null,
    tool_calls: choice.message.tool_calls ?? [],
  };
}

/** The envelope's message, with its details when the server gave some (DEBUG=true: the upstream's own words). */
function errorMessage(text: string): string | undefined {
  const error = (parseJson(text) as { error?: { message?: unknown; details?: unknown } } | undefined)?.error;
  if (typeof error?.message !== "string") return undefined;
  return oneLine(typeof error.details === "string" ? `${error.message} (${error.details})` : error.message);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const oneLine = (text: string) => text.replace(/\s+/g, " ").trim();
