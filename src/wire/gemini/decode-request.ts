import { invalidRequest, validationError } from "../../errors.ts";
import { isObject, type Json } from "../../lib/read.ts";
import type { ChatRequest, Message, Part, ResponseFormat, Tool, ToolChoice } from "../../ir.ts";
import { randomId } from "../codec.ts";
import { MADE_UP_ID } from "./encode-request.ts";
import { decodePart } from "./parts.ts";

/**
 * A Gemini client's `generateContent` body -> IR (the model and `stream` come from the URL: the
 * caller passes them). What the IR cannot carry (Google Search, code execution, cached content,
 * several candidates) is named in `unsupported`; what changes nothing the user relies on (safety
 * settings, labels) is dropped.
 */
export function decodeRequest(body: Json, model?: string, stream = false): ChatRequest {
  const unsupported: string[] = [];
  const contents = body.contents;
  if (contents === undefined || contents === null) throw invalidRequest("Missing required field 'contents'.", "contents: required");
  if (!Array.isArray(contents)) throw validationError("contents", "must be an array of contents");
  // Calls without ids (older models, hand-written histories) are answered by name, in order.
  const unanswered = new Map<string, string[]>();
  const messages: Message[] = contents.map((content, i) => {
    const at = `contents[${i}]`;
    if (!isObject(content)) throw validationError(at, "must be an object");
    const role = content.role ?? "user";
    if (role !== "user" && role !== "model" && role !== "function") throw validationError(`${at}.role`, "must be user or model");
    if (!Array.isArray(content.parts)) throw validationError(`${at}.parts`, "must be an array of parts");
    const parts = content.parts.flatMap((part, j) => decodeClientPart(part, `${at}.parts[${j}]`, unanswered, unsupported));
    return { role: role === "model" ? "assistant" : "user", content: parts };
  });
  const config = isObject(body.generationConfig) ? body.generationConfig : {};
  const { tools, choice } = decodeTools(body, unsupported);
  for (const field of ["cachedContent"]) if (body[field] !== undefined && body[field] !== null) unsupported.push(field);
  if (typeof config.candidateCount === "number" && config.candidateCount > 1) unsupported.push("generationConfig.candidateCount");
  const thinking = isObject(config.thinkingConfig) ? config.thinkingConfig : undefined;
  return {
    model,
    system: systemOf(body.systemInstruction),
    messages,
    maxTokens: positive(config.maxOutputTokens, "generationConfig.maxOutputTokens"),
    temperature: number(config.temperature, "generationConfig.temperature"),
    topP: number(config.topP, "generationConfig.topP"),
    topK: positive(config.topK, "generationConfig.topK"),
    stop: Array.isArray(config.stopSequences) ? config.stopSequences.filter((s): s is string => typeof s === "string") : undefined,
    tools,
    toolChoice: choice,
    stream,
    includeUsage: true,
    fileIds: [],
    responseFormat: responseFormat(config),
    ...(unsupported.length ? { unsupported } : {}),
    ...(thinking && thinking.thinkingBudget !== 0 && thinking.thinkingLevel !== "MINIMAL" ? { thinking: true } : {}),
  };
}

function decodeClientPart(part: unknown, at: string, unanswered: Map<string, string[]>, unsupported: string[]): Part[] {
  if (!isObject(part)) throw validationError(at, "must be an object");
  const bad = (what: string) => validationError(at, what);
  if (isObject(part.functionCall)) {
    const decoded = decodePart(part, bad);
    const call = decoded.find((p) => p.type === "tool_call");
    if (call && !part.functionCall.id) unanswered.set(call.name, [...(unanswered.get(call.name) ?? []), call.id]);
    return decoded;
  }
  if (isObject(part.functionResponse)) {
    const response = part.functionResponse;
    if (typeof response.name !== "string") throw validationError(`${at}.functionResponse.name`, "is required");
    const id = typeof response.id === "string" && response.id ? response.id : (unanswered.get(response.name)?.shift() ?? randomId(MADE_UP_ID));
    return [{ type: "tool_result", toolCallId: id, ...resultOf(response.response) }];
  }
  if (isObject(part.inlineData)) {
    const { mimeType, data } = part.inlineData;
    if (typeof mimeType !== "string" || typeof data !== "string") throw validationError(`${at}.inlineData`, "needs mimeType and data");
    if (mimeType.startsWith("image/")) return [{ type: "image", mediaType: mimeType, data }];
    if (mimeType === "application/pdf") return [{ type: "document", mediaType: mimeType, data }];
    if (mimeType.startsWith("text/")) return [{ type: "text", text: Buffer.from(data, "base64").toString() }];
    unsupported.push(`${at} (inline ${mimeType})`);
    return [];
  }
  if (isObject(part.fileData)) {
    const { mimeType, fileUri } = part.fileData;
    if (typeof fileUri === "string" && /^https?:/.test(fileUri) && (typeof mimeType !== "string" || mimeType.startsWith("image/"))) return [{ type: "image_url", url: fileUri }];
    unsupported.push(`${at} (fileData)`);
    return [];
  }
  if (typeof part.text === "string" || part.thoughtSignature !== undefined) return decodePart(part, bad);
  unsupported.push(`${at} (a ${Object.keys(part).join("/") || "empty"} part)`);
  return [];
}

/** A function's response object as the IR's tool result: its `output` or `error` text when that is all it holds. */
function resultOf(response: unknown): { content: string; isError?: boolean } {
  if (!isObject(response)) return { content: response === undefined ? "" : JSON.stringify(response) };
  const keys = Object.keys(response);
  if (keys.length === 1 && typeof response.output === "string") return { content: response.output };
  if (keys.length === 1 && response.error !== undefined) return { content: typeof response.error === "string" ? response.error : JSON.stringify(response.error), isError: true };
  return { content: JSON.stringify(response) };
}

function systemOf(value: unknown): string[] {
  if (value === undefined || value === null) return [];
  if (typeof value === "string") return [value];
  if (!isObject(value) || !Array.isArray(value.parts)) throw validationError("systemInstruction", "must be a content with parts");
  const texts = value.parts.flatMap((p) => (isObject(p) && typeof p.text === "string" ? [p.text] : []));
  return texts.length ? [texts.join("")] : [];
}

function decodeTools(body: Json, unsupported: string[]): { tools?: Tool[]; choice?: ToolChoice } {
  if (body.tools !== undefined && body.tools !== null && !Array.isArray(body.tools)) throw validationError("tools", "must be an array of tools");
  const tools: Tool[] = [];
  (body.tools as unknown[] | undefined)?.forEach((tool, i) => {
    if (!isObject(tool)) throw validationError(`tools[${i}]`, "must be an object");
    for (const key of Object.keys(tool)) {
      if (key !== "functionDeclarations") unsupported.push(`tools[${i}].${key}`);
    }
    const declarations = tool.functionDeclarations ?? [];
    if (!Array.isArray(declarations)) throw validationError(`tools[${i}].functionDeclarations`, "must be an array");
    declarations.forEach((d, j) => {
      if (!isObject(d) || typeof d.name !== "string") throw validationError(`tools[${i}].functionDeclarations[${j}].name`, "is required");
      const schema = isObject(d.parametersJsonSchema) ? d.parametersJsonSchema : isObject(d.parameters) ? jsonSchemaOf(d.parameters) : { type: "object", properties: {} };
      tools.push({ name: d.name, ...(typeof d.description === "string" ? { description: d.description } : {}), parameters: schema });
    });
  });
  const config = isObject(body.toolConfig) && isObject(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : undefined;
  return { tools: tools.length ? tools : undefined, choice: config ? choiceOf(config) : undefined };
}

function choiceOf(config: Json): ToolChoice | undefined {
  const allowed = Array.isArray(config.allowedFunctionNames) ? config.allowedFunctionNames : [];
  switch (config.mode) {
    case "NONE":
      return { type: "none" };
    case "ANY":
      return allowed.length === 1 && typeof allowed[0] === "string" ? { type: "tool", name: allowed[0] } : { type: "required" };
    case "AUTO":
    case "VALIDATED":
      return { type: "auto" };
    default:
      return undefined;
  }
}

/** Gemini's OpenAPI-style `parameters` (types in capitals: `OBJECT`, `STRING`) as JSON Schema. */
export function jsonSchemaOf(schema: unknown): Record<string, unknown> {
  if (Array.isArray(schema)) return schema.map(jsonSchemaOf) as unknown as Record<string, unknown>;
  if (!isObject(schema)) return schema as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === "type" && typeof value === "string") out.type = value.toLowerCase();
    else if (key === "nullable") continue;
    else if (key === "properties" && isObject(value)) out.properties = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonSchemaOf(v)]));
    else if (key === "items" || key === "anyOf") out[key] = jsonSchemaOf(value);
    else out[key] = value;
  }
  if (schema.nullable === true && typeof out.type === "string") out.type = [out.type, "null"];
  return out;
}

function responseFormat(config: Json): ResponseFormat | undefined {
  if (config.responseMimeType !== "application/json") return undefined;
  const schema = isObject(config.responseJsonSchema) ? config.responseJsonSchema : isObject(config.responseSchema) ? jsonSchemaOf(config.responseSchema) : undefined;
  return schema ? { type: "json_schema", name: "response", schema } : { type: "json_object" };
}

function number(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !Number.isFinite(value) || value < 0) throw validationError(field, "must be a number of 0 or more");
  return value;
}

function positive(value: unknown, field: string): number | undefined {
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || (value as number) <= 0) throw validationError(field, "must be a positive integer");
  return value as number;
}

