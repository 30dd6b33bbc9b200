import { invalidRequest } from "../errors.ts";
import { isObject, type Json } from "../lib/read.ts";
import { tooLarge } from "./edge.ts";

/**
 * The request body as text, at most `max` bytes: a declared length over it is refused before a
 * byte is read, a chunked body is counted as it comes and refused once it goes over.
 */
export async function readText(request: Request, max: number): Promise<string> {
  const length = request.headers.get("content-length");
  if (length !== null) {
    if (Number(length) > max) throw tooLarge(max);
    return request.text();
  }
  if (!request.body) return "";
  const chunks: Uint8Array[] = [];
  let seen = 0;
  for await (const chunk of request.body as AsyncIterable<Uint8Array>) {
    seen += chunk.byteLength;
    if (seen > max) throw tooLarge(max);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString();
}

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
