import type { KindName } from "./kind.ts";
import { KINDS } from "./kinds.ts";
import type { ListedModel } from "./models.ts";

/** The built-in list of a kind's models: what /v1/models shows for the spec's upstreams when discovery has nothing. */
export function catalogue(kind: KindName): ListedModel[] {
  return (KINDS[kind].catalogue ?? []).map((m) => ({ ...m }));
}
