import { costOf, type PriceOf, type Tokens } from "../usage/prices.ts";
import type { KeyBudget } from "./types.ts";

/** The output a reservation counts when the request sets no max_tokens and the model's maximum is unknown. */
export const DEFAULT_MAX_OUTPUT = 4096;

export interface Charge {
  /** In the budget's unit: US dollars or tokens. */
  amount: number;
  /** A dollar budget and a model without a price: counted as $0, and the usage record should say so. */
  unpriced: boolean;
}

export interface Pricing {
  priceOf: PriceOf;
  /** The model's catalogued output maximum, when known. */
  maxOutputOf?: (model: string) => number | undefined;
}

/**
 * What to reserve before the call: the input estimate plus the most the reply may be (max_tokens,
 * else the model's catalogued maximum, else 4096), in tokens or at the model's price.
 */
export function reservationCharge(budget: KeyBudget, model: string, inputTokens: number, maxTokens: number | undefined, pricing: Pricing): Charge {
  const output = maxTokens ?? pricing.maxOutputOf?.(model) ?? DEFAULT_MAX_OUTPUT;
  return charge(budget, model, { input: inputTokens, output, cacheRead: 0, cacheWrite: 0 }, pricing.priceOf);
}

/** What the call did cost, from the usage the upstream billed: what settles the reservation. */
export function charge(budget: KeyBudget, model: string, tokens: Tokens, priceOf: PriceOf): Charge {
  if (budget.tokens !== undefined) return { amount: tokens.input + tokens.output + tokens.cacheRead + tokens.cacheWrite, unpriced: false };
  const cost = costOf(priceOf(model), tokens);
  return cost === null ? { amount: 0, unpriced: true } : { amount: cost, unpriced: false };
}
