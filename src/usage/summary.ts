export const GROUPINGS = ["model", "upstream", "key", "day", "tag", "route", "session"] as const;
export type Grouping = (typeof GROUPINGS)[number];

/** `bucket=hour|day`: one row per bucket and group (contract 20's plots), from the rollups. */
export const BUCKETS = ["hour", "day"] as const;
export type Bucket = (typeof BUCKETS)[number];
export const isBucket = (value: string): value is Bucket => (BUCKETS as readonly string[]).includes(value);

export interface UsageRow {
  /** With a bucket: Unix seconds of the bucket's start (UTC). */
  start?: number;
  group: string | null;
  requests: number;
  /** With a bucket: requests that did not end well (an error status, a broken or cancelled stream), for the error rate. */
  errors?: number;
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
  bucket?: Bucket;
  data: UsageRow[];
}

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
