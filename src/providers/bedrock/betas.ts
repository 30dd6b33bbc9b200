import { ANTHROPIC_MODELS, foundationModel } from "../anthropic-models.ts";

/**
 * The `anthropic-beta` values Bedrock accepts, by model: Bedrock refuses a request naming one it
 * does not know, and Claude Code sends several that only api.anthropic.com knows
 * (`claude-code-20250219`, `oauth-2025-04-20`, …). BETA_ANTHROPIC_BETAS replaces this list.
 */
const BY_MODEL: [RegExp, string[]][] = [
  [/claude-3-5-sonnet-20241022/, ["computer-use-2024-10-22"]],
  [/claude-3-7-sonnet/, ["computer-use-2025-01-24", "token-efficient-tools-2025-02-19", "output-128k-2025-02-19"]],
  [/claude-(sonnet|opus|haiku)-4/, ["computer-use-2025-01-24", "interleaved-thinking-2025-05-14", "dev-full-thinking-2025-05-14", "fine-grained-tool-streaming-2025-05-14", "context-management-2025-06-27"]],
  [/claude-sonnet-4|claude-opus-4-6/, ["context-1m-2025-08-07"]],
  [/claude-(sonnet|opus)-4-[56]/, ["tool-search-tool-2025-10-19", "tool-examples-2025-10-29"]],
  [/claude-opus-4-[56]/, ["effort-2025-11-24"]],
];

/** Betas of api.anthropic.com's own features (its login, its file store, Claude Code's identity). */
const FIRST_PARTY_ONLY = /^(claude-code-|oauth-|files-api-|mcp-client-|skills-|code-execution-)/;

/** Every model of the table, by Bedrock id: a Claude id outside it is newer than the table. */
const KNOWN = new Set([...ANTHROPIC_MODELS.values()].map((m) => m.bedrock));

/**
 * The header's betas that Bedrock takes for `modelId`, in the client's order. A Claude model newer
 * than the table gets every beta but api.anthropic.com's own: the client, which knows the model,
 * chose them.
 */
export function bedrockBetas(modelId: string, header: string | null | undefined, override?: string[]): string[] {
  if (!header) return [];
  const betas = [...new Set(header.split(",").map((b) => b.trim()).filter(Boolean))];
  if (override) return betas.filter((b) => override.includes(b));
  const foundation = foundationModel(modelId);
  if (/^anthropic\.claude-/.test(foundation) && !KNOWN.has(foundation)) return betas.filter((b) => !FIRST_PARTY_ONLY.test(b));
  const allowed = new Set(BY_MODEL.flatMap(([pattern, list]) => (pattern.test(modelId) ? list : [])));
  return betas.filter((b) => allowed.has(b));
}
