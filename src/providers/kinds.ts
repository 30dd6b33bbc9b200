/** The table of kinds, and what the rest of parley asks of an upstream through its kind. */
import { anthropicKind } from "./anthropic/kind.ts";
import { bedrockKind } from "./bedrock/kind.ts";
import { geminiKind } from "./gemini/kind.ts";
import type { Kind, KindName, Upstream } from "./kind.ts";
import { mockKind } from "./mock/kind.ts";
import { openaiKind } from "./openai/kind.ts";
import { vertexKind } from "./vertex/kind.ts";

// Every kind of upstream: adding one is a folder under src/providers/ and a line here. The order is
// the fallback order for ids a kind shares (`sharesIds`): gemini-* to Gemini's API, then Vertex.
const TABLE = {
  openai: openaiKind,
  bedrock: bedrockKind,
  anthropic: anthropicKind,
  gemini: geminiKind,
  vertex: vertexKind,
  mock: mockKind,
};

type Table = typeof TABLE;

// KindName (kind.ts) is the keys of this table.
declare module "./kind.ts" {
  interface KindTable extends Table {}
}

export const KINDS: Record<KindName, Kind> = TABLE;

export const isKind = (name: string): name is KindName => Object.hasOwn(KINDS, name);

/** The kinds an upstreams file may declare: all but the built-in ones (the mock), in the table's order. */
export const DECLARABLE: readonly KindName[] = (Object.keys(KINDS) as KindName[]).filter((k) => !KINDS[k].builtIn);

/** What keeps an upstream from being called, or undefined when it can be. */
export const missing = (upstream: Upstream): string | undefined => KINDS[upstream.kind].missing(upstream);
