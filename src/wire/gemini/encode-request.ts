import { invalidRequest } from "../../errors.ts";
import { alternating, systemOnTop, type ChatRequest, type Part, type ToolChoice, type Turn } from "../../ir.ts";
import { parseArguments, type Json } from "../../lib/read.ts";
import { refuseUnsupported } from "../cross-family.ts";
import { carriedSignature, needsSignatures, recalledSignature, SKIP_SIGNATURE } from "./signatures.ts";

/**
 * The IR as a `generateContent` body, for the Gemini API and Gemini on Vertex alike (the model and
 * the method go in the URL). `target` names the upstream in a refusal; `model` is the id sent.
 */
export function encodeRequest(request: ChatRequest, target: string, model: string): Json {
  refuseUnsupported(request, target);
  const { system, messages } = systemOnTop(request);
  const names = callNames(messages);
  const strict = needsSignatures(model);
  // A turn left with nothing Gemini reads (only another family's reasoning) goes; Gemini refuses empty parts.
  const contents = joined(alternating(messages).map((turn) => encodeTurn(turn, names, strict, target)).filter((c) => (c.parts as Json[]).length > 0));
  const tools = request.tools?.length ? [{ functionDeclarations: request.tools.map((t) => ({ name: t.name, ...(t.description ? { description: t.description } : {}), parametersJsonSchema: t.parameters })) }] : undefined;
  const choice = request.tools?.length && request.toolChoice ? functionCallingConfig(request.toolChoice) : undefined;
  const generationConfig = generation(request, model);
  return {
    contents,
    ...(system.length ? { systemInstruction: { parts: [{ text: system.join("\n\n") }] } } : {}),
    ...(tools ? { tools } : {}),
    ...(choice ? { toolConfig: { functionCallingConfig: choice } } : {}),
    ...(Object.keys(generationConfig).length ? { generationConfig } : {}),
  };
}

function generation(request: ChatRequest, model: string): Json {
  const format = request.responseFormat;
  return {
    ...(request.maxTokens !== undefined ? { maxOutputTokens: request.maxTokens } : {}),
    ...(request.temperature !== undefined ? { temperature: request.temperature } : {}),
    ...(request.topP !== undefined ? { topP: request.topP } : {}),
    ...(request.topK !== undefined ? { topK: request.topK } : {}),
    ...(request.stop?.length ? { stopSequences: request.stop } : {}),
    ...(format ? { responseMimeType: "application/json" } : {}),
    ...(format?.type === "json_schema" ? { responseJsonSchema: format.schema } : {}),
    // Gemini's thinking models think unasked; a client that asked for thinking gets its summaries (older models refuse the field).
    ...(request.thinking && THINKS.test(model) ? { thinkingConfig: { includeThoughts: true } } : {}),
  };
}

/** The models that think: Gemini 2.5 and every one after it. */
const THINKS = /gemini-(2\.5|[3-9]|\d{2,})/;

export function functionCallingConfig(choice: ToolChoice): Json {
  switch (choice.type) {
    case "auto":
      return { mode: "AUTO" };
    case "none":
      return { mode: "NONE" };
    case "required":
      return { mode: "ANY" };
    case "tool":
      return { mode: "ANY", allowedFunctionNames: [choice.name] };
  }
}

/** Two contents of one role in a row (an empty turn taken out between them) become one. */
function joined(contents: Json[]): Json[] {
  const out: Json[] = [];
  for (const content of contents) {
    const last = out.at(-1);
    if (last && last.role === content.role) out[out.length - 1] = { role: last.role, parts: [...(last.parts as Json[]), ...(content.parts as Json[])] };
    else out.push(content);
  }
  return out;
}

/** A function response names its function: the name of the call it answers, found in the history. */
function callNames(messages: Turn[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const m of messages) for (const p of m.content) if (p.type === "tool_call") names.set(p.id, p.name);
  return names;
}

function encodeTurn(turn: Turn, names: Map<string, string>, strict: boolean, target: string): Json {
  const parts: Json[] = [];
  let pending: string | undefined;
  let calls = 0;
  for (const part of turn.content) {
    const carried = carriedSignature(part);
    if (carried !== undefined) {
      pending = carried;
      continue;
    }
    // Signed thought text goes back as Gemini wrote it; unsigned (or another family's) stays out.
    if (part.type === "reasoning" && part.text && pending !== undefined && !part.redacted) {
      parts.push({ text: part.text, thought: true, thoughtSignature: pending });
      pending = undefined;
      continue;
    }
    const encoded = encodePart(part, names, target);
    if (!encoded) continue;
    let signature = pending;
    pending = undefined;
    if (part.type === "tool_call") {
      signature ??= recalledSignature(part.id);
      // Only the first call of a turn is signed when the model calls several at once.
      if (signature === undefined && strict && calls === 0 && turn.role === "assistant") signature = SKIP_SIGNATURE;
      calls++;
    }
    parts.push(signature === undefined ? encoded : { ...encoded, thoughtSignature: signature });
  }
  return { role: turn.role === "assistant" ? "model" : "user", parts };
}

/** Ids parley made up for calls Gemini sent without one: never sent back (Gemini matches those by name and order). */
export const MADE_UP_ID = "call_gmn_";
const idOf = (id: string) => (id.startsWith(MADE_UP_ID) ? {} : { id });

function encodePart(part: Part, names: Map<string, string>, target: string): Json | undefined {
  switch (part.type) {
    case "text":
      return { text: part.text };
    case "image":
    case "document":
      return { inlineData: { mimeType: part.mediaType, data: part.data } };
    case "image_url":
      throw invalidRequest(`Remote image URLs cannot be sent to ${target}: send the image inline as a base64 data URL.`);
    case "tool_call":
      return { functionCall: { ...idOf(part.id), name: part.name, args: parseArguments(part.arguments, `tool call ${part.id}`) } };
    case "tool_result":
      return { functionResponse: { ...idOf(part.toolCallId), name: names.get(part.toolCallId) ?? part.toolCallId, response: part.isError ? { error: part.content } : { output: part.content } } };
    case "reasoning":
      return undefined;
  }
}
