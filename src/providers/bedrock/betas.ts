/**
 * The `anthropic-beta` values Bedrock accepts, by model: Bedrock refuses a request naming one it
 * does not know, and Claude Code sends several that only api.anthropic.com knows
 * (`claude-code-20250219`, `oauth-2025-04-20`, …). BETA_ANTHROPIC_BETAS replaces this list.
 */
const BY_MODEL: [RegExp, string[]][] = [
  [/claude-3-5-sonnet-20241022/, ["computer-use-2024-10-22"]],
  [/claude-3-7-sonnet/, ["computer-use-2025-01-24", "token-efficient-tools-2025-02-19", "output-128k-2025-02-19"]],
  [/claude-(sonnet|opus|haiku)-4/, ["computer-use-2025-01-24", "interleaved-thinking-2025-05-14", "dev-full-thinking-2025-05-14", "fine-grained-tool-streaming-2025-05-14", "context-management-2025-06-27"]],
  [/claude-sonnet-4(-5|-6)?[-v.]|claude-sonnet-4$/, ["context-1m-2025-08-07"]],
  [/claude-(sonnet-4-5|opus-4-5|opus-4-6|sonnet-4-6)/, ["tool-search-tool-2025-10-19", "tool-examples-2025-10-29"]],
  [/claude-opus-4-(5|6)/, ["effort-2025-11-24"]],
];

/** The header's betas that Bedrock takes for `modelId`, in the client's order. */
export function bedrockBetas(modelId: string, header: string | null | undefined, override?: string[]): string[] {
  if (!header) return [];
  const allowed = new Set(override ?? BY_MODEL.flatMap(([pattern, betas]) => (pattern.test(modelId) ? betas : [])));
  return [...new Set(header.split(",").map((b) => b.trim()))].filter((b) => allowed.has(b));
}
