import { invalidRequest } from "../errors.ts";
import { isObject, type Json } from "../formats/read.ts";

/** A chat endpoint's body: JSON, and an object; anything else is the client's 400. */
export function jsonObject(raw: string): Json {
  if (raw.trim() === "") throw invalidRequest("The request body is empty; send a JSON object.");
  let body: unknown;
  try {
    body = JSON.parse(raw);
  } catch (error) {
    throw invalidRequest("The request body is not valid JSON.", error instanceof Error ? error.message : undefined);
  }
  if (!isObject(body)) throw invalidRequest("The request body must be a JSON object.");
  return body;
}
