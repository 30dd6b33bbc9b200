import type { Part } from "../../ir.ts";

/**
 * Gemini's `thoughtSignature`: an opaque value on a reply's part that must come back on the same
 * part next turn (Gemini 3 answers 400 when a function call's is missing). Two places keep it:
 *
 * - In the IR, as a reasoning part with no text whose signature is `gemini:<value>`, right before
 *   the part it signs. It travels wherever the client's dialect keeps reasoning (an Anthropic
 *   client's thinking block, with its signature, comes back as it went out); the prefix tells it
 *   from a Claude signature, which Gemini would refuse.
 * - In this process, against the function call's id, for clients whose dialect has no place for it
 *   (Chat Completions): a bounded map, the least recently used dropped first. A call whose value is
 *   in neither (another model's history, a restart, another gateway) gets Gemini's documented
 *   `skip_thought_signature_validator`, so the turn is answered rather than refused.
 */

const PREFIX = "gemini:";
/** Entries kept: a signature is a few hundred bytes to a few KB. */
const CAP = 4096;

export const SKIP_SIGNATURE = "skip_thought_signature_validator";

const byCall = new Map<string, string>();

export function rememberSignature(callId: string, signature: string) {
  byCall.delete(callId);
  byCall.set(callId, signature);
  if (byCall.size > CAP) byCall.delete(byCall.keys().next().value!);
}

export function recalledSignature(callId: string): string | undefined {
  const signature = byCall.get(callId);
  if (signature === undefined) return undefined;
  byCall.delete(callId);
  byCall.set(callId, signature);
  return signature;
}

/** The IR part that carries a signature for the part after it. */
export const signaturePart = (signature: string): Part => ({ type: "reasoning", text: "", signature: PREFIX + signature });

/** The Gemini signature a part carries for the part after it; undefined for any other part. */
export function carriedSignature(part: Part): string | undefined {
  return part.type === "reasoning" && !part.text && !part.redacted && part.signature?.startsWith(PREFIX) ? part.signature.slice(PREFIX.length) : undefined;
}

/** Whether an IR part is only a Gemini signature's carrier: every other family leaves it out. */
export const isSignaturePart = (part: Part) => carriedSignature(part) !== undefined;

/** A signature written to a stream event (the IR's reasoning event carries it as a part does). */
export const signatureEvent = (signature: string) => ({ type: "reasoning" as const, text: "", signature: PREFIX + signature });

/** Gemini 3 and later refuse a function call without its signature. */
export const needsSignatures = (model: string) => Number(/gemini-(\d+)/.exec(model)?.[1] ?? 0) >= 3;
