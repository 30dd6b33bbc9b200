import { validationError } from "../../errors.ts";
import type { Part } from "../../ir.ts";
import { isObject, type Json } from "../../lib/read.ts";
import { isSealed, seal, unseal } from "../../lib/seal.ts";

/**
 * What a converted route hands a Responses client to send back (contract 26), sealed in an item's
 * `encrypted_content`: Claude's thinking block with its signature (a reasoning item), so that the
 * next turn gives Claude its own reasoning back exactly; a conversation's summary (a compaction item).
 */
type Sealed = { t: "thinking"; text: string; signature: string } | { t: "redacted"; data: string } | { t: "summary"; text: string };

/** A reasoning item for a reasoning part that can be sent back (signed or redacted); undefined for one that cannot. */
export function reasoningItem(id: string, part: { text: string; signature?: string; redacted?: string }): Json | undefined {
  const sealed: Sealed | undefined = part.redacted
    ? { t: "redacted", data: part.redacted }
    : part.signature ? { t: "thinking", text: part.text, signature: part.signature } : undefined;
  if (!sealed) return undefined;
  return { id, type: "reasoning", summary: part.text ? [{ type: "summary_text", text: part.text }] : [], encrypted_content: seal(sealed) };
}

/**
 * A client's reasoning item as the part it stands for: parley's own, opened; any other (OpenAI's
 * encrypted reasoning, one changed or forged) is reasoning no other model can read, and is left out.
 */
export function reasoningPart(item: Json): Part | undefined {
  const opened = typeof item.encrypted_content === "string" && isSealed(item.encrypted_content) ? open(item.encrypted_content) : undefined;
  if (opened?.t === "thinking") return { type: "reasoning", text: opened.text, signature: opened.signature };
  if (opened?.t === "redacted") return { type: "reasoning", text: "", redacted: opened.data };
  return undefined;
}

export const compactionItem = (id: string, summary: string): Json => ({ id, type: "compaction", encrypted_content: seal({ t: "summary", text: summary } satisfies Sealed) });

/** A compaction item's summary; one parley did not make (or that was changed) is refused: the conversation would lose its start silently. */
export function summaryOf(item: Json, at: string): string {
  const opened = typeof item.encrypted_content === "string" ? open(item.encrypted_content) : undefined;
  if (opened?.t !== "summary") throw validationError(`${at}.encrypted_content`, "is not a compaction this gateway made (or it was changed): send the conversation itself, or compact it again");
  return opened.text;
}

function open(text: string): Sealed | undefined {
  const value = unseal(text);
  return isObject(value) && typeof value.t === "string" ? (value as Sealed) : undefined;
}
