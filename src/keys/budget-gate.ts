import type { Price, Tokens } from "../usage/prices.ts";
import { charge, reservationCharge, type Pricing } from "./charge.ts";
import type { BudgetLedger, Reserved } from "./ledger.ts";
import type { ActiveKey } from "./lookup.ts";
import type { KeyBudget } from "./types.ts";

/** A request's hold on its key's budget: settled once, with what the call cost. */
export interface Hold {
  /** The reservation was counted at $0: the model has no price. */
  unpriced: boolean;
  /**
   * `model` is the one that answered (after fallbacks); null tokens: the call cost nothing it
   * reported. `price`, when given, is the one the usage record used (FREE for a free upstream).
   */
  settle(model: string, tokens: Tokens | null, price?: Price): Promise<void>;
}

export type Admission =
  | { ok: true; hold: Hold | undefined }
  | { ok: false; message: string; details: string; retryAfter: number };

/**
 * Before a call: reserve what it may cost against the key's budget, or say why not (a 429 with
 * Retry-After to the period's end). After it: settle with the real usage. Keys without a budget
 * pass with no hold.
 */
export function createBudgetGate(ledger: BudgetLedger, pricing: Pricing) {
  return async function admit(key: ActiveKey, model: string, inputTokens: number, maxTokens: number | undefined, now = Date.now()): Promise<Admission> {
    const budget = key.budget;
    if (!budget) return { ok: true, hold: undefined };
    const { amount, unpriced } = reservationCharge(budget, model, inputTokens, maxTokens, pricing);
    const reserved = await ledger.reserve(key.id, budget, amount, now);
    if (!reserved.ok) return refusal(key, budget, reserved, now);
    let settled = false;
    return {
      ok: true,
      hold: {
        unpriced,
        async settle(answered, tokens, price) {
          if (settled) return;
          settled = true;
          const priceOf = price ? () => price : pricing.priceOf;
          await ledger.settle(reserved.reservation, tokens ? charge(budget, answered, tokens, priceOf).amount : 0);
        },
      },
    };
  };
}

export type BudgetGate = ReturnType<typeof createBudgetGate>;

function refusal(key: ActiveKey, budget: KeyBudget, over: Extract<Reserved, { ok: false }>, now: number): Admission {
  const amount = (n: number) => (over.unit === "usd" ? `$${n.toFixed(4)}` : `${n.toLocaleString("en-US")} tokens`);
  const limit = over.unit === "usd" ? `$${budget.usd} a ${budget.period}` : `${budget.tokens!.toLocaleString("en-US")} tokens a ${budget.period}`;
  const resets = new Date(over.resets_at * 1000).toISOString().slice(0, 16).replace("T", " ");
  const message = over.needed > over.limit
    ? `This request may cost up to ${amount(over.needed)}, more than the whole budget of key '${key.label}' (${limit}): lower max_tokens.`
    : `Budget of key '${key.label}' (${limit}) is used up: ${amount(over.used)} spent, ${amount(over.reserved)} held by requests in flight, this request needs up to ${amount(over.needed)}; it resets at ${resets} UTC.`;
  const retryAfter = Math.max(1, over.resets_at - Math.floor(now / 1000));
  return { ok: false, message, details: `budget: retry after ${retryAfter} seconds`, retryAfter };
}
