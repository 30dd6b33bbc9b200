import { closest } from "../lib/did-you-mean.ts";
import type { KeyType } from "../providers/kind.ts";

/** How parley.toml's values are checked, for the upstreams, the routes and their `when`. */

export const isTable = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value);

export function unknownKey(key: string, known: string[], where: string): string {
  const near = closest(key, known);
  return `unknown key '${key}' ${where}${near ? ` (did you mean '${near}'?)` : ""}; known keys: ${known.join(", ")}`;
}

/** What a value should be, when it is not. */
export function typeError(value: unknown, type: KeyType): string | undefined {
  switch (type) {
    case "string":
      return typeof value === "string" ? undefined : "a string";
    case "boolean":
      return typeof value === "boolean" ? undefined : "true or false";
    case "integer":
      return Number.isInteger(value) && (value as number) >= 0 ? undefined : "a whole number";
    case "strings":
      return Array.isArray(value) && value.every((v) => typeof v === "string") ? undefined : "an array of strings";
    case "table":
      return isTable(value) && Object.values(value).every((v) => typeof v === "string") ? undefined : "a table of strings";
  }
}
