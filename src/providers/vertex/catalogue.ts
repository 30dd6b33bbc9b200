import { ANTHROPIC_MODELS } from "../anthropic-models.ts";
import type { ListedModel } from "../models.ts";
import { toVertexId } from "./model-ids.ts";

/**
 * Vertex has no list of what a project may call (its Model Garden lists publishers' models, not
 * a project's access): what /v1/models shows for a Vertex upstream that lists none of its own.
 * Claude's dated models by their Vertex ids, and Gemini's current ones. Any id that routes can be
 * called, listed or not.
 */
const GEMINI = ["gemini-3-pro-preview", "gemini-3-flash-preview", "gemini-2.5-pro", "gemini-2.5-flash", "gemini-2.5-flash-lite", "gemini-2.0-flash", "gemini-embedding-001", "text-embedding-005"];

export const VERTEX_CATALOGUE: readonly ListedModel[] = [
  ...[...ANTHROPIC_MODELS].filter(([, m]) => !m.aliasOf).map(([name, m]) => ({ id: toVertexId(name), owned_by: "anthropic", created: Math.floor(Date.parse(m.released) / 1000) })),
  ...GEMINI.map((id) => ({ id, owned_by: "google", created: 0 })),
];
