import type { ChatReply, ChatRequest, Part, StreamEvent, Tool } from "../../ir.ts";
import { isTurn, textOf } from "../../ir.ts";
import { refuseUnsupported } from "../../wire/cross-family.ts";
import { textCompletion } from "./completions.ts";
import { mockEmbeddings } from "./embeddings.ts";
import type { Provider } from "../provider.ts";
import { fromUpstreamStatus, type Upstream } from "../../wire/upstream-errors.ts";

/**
 * The built-in mock (contract 11): no keys, no network, the same answer every time. `mock` echoes
 * the last user text, `mock/tools` calls the first tool offered, `mock/error-429` and
 * `mock/error-503` fail like an upstream would, `mock/slow` streams a token every 50 ms. It answers
 * embeddings (embeddings.ts) and legacy completions (completions.ts) too.
 */
const up: Upstream = { label: "parley mock", url: "built-in", credentials: "nothing (the mock needs no keys)" };
const SLOW_MS = 50;

export function createMockProvider(): Provider {
  return {
    name: "mock",
    label: up.label,
    free: true,
    complete: async (request, model, signal) => collect(script(request, model, signal)),
    stream: (request, model, signal) => script(request, model, signal),
    embed: async (request, model) => {
      if (model === "mock/error-429") throw fromUpstreamStatus(up, 429, "mock/error-429 always answers 429.");
      if (model === "mock/error-503") throw fromUpstreamStatus(up, 503, "mock/error-503 always answers 503.");
      return mockEmbeddings(request);
    },
    native: { "openai-completions": (call) => textCompletion(call, (request) => script(request, call.model, call.signal), collect) },
  };
}

async function* script(request: ChatRequest, model: string, signal: AbortSignal): AsyncGenerator<StreamEvent> {
  if (model === "mock/error-429") throw fromUpstreamStatus(up, 429, "mock/error-429 always answers 429.");
  if (model === "mock/error-503") throw fromUpstreamStatus(up, 503, "mock/error-503 always answers 503.");
  refuseUnsupported(request, "The mock");
  const input = { total: estimateTokens(request), cacheRead: 0, cacheWrite: 0 };
  yield { type: "start", id: "mock-0001", usage: { input } };
  const tool = model === "mock/tools" && callsTool(request) ? pickTool(request) : undefined;
  if (tool) {
    const args = JSON.stringify(sampleArguments(tool, `${FROM_MOCK} ${lastUserText(request)}`));
    yield { type: "tool_call", index: 0, id: "call_mock_0001", name: tool.name };
    yield { type: "tool_args", index: 0, text: args };
    yield { type: "finish", finish: { reason: "tool_calls", raw: "tool_calls" } };
    yield { type: "usage", usage: { input, output: tokens(args).length } };
    return;
  }
  const pieces = tokens(replyText(request, model));
  for (const text of pieces) {
    if (model === "mock/slow") await Bun.sleep(SLOW_MS);
    if (signal.aborted) return;
    yield { type: "text", text };
  }
  yield { type: "finish", finish: { reason: "stop", raw: "stop" } };
  yield { type: "usage", usage: { input, output: pieces.length } };
}

/**
 * Marks the text mock/tools puts in a tool call's arguments. An agent whose first tool starts a
 * sub-agent (Claude Code's `Agent`) gives it that text as its prompt: the sub-agent's request carries
 * the mark and gets text, where it would call the tool again, and its own sub-agent, without end.
 */
const FROM_MOCK = "mock/tools:";

/** A tool is called once per conversation turn: not after a tool result, not for a prompt the mock wrote, not when tool_choice is none. */
function callsTool(request: ChatRequest): boolean {
  if (request.toolChoice?.type === "none") return false;
  if (lastTurn(request)?.content.some((p) => p.type === "tool_result")) return false;
  return !lastUserText(request).includes(FROM_MOCK);
}

/** The echo, or after a tool round trip, what the tool returned. */
function replyText(request: ChatRequest, model: string): string {
  const last = lastTurn(request)?.content ?? [];
  const results = last.filter((p) => p.type === "tool_result");
  if (results.length) return results.map((p) => `Tool ${p.toolCallId} returned: ${p.content}`).join("\n");
  if (model === "mock/tools") return !request.tools?.length ? "mock/tools: no tools were offered." : request.toolChoice?.type === "none" ? "mock/tools: tool_choice is none, so no tool was called." : "mock/tools: this prompt came from a mock/tools call, so no tool was called again.";
  return lastUserText(request) || "(mock: there was no user text to echo)";
}

const lastTurn = (request: ChatRequest) => request.messages.findLast(isTurn);

function lastUserText(request: ChatRequest): string {
  const user = request.messages.findLast((m) => m.role === "user" && m.content.some((p) => p.type === "text"));
  return user ? textOf(user.content) : "";
}

function pickTool(request: ChatRequest): Tool | undefined {
  const choice = request.toolChoice;
  if (choice?.type === "tool") return request.tools?.find((t) => t.name === choice.name);
  return request.tools?.[0];
}

/** Arguments that satisfy the schema's required properties: strings get the user's text. */
function sampleArguments(tool: Tool, text: string): Record<string, unknown> {
  const properties = (tool.parameters.properties ?? {}) as Record<string, { type?: unknown }>;
  const required = Array.isArray(tool.parameters.required) ? (tool.parameters.required as unknown[]) : [];
  const args: Record<string, unknown> = {};
  for (const name of required) {
    if (typeof name !== "string" || !Object.hasOwn(properties, name)) continue;
    const type = properties[name]?.type;
    args[name] = type === "number" || type === "integer" ? 0 : type === "boolean" ? false : type === "array" ? [] : type === "object" ? {} : text;
  }
  return args;
}

/** Words with their leading space: "Hello world" streams as "Hello", " world". */
const tokens = (text: string) => text.match(/\s*\S+|\s+$/g) ?? [];

/** About four characters a token, as the usual rule of thumb has it. */
function estimateTokens(request: ChatRequest): number {
  const parts: Part[] = request.messages.flatMap((m) => m.content);
  const chars = request.system.join("").length + parts.reduce((n, p) => n + (p.type === "text" ? p.text.length : p.type === "tool_result" ? p.content.length : 0), 0);
  return Math.max(1, Math.ceil(chars / 4));
}

/** A whole reply from the same events a stream would carry. */
async function collect(events: AsyncGenerator<StreamEvent>): Promise<ChatReply> {
  const reply: ChatReply = { id: "mock-0001", content: [], finish: { reason: "stop", raw: "stop" } };
  let text = "";
  const calls: Extract<Part, { type: "tool_call" }>[] = [];
  for await (const event of events) {
    if (event.type === "text") text += event.text;
    else if (event.type === "tool_call") calls.push({ type: "tool_call", id: event.id, name: event.name, arguments: "" });
    else if (event.type === "tool_args") calls[event.index]!.arguments += event.text;
    else if (event.type === "finish") reply.finish = event.finish;
    else if (event.type === "usage" && event.usage.input) reply.usage = { input: event.usage.input, output: event.usage.output ?? 0 };
  }
  reply.content = [...(text ? [{ type: "text" as const, text }] : []), ...calls];
  return reply;
}
