import { invalidRequest } from "../errors.ts";
import { anthropicMessages } from "./anthropic/codec.ts";
import type { Codec } from "./codec.ts";
import { openaiChat } from "./openai-chat/codec.ts";
import { isObject, type Json } from "../lib/read.ts";
import { titanText } from "./titan/codec.ts";

/** The spec's format names, mapped onto the wire formats they stand for. */
export type FormatName = "alpha" | "beta_messages" | "beta_textgen";

export const CODECS: Record<FormatName, Codec> = {
  alpha: openaiChat,
  beta_messages: anthropicMessages,
  beta_textgen: titanText,
};

const NAMES: Record<string, FormatName> = {
  alpha: "alpha", openai: "alpha",
  beta_messages: "beta_messages", anthropic: "beta_messages", bedrock_claude: "beta_messages",
  beta_textgen: "beta_textgen", titan: "beta_textgen", bedrock_titan: "beta_textgen",
};

export function formatName(value: string): FormatName {
  const name = Object.hasOwn(NAMES, value) ? NAMES[value] : undefined;
  if (!name) throw invalidRequest(`Unknown target_format '${value}'.`, `target_format: one of ${Object.keys(NAMES).join(", ")}`);
  return name;
}

const ANTHROPIC_BLOCKS = new Set(["image", "tool_use", "tool_result"]);

/** The contract's detection rules, first match wins. */
export function detectFormat(body: Json): FormatName {
  if ("inputText" in body) return "beta_textgen";
  if ("vendor_version" in body || "anthropic_version" in body) return "beta_messages";
  if ("system" in body || "stop_sequences" in body || "top_k" in body) return "beta_messages";
  if (Array.isArray(body.tools) && body.tools.some((t) => isObject(t) && "input_schema" in t)) return "beta_messages";
  if (isObject(body.tool_choice) && "type" in body.tool_choice && !("function" in body.tool_choice)) return "beta_messages";
  for (const m of Array.isArray(body.messages) ? body.messages : []) {
    if (!isObject(m) || !Array.isArray(m.content)) continue;
    for (const b of m.content) if (isObject(b) && ANTHROPIC_BLOCKS.has(b.type as string)) return "beta_messages";
  }
  return "alpha";
}
