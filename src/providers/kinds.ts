import { anthropicKind } from "./anthropic/kind.ts";
import { bedrockKind } from "./bedrock/kind.ts";
import type { Kind, KindName } from "./kind.ts";
import { mockKind } from "./mock/kind.ts";
import { openaiKind } from "./openai/kind.ts";

/** Every kind of upstream: adding one is a folder under src/providers/ and a line here. */
export const KINDS: Record<KindName, Kind> = {
  openai: openaiKind,
  bedrock: bedrockKind,
  anthropic: anthropicKind,
  mock: mockKind,
};

export const isKind = (name: string): name is KindName => Object.hasOwn(KINDS, name);
