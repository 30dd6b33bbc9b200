import { ANTHROPIC_MODELS } from "../anthropic-models.ts";

/**
 * Vertex names Claude models `claude-sonnet-4-5@20250929` where Anthropic writes
 * `claude-sonnet-4-5-20250929` (and Claude Sonnet 3.5 v2 `claude-3-5-sonnet-v2@20241022`); the
 * newest, undated ones alike on both. Both ways: an Anthropic name to Vertex, a Vertex client's to
 * the others.
 */

const DATED = /^(claude-[a-z0-9.-]+?)-(\d{8})$/;
const VERTEX = /^(claude-[a-z0-9.-]+?)@(\d{8})$/;

export function toVertexId(model: string): string {
  const dated = ANTHROPIC_MODELS.get(model)?.aliasOf ?? model;
  if (dated === "claude-3-5-sonnet-20241022") return "claude-3-5-sonnet-v2@20241022";
  const match = DATED.exec(dated);
  return match ? `${match[1]}@${match[2]}` : model;
}

export function fromVertexId(model: string): string {
  const match = VERTEX.exec(model);
  if (!match) return model;
  const name = match[1] === "claude-3-5-sonnet-v2" ? "claude-3-5-sonnet" : match[1];
  return `${name}-${match[2]}`;
}

export const isClaude = (model: string) => model.startsWith("claude-");
