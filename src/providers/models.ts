/** A model as an upstream lists it (OpenAI's shape: what /v1/models shows). */
export interface ListedModel {
  id: string;
  owned_by: string;
  created: number;
}

/** A built-in list, written `[id, owned_by, release day]`: the days are the vendors' own. */
export const known = (entries: [id: string, owned_by: string, day: string][]): readonly ListedModel[] =>
  entries.map(([id, owned_by, day]) => ({ id, owned_by, created: Math.floor(Date.parse(day) / 1000) }));
