import { invalidRequest, validationError } from "../errors.ts";

/** Small readers for untrusted request JSON: each names the field and the rule it broke. */

export type Json = Record<string, unknown>;

export const isObject = (value: unknown): value is Json =>
  typeof value === "object" && value !== null && !Array.isArray(value);

export function optionalString(body: Json, field: string): string | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "string") throw validationError(field, "must be a string");
  return value;
}

export function positiveInt(body: Json, field: string): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Number.isInteger(value) || (value as number) <= 0) throw validationError(field, "must be a positive integer");
  return value as number;
}

export function numberIn(body: Json, field: string, min: number, max: number): number | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "number" || !(value >= min && value <= max)) throw validationError(field, `must be a number from ${min} to ${max}`);
  return value;
}

export function optionalBoolean(body: Json, field: string): boolean | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== "boolean") throw validationError(field, "must be true or false");
  return value;
}

export function stringList(body: Json, field: string): string[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === "string") return [value];
  if (!Array.isArray(value) || !value.every((v) => typeof v === "string")) throw validationError(field, "must be a string or an array of strings");
  return value;
}

/**
 * Whether the body asks the model to think (contract 15): Anthropic's `thinking` not disabled, or an
 * OpenAI `reasoning_effort` / Responses `reasoning` set to anything but effort `none`.
 */
export function asksThinking(body: Json): boolean {
  const { thinking, reasoning_effort: effort, reasoning } = body;
  if (isObject(thinking)) return thinking.type !== "disabled";
  if (effort !== undefined && effort !== null) return effort !== "none";
  if (isObject(reasoning)) return reasoning.effort !== "none";
  return false;
}

export function fileIds(body: Json): string[] {
  return stringList(body, "file_ids") ?? [];
}

/** `messages` missing is a malformed request (400); empty is a value failing its rule (422). */
export function messageList(body: Json, field = "messages"): Json[] {
  const value = body[field];
  if (value === undefined || value === null) throw invalidRequest(`Missing required field '${field}'.`, `${field}: required`);
  if (!Array.isArray(value)) throw validationError(field, "must be an array of messages");
  if (value.length === 0) throw validationError(field, "must contain at least one message");
  value.forEach((m, i) => {
    if (!isObject(m)) throw validationError(`${field}[${i}]`, "must be an object");
  });
  return value as Json[];
}

export function objectList(body: Json, field: string): Json[] | undefined {
  const value = body[field];
  if (value === undefined || value === null) return undefined;
  if (!Array.isArray(value) || !value.every(isObject)) throw validationError(field, "must be an array of objects");
  return value;
}

/** `data:image/png;base64,AAAA` -> its parts; anything else is a remote URL. */
export function parseDataUrl(url: string): { mediaType: string; data: string } | undefined {
  const match = /^data:([^;,]+);base64,(.*)$/s.exec(url);
  return match ? { mediaType: match[1]!, data: match[2]! } : undefined;
}

/** Tool-call arguments are JSON text; an upstream that wants an object gets it parsed, safely. */
export function parseArguments(text: string, where: string): Record<string, unknown> {
  if (text.trim() === "") return {};
  try {
    const value = JSON.parse(text);
    if (isObject(value)) return value;
  } catch {}
  throw invalidRequest(`Tool call arguments in ${where} are not a JSON object.`);
}

/** Tolerant readers for upstream JSON: the value when it has the type, else undefined. */
export const stringOr = (value: unknown) => (typeof value === "string" ? value : undefined);
/** A count or a time (tokens, seconds): a finite number, never negative. */
export const numberOr = (value: unknown) => (typeof value === "number" && Number.isFinite(value) && value >= 0 ? value : undefined);

/**
 * The JSON object that starts at `from` in `text` (at its `{`), braces inside strings ignored: a
 * member read out of a stream's tail with nested objects in it (`server_tool_use`) whole.
 */
export function objectAt(text: string, from: number): string | undefined {
  if (text[from] !== "{") return undefined;
  let depth = 0;
  let inString = false;
  for (let i = from; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === "\\") i++;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{") depth++;
    else if (c === "}" && --depth === 0) return text.slice(from, i + 1);
  }
  return undefined;
}

/** The object value of the first `"<key>":` at or after `from`, read whole (see objectAt). */
export function memberObject(text: string, key: string, from = 0): string | undefined {
  const match = new RegExp(`"${key}"\\s*:\\s*\\{`, "g");
  match.lastIndex = from;
  const found = match.exec(text);
  return found ? objectAt(text, found.index + found[0].length - 1) : undefined;
}

/** One member of a JSON object as written: where it starts (its key's quote) and where its value starts and ends. */
export interface MemberSpan {
  key: string;
  start: number;
  valueStart: number;
  end: number;
}

/**
 * The top-level members of a JSON object's text, in order, without parsing the values: a body
 * edited member by member keeps every other byte as the client wrote it (numbers JSON.parse would
 * round, escapes, spacing). Undefined when the text is not an object this can read.
 */
export function topMembers(text: string): MemberSpan[] | undefined {
  let i = skipSpace(text, 0);
  if (text[i] !== "{") return undefined;
  const members: MemberSpan[] = [];
  i = skipSpace(text, i + 1);
  if (text[i] === "}") return members;
  for (;;) {
    if (text[i] !== '"') return undefined;
    const start = i;
    const keyEnd = stringEnd(text, i);
    if (keyEnd < 0) return undefined;
    const key = JSON.parse(text.slice(i, keyEnd)) as string;
    i = skipSpace(text, keyEnd);
    if (text[i] !== ":") return undefined;
    const valueStart = skipSpace(text, i + 1);
    const end = valueEnd(text, valueStart);
    if (end < 0) return undefined;
    members.push({ key, start, valueStart, end });
    i = skipSpace(text, end);
    if (text[i] === "}") return members;
    if (text[i] !== ",") return undefined;
    i = skipSpace(text, i + 1);
  }
}

function skipSpace(text: string, i: number): number {
  while (i < text.length && (text[i] === " " || text[i] === "\n" || text[i] === "\r" || text[i] === "\t")) i++;
  return i;
}

/** The index after the string that starts at `i`, or -1. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === "\\") j++;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

/** The index after the value that starts at `i`, or -1. */
function valueEnd(text: string, i: number): number {
  const c = text[i];
  if (c === '"') return stringEnd(text, i);
  if (c === "{" || c === "[") {
    let depth = 0;
    for (let j = i; j < text.length; j++) {
      const d = text[j];
      if (d === '"') {
        j = stringEnd(text, j) - 1;
        if (j < 0) return -1;
      } else if (d === "{" || d === "[") depth++;
      else if ((d === "}" || d === "]") && --depth === 0) return j + 1;
    }
    return -1;
  }
  let j = i;
  while (j < text.length && text[j] !== "," && text[j] !== "}" && text[j] !== "]" && text[j] !== " " && text[j] !== "\n" && text[j] !== "\r" && text[j] !== "\t") j++;
  return j > i ? j : -1;
}
