import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { ConfigError } from "../config.ts";
import BUILT_IN from "./prices.json" with { type: "json" };

/** US dollars per million tokens. A missing cache price is the input price. */
export interface Price {
  input: number;
  output: number;
  cache_read?: number;
  cache_write?: number;
}

/** Tokens as billed: `input` excludes what was read from or written to the cache. */
export interface Tokens {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
}

export type PriceOf = (model: string) => Price | undefined;

/** The price of an upstream that charges nothing (the mock). */
export const FREE: Price = { input: 0, output: 0, cache_read: 0, cache_write: 0 };

const FIELDS = ["input", "output", "cache_read", "cache_write"] as const;

/**
 * The built-in price table with `PARLEY_CONFIG_DIR/prices.json` laid over it entry by entry. A key
 * is a model id or a glob (`*` matches anything); an exact id wins, then the glob with the most
 * literal characters, so `gpt-4o-mini*` beats `gpt-4o-*`.
 */
export function loadPrices(configDir: string): PriceOf {
  const table = new Map<string, Price>(Object.entries(BUILT_IN as Record<string, Price>));
  for (const [pattern, price] of Object.entries(readOverrides(join(configDir, "prices.json")))) table.set(pattern, price);
  const globs = [...table.entries()]
    .filter(([pattern]) => pattern.includes("*"))
    .sort(([a], [b]) => b.replaceAll("*", "").length - a.replaceAll("*", "").length)
    .map(([pattern, price]) => ({ test: globTest(pattern), price }));
  const found = new Map<string, Price | undefined>();
  return (model) => {
    if (found.has(model)) return found.get(model);
    const price = table.get(model) ?? globs.find((glob) => glob.test(model))?.price;
    // Model ids come from clients: remember a bounded number of answers.
    if (found.size < 10_000) found.set(model, price);
    return price;
  };
}

/** What the tokens cost, or null when the model has no price (unknown is not free). */
export function costOf(price: Price | undefined, tokens: Tokens): number | null {
  if (!price) return null;
  const perMillion =
    tokens.input * price.input +
    tokens.output * price.output +
    tokens.cacheRead * (price.cache_read ?? price.input) +
    tokens.cacheWrite * (price.cache_write ?? price.input);
  return perMillion / 1_000_000;
}

function readOverrides(path: string): Record<string, Price> {
  if (!existsSync(path)) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    throw new ConfigError(`${path} is not valid JSON (${(error as Error).message})`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) throw new ConfigError(`${path} must be a JSON object: {"<model id or glob>": {"input": 3, "output": 15, …}}`);
  for (const [pattern, price] of Object.entries(parsed)) {
    const problem = checkPrice(price);
    if (problem) throw new ConfigError(`${path}: "${pattern}" ${problem}`);
  }
  return parsed as Record<string, Price>;
}

function checkPrice(price: unknown): string | undefined {
  if (typeof price !== "object" || price === null || Array.isArray(price)) return "must be an object of US dollars per million tokens";
  for (const [field, value] of Object.entries(price)) {
    if (!(FIELDS as readonly string[]).includes(field)) return `has an unknown field "${field}" (allowed: ${FIELDS.join(", ")})`;
    if (typeof value !== "number" || !(value >= 0)) return `has ${field}=${JSON.stringify(value)}: expected a number of US dollars per million tokens, 0 or more`;
  }
  if (!("input" in price) || !("output" in price)) return "needs at least input and output";
}

function globTest(pattern: string): (model: string) => boolean {
  const regex = new RegExp(`^${pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*")}$`);
  return (model) => regex.test(model);
}
