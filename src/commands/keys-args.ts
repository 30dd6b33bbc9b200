import { exitUsage } from "./fail.ts";

/** The flags that set a key's fields, shared by `keys create` and `keys update`. */
export const FIELD_ARGS = {
  scopes: { type: "string", description: "what it may do, comma-separated: chat, models, files:read, files:write, usage, metrics, admin (default chat,models)" },
  models: { type: "string", description: "globs of the models it may call, comma-separated ('claude-*,gpt-4o'); none: all" },
  routes: { type: "string", description: "names of the routes it may use, comma-separated; none: all" },
  upstreams: { type: "string", description: "names of the upstreams it may reach, comma-separated; none: all" },
  budget: { type: "string", description: "5usd/day, 200000tokens/week, 20usd/month" },
  rpm: { type: "string", description: "requests per minute, in place of RATE_LIMIT_RPM" },
  tpm: { type: "string", description: "tokens per minute" },
  expires: { type: "string", description: "when it stops: in 30d, 12h, 90m, or on a date (2027-01-31)" },
  meta: { type: "string", description: "metadata, comma-separated key=value pairs (team=web,owner=ana)" },
} as const;

/** Words that clear a field with `keys update` (`--budget none`, `--expires never`). */
const CLEAR = new Set(["none", "all", "never"]);

export type FieldFlags = { [K in keyof typeof FIELD_ARGS]?: string };

/** The flags given, as the admin API's fields; `update` may clear one with none/all/never. */
export function fieldsFromFlags(flags: FieldFlags, clearing: boolean, now = Date.now()): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(flags) as [keyof FieldFlags, string | undefined][]) {
    if (value === undefined || !Object.hasOwn(FIELD_ARGS, name)) continue;
    if (clearing && CLEAR.has(value) && name !== "scopes") {
      body[name === "meta" ? "metadata" : name === "expires" ? "expires_at" : name] = name === "meta" ? {} : null;
      continue;
    }
    switch (name) {
      case "scopes":
      case "models":
      case "routes":
      case "upstreams":
        body[name] = list(value);
        break;
      case "budget":
        body.budget = parseBudget(value) ?? exitUsage(`--budget ${JSON.stringify(value)}: use <N>usd/<period> or <N>tokens/<period>, the period day, week or month (5usd/day)`);
        break;
      case "rpm":
      case "tpm":
        body[name] = /^[1-9]\d*$/.test(value) ? Number(value) : exitUsage(`--${name} ${JSON.stringify(value)}: a whole number above 0`);
        break;
      case "expires":
        body.expires_at = parseExpiry(value, now) ?? exitUsage(`--expires ${JSON.stringify(value)}: use a duration (30d, 12h, 90m, 45s) or a date (2027-01-31)`);
        break;
      case "meta":
        body.metadata = parseMeta(value) ?? exitUsage(`--meta ${JSON.stringify(value)}: use key=value pairs, comma-separated`);
        break;
    }
  }
  return body;
}

const list = (value: string) => value.split(",").map((s) => s.trim()).filter(Boolean);

export function parseBudget(value: string): Record<string, unknown> | undefined {
  const match = /^(\d+(?:\.\d+)?)\s*(usd|tokens)\s*\/\s*(day|week|month)$/i.exec(value.trim());
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = match[2]!.toLowerCase();
  if (!(amount > 0) || (unit === "tokens" && !Number.isInteger(amount))) return undefined;
  return { [unit]: amount, period: match[3]!.toLowerCase() };
}

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 };

/** Seconds in `30d`, `12h`, `90m`, `45s`, `2w`; undefined when it is not one. */
export function parseDuration(value: string): number | undefined {
  const match = /^(\d+)\s*([smhdw])$/.exec(value.trim());
  return match ? Number(match[1]) * UNITS[match[2]!]! : undefined;
}

/** Unix seconds: now plus a duration, or a date (its 00:00 UTC) or time in ISO form, in the future. */
export function parseExpiry(value: string, now = Date.now()): number | undefined {
  const duration = parseDuration(value);
  if (duration !== undefined) return duration > 0 ? Math.floor(now / 1000) + duration : undefined;
  if (!/^\d{4}-\d{2}-\d{2}/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isFinite(at) && at > now ? Math.floor(at / 1000) : undefined;
}

function parseMeta(value: string): Record<string, string> | undefined {
  const pairs = list(value).map((pair) => {
    const at = pair.indexOf("=");
    return at > 0 ? [pair.slice(0, at).trim(), pair.slice(at + 1).trim()] : undefined;
  });
  return pairs.every(Boolean) ? Object.fromEntries(pairs as [string, string][]) : undefined;
}
