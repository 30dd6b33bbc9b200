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
