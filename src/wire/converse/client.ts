import { invalidRequest, validationError } from "../../errors.ts";
import { type ChatReply, type ChatRequest, type FinishReason, type Message, type Part, type SseEvent, type StreamEvent, type Tool, type ToolChoice, type Usage } from "../../ir.ts";
import type { StreamEncoder } from "../codec.ts";
import { isObject, memberObject, messageList, numberOr, optionalString, parseArguments, stringOr, type Json } from "../../lib/read.ts";
import { NO_INPUT, usageTracker } from "../usage.ts";
import { exceptionEvent } from "../aws-errors.ts";

/**
 * Bedrock's Converse API, the client's side (`POST /model/{id}/converse` and `converse-stream` on
 * parley): requests decoded into the IR, replies and stream events written as Bedrock writes them.
 * The upstream's side is converse.ts beside it; usage both ways is here (fromConverse).
 * A stream's events are `{ event: <Converse event name>, data: <its payload> }`, which the Bedrock
 * edge writes as event-stream frames; an error is an `exception` event (aws-errors.ts).
 */

// ---- Converse request -> IR ----

export function decodeConverseRequest(body: Json): ChatRequest {
  const system: string[] = [];
  if (body.system !== undefined && !Array.isArray(body.system)) throw validationError("system", "must be a list of system content blocks");
  for (const [i, block] of (Array.isArray(body.system) ? body.system : []).entries()) {
    if (!isObject(block)) throw validationError(`system[${i}]`, "must be an object");
    if (block.text !== undefined && typeof block.text !== "string") throw validationError(`system[${i}].text`, "must be a string");
    if (typeof block.text === "string") system.push(block.text);
  }
  // Bedrock's own: a converted call cannot honour them, and leaving them out would change the answer (a guardrail off, thinking gone).
  const unsupported = ["guardrailConfig", "additionalModelRequestFields", "promptVariables"].filter((field) => body[field] !== undefined && body[field] !== null);
  const messages: Message[] = [];
  messageList(body).forEach((m, i) => {
    const at = `messages[${i}]`;
    if (m.role !== "user" && m.role !== "assistant") throw invalidRequest(`${at}.role: must be user or assistant`, `${at}.role: must be user or assistant`);
    if (!Array.isArray(m.content)) throw validationError(`${at}.content`, "must be a list of content blocks");
    messages.push({ role: m.role, content: m.content.flatMap((block, j) => decodeBlock(block, `${at}.content[${j}]`)) });
  });
  const config = isObject(body.inferenceConfig) ? body.inferenceConfig : {};
  const tools = isObject(body.toolConfig) ? decodeTools(body.toolConfig) : undefined;
  return {
    model: optionalString(body, "modelId"),
    system,
    messages,
    maxTokens: numberOr(config.maxTokens),
    temperature: numberOr(config.temperature),
    topP: numberOr(config.topP),
    stop: Array.isArray(config.stopSequences) ? config.stopSequences.filter((s): s is string => typeof s === "string") : undefined,
    ...tools,
    stream: false,
    includeUsage: true,
    fileIds: [],
    ...(unsupported.length ? { unsupported } : {}),
  };
}

function decodeBlock(block: unknown, at: string): Part[] {
  if (!isObject(block)) throw validationError(at, "must be a content block");
  if (typeof block.text === "string") return [{ type: "text", text: block.text }];
  if (isObject(block.image)) {
    const data = isObject(block.image.source) ? stringOr(block.image.source.bytes) : undefined;
    if (!data) throw validationError(`${at}.image.source.bytes`, "must be base64 bytes");
    return [{ type: "image", mediaType: `image/${stringOr(block.image.format) ?? "png"}`, data }];
  }
  if (isObject(block.document)) {
    const data = isObject(block.document.source) ? stringOr(block.document.source.bytes) : undefined;
    if (!data) throw validationError(`${at}.document.source.bytes`, "must be base64 bytes");
    return [{ type: "document", mediaType: documentType(stringOr(block.document.format)), data, ...(typeof block.document.name === "string" ? { title: block.document.name } : {}) }];
  }
  if (isObject(block.toolUse)) {
    const { toolUseId, name, input } = block.toolUse;
    if (typeof toolUseId !== "string" || typeof name !== "string") throw validationError(`${at}.toolUse`, "needs toolUseId and name");
    return [{ type: "tool_call", id: toolUseId, name, arguments: JSON.stringify(input ?? {}) }];
  }
  if (isObject(block.toolResult)) {
    const { toolUseId, content, status } = block.toolResult;
    if (typeof toolUseId !== "string") throw validationError(`${at}.toolResult.toolUseId`, "required");
    const text = (Array.isArray(content) ? content : []).map((c) => (isObject(c) ? (typeof c.text === "string" ? c.text : c.json !== undefined ? JSON.stringify(c.json) : "") : "")).join("");
    return [{ type: "tool_result", toolCallId: toolUseId, content: text, ...(status === "error" ? { isError: true } : {}) }];
  }
  if (isObject(block.reasoningContent) && isObject(block.reasoningContent.reasoningText)) {
    const { text, signature } = block.reasoningContent.reasoningText;
    return [{ type: "reasoning", text: stringOr(text) ?? "", ...(typeof signature === "string" ? { signature } : {}) }];
  }
  // cachePoint and guardContent change nothing the model is asked.
  if (block.cachePoint !== undefined || block.guardContent !== undefined) return [];
  throw invalidRequest(`${at}: this content block is not supported on a converted route`, `${at}: unsupported block`);
}

/** Converse names a document's format; the IR carries its media type. */
function documentType(format = "pdf"): string {
  const text: Record<string, string> = { txt: "text/plain", md: "text/markdown", csv: "text/csv", html: "text/html" };
  return Object.hasOwn(text, format) ? text[format]! : `application/${format}`;
}

function decodeTools(config: Json): { tools?: Tool[]; toolChoice?: ToolChoice } {
  const tools = (Array.isArray(config.tools) ? config.tools : []).flatMap((t, i): Tool[] => {
    const spec = isObject(t) && isObject(t.toolSpec) ? t.toolSpec : undefined;
    if (!spec) return [];
    if (typeof spec.name !== "string") throw validationError(`toolConfig.tools[${i}].toolSpec.name`, "required");
    const schema = isObject(spec.inputSchema) && isObject(spec.inputSchema.json) ? spec.inputSchema.json : { type: "object" };
    return [{ name: spec.name, ...(typeof spec.description === "string" ? { description: spec.description } : {}), parameters: schema }];
  });
  const choice = isObject(config.toolChoice) ? config.toolChoice : undefined;
  const toolChoice: ToolChoice | undefined = !choice ? undefined
    : isObject(choice.any) ? { type: "required" }
    : isObject(choice.tool) && typeof choice.tool.name === "string" ? { type: "tool", name: choice.tool.name }
    : { type: "auto" };
  return { ...(tools.length ? { tools } : {}), ...(toolChoice ? { toolChoice } : {}) };
}

// ---- IR -> Converse reply ----

const STOP: Record<FinishReason, string> = {
  stop: "end_turn", stop_sequence: "stop_sequence", length: "max_tokens", tool_calls: "tool_use", content_filter: "content_filtered", other: "end_turn",
};

const converseUsage = (usage: Partial<Usage> | undefined) => {
  const input = usage?.input ?? NO_INPUT;
  const output = usage?.output ?? 0;
  const inputTokens = Math.max(0, input.total - input.cacheRead - input.cacheWrite);
  return {
    inputTokens, outputTokens: output, totalTokens: input.total + output,
    ...(input.cacheRead ? { cacheReadInputTokens: input.cacheRead } : {}),
    ...(input.cacheWrite ? { cacheWriteInputTokens: input.cacheWrite } : {}),
  };
};

export function encodeConverseReply(reply: ChatReply): unknown {
  const content = reply.content.flatMap((part): Json[] => {
    if (part.type === "text") return part.text ? [{ text: part.text }] : [];
    if (part.type === "tool_call") return [{ toolUse: { toolUseId: part.id, name: part.name, input: parseArguments(part.arguments, "the reply") } }];
    if (part.type === "reasoning" && !part.redacted) return [{ reasoningContent: { reasoningText: { text: part.text, ...(part.signature ? { signature: part.signature } : {}) } } }];
    return [];
  });
  return { output: { message: { role: "assistant", content } }, stopReason: STOP[reply.finish.reason], usage: converseUsage(reply.usage), metrics: { latencyMs: 0 } };
}

// ---- IR stream -> Converse stream events ----

export function converseStream(): StreamEncoder {
  const start = performance.now();
  const usage = usageTracker();
  let block = -1;
  let open: "text" | "reasoning" | "tool" | undefined;
  const tools = new Map<number, number>();
  const stop = (): SseEvent[] => {
    if (open === undefined) return [];
    open = undefined;
    return [{ event: "contentBlockStop", data: { contentBlockIndex: block } }];
  };
  const into = (kind: "text" | "reasoning"): SseEvent[] => {
    if (open === kind) return [];
    const closed = stop();
    block++;
    open = kind;
    return closed;
  };
  const delta = (delta: Json): SseEvent => ({ event: "contentBlockDelta", data: { contentBlockIndex: block, delta } });
  return {
    event(event: StreamEvent): SseEvent[] {
      switch (event.type) {
        case "start":
          usage.add(event.usage);
          return [{ event: "messageStart", data: { role: "assistant" } }];
        case "text":
          return event.text ? [...into("text"), delta({ text: event.text })] : [];
        case "reasoning":
          return [...into("reasoning"), delta({ reasoningContent: event.signature ? { signature: event.signature } : { text: event.text } })];
        case "tool_call": {
          const closed = stop();
          block++;
          open = "tool";
          tools.set(event.index, block);
          return [...closed, { event: "contentBlockStart", data: { contentBlockIndex: block, start: { toolUse: { toolUseId: event.id, name: event.name } } } }];
        }
        case "tool_args": {
          const at = tools.get(event.index);
          return at === undefined || !event.text ? [] : [{ event: "contentBlockDelta", data: { contentBlockIndex: at, delta: { toolUse: { input: event.text } } } }];
        }
        case "finish":
          return [...stop(), { event: "messageStop", data: { stopReason: STOP[event.finish.reason] } }];
        case "usage":
          usage.add(event.usage);
          return [];
      }
    },
    error: (error) => [exceptionEvent(error)],
    end: () => [{ event: "metadata", data: { usage: converseUsage(usage.usage()), metrics: { latencyMs: Math.round(performance.now() - start) } } }],
  };
}

/** A passed-through stream's usage, from its metadata event. */
export function usageIn(tail: string): Usage | undefined {
  const found = memberObject(tail, "usage", Math.max(0, tail.lastIndexOf("metadata")));
  if (!found) return undefined;
  try {
    return fromConverse(JSON.parse(found) as Json);
  } catch {
    return undefined;
  }
}

/** Converse's `inputTokens` leaves out the cache, counted beside it. */
export function fromConverse(u: Json): Usage {
  const cacheRead = numberOr(u.cacheReadInputTokens) ?? 0;
  const cacheWrite = numberOr(u.cacheWriteInputTokens) ?? 0;
  return { input: { total: (numberOr(u.inputTokens) ?? 0) + cacheRead + cacheWrite, cacheRead, cacheWrite }, output: numberOr(u.outputTokens) ?? 0 };
}
