import type { Database } from "bun:sqlite";
import { createUsageTable } from "./recorder.ts";

export const GROUPINGS = ["model", "upstream", "key", "day", "tag", "route", "session"] as const;
export type Grouping = (typeof GROUPINGS)[number];

export interface UsageRow {
  group: string | null;
  requests: number;
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** The sum of the priced requests; null when none of the group's requests had a price. */
  cost_usd: number | null;
}

export interface UsageSummary {
  object: "list";
  since: number;
  by: Grouping;
  data: UsageRow[];
}

const GROUP_SQL: Record<Grouping, string> = {
  model: "model",
  upstream: "provider",
  key: "key_label",
  day: "strftime('%Y-%m-%d', time / 1000, 'unixepoch')",
  tag: "tag",
  // A request no file route matched is grouped as "-", as one that reached no upstream is by upstream.
  route: "COALESCE(route, '-')",
  session: "session",
};

/** Usage since a moment (Unix seconds), one row per group: days in order, the rest busiest first. */
export function summarize(db: Database, since: number, by: Grouping): UsageSummary {
  createUsageTable(db);
  const order = by === "day" ? "\"group\" ASC" : "requests DESC, \"group\" ASC";
  const data = db.query<UsageRow, { since: number }>(`SELECT ${GROUP_SQL[by]} AS "group", COUNT(*) AS requests,
      COALESCE(SUM(input_tokens), 0) AS input_tokens, COALESCE(SUM(output_tokens), 0) AS output_tokens,
      COALESCE(SUM(cache_read_tokens), 0) AS cache_read_tokens, COALESCE(SUM(cache_write_tokens), 0) AS cache_write_tokens,
      SUM(cost_usd) AS cost_usd
    FROM usage WHERE time >= $since GROUP BY 1 ORDER BY ${order}`).all({ since: since * 1000 });
  return { object: "list", since, by, data: data.map((row) => ({ ...row, cost_usd: row.cost_usd === null ? null : round(row.cost_usd) })) };
}

/** Ten decimals: sums of floats otherwise print as 0.30000000000000004. */
const round = (usd: number) => Number(usd.toFixed(10));

/**
 * `7d`, `12h`, `30m`, a date (`2026-01-31`, UTC midnight) or Unix seconds, as Unix seconds;
 * undefined when it is none of these.
 */
export function parseSince(value: string, now = Date.now()): number | undefined {
  const relative = /^(\d{1,6})([dhm])$/.exec(value);
  if (relative) {
    const unit = { d: 86_400, h: 3600, m: 60 }[relative[2] as "d" | "h" | "m"];
    return Math.floor(now / 1000) - Number(relative[1]) * unit;
  }
  if (/^\d{4}-\d{2}-\d{2}$/.test(value) && !Number.isNaN(Date.parse(value))) return Date.parse(value) / 1000;
  if (/^\d{1,12}$/.test(value)) return Number(value);
}

export const SINCE_HELP = "7d, 12h, 30m, a date such as 2026-01-31 (UTC), or Unix seconds";

export const isGrouping = (value: string): value is Grouping => (GROUPINGS as readonly string[]).includes(value);
