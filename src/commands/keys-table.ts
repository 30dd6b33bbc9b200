/** A key as the admin API lists it: a runtime key, or an env key (`source: "env"`, no id or prefix). */
export interface ListedKey {
  id: string | null;
  source: "runtime" | "env";
  name: string;
  prefix?: string | null;
  scopes: string[];
  models?: string[] | null;
  budget?: { usd?: number; tokens?: number; period: string } | null;
  rpm?: number | null;
  tpm?: number | null;
  expires_at?: number | null;
  disabled?: boolean;
  revoked_at?: number | null;
  created_at?: number;
  last_used_at?: number | null;
  spend?: { unit: "usd" | "tokens"; used: number; reserved: number; limit: number } | null;
}

const HEADINGS = ["NAME", "ID", "PREFIX", "SCOPES", "MODELS", "BUDGET", "SPENT", "EXPIRES", "LAST USED", "STATUS"];

/** `parley keys list`: one line a key, aligned; times in UTC. */
export function keysTable(keys: ListedKey[], now = Date.now()): string {
  if (keys.length === 0) return "No keys yet: parley keys create NAME makes one.\n";
  const rows = [HEADINGS, ...keys.map((key) => [
    key.name, key.id ?? "-", key.prefix ?? "-", key.scopes.join(","), key.models?.join(",") ?? "all",
    budgetText(key.budget), spentText(key.spend), when(key.expires_at), when(key.last_used_at), status(key, now),
  ])];
  const widths = HEADINGS.map((_, i) => Math.max(...rows.map((row) => row[i]!.length)));
  return `${rows.map((row) => row.map((cell, i) => cell.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n")}\n`;
}

/** `parley keys show`: one field a line. */
export function keyDetails(key: ListedKey & Record<string, unknown>, now = Date.now()): string {
  const lines: [string, string][] = [
    ["name", key.name], ["id", key.id ?? "-"], ["source", key.source], ["prefix", key.prefix ?? "-"], ["status", status(key, now)],
    ["scopes", key.scopes.join(", ")], ["models", key.models?.join(", ") ?? "all"],
    ["routes", (key.routes as string[] | null | undefined)?.join(", ") ?? "all"], ["upstreams", (key.upstreams as string[] | null | undefined)?.join(", ") ?? "all"],
    ["budget", budgetText(key.budget)], ["spent", spentText(key.spend)], ["rpm", key.rpm ? String(key.rpm) : "-"], ["tpm", key.tpm ? String(key.tpm) : "-"],
    ["expires", when(key.expires_at)], ["created", when(key.created_at)], ["last used", when(key.last_used_at)],
    ...Object.entries((key.metadata as Record<string, string> | undefined) ?? {}).map(([k, v]): [string, string] => [`metadata.${k}`, v]),
  ];
  const width = Math.max(...lines.map(([label]) => label.length));
  return `${lines.map(([label, value]) => `${label.padEnd(width)}  ${value}`).join("\n")}\n`;
}

function status(key: ListedKey, now: number): string {
  if (key.source === "env") return "env (read-only)";
  if (key.revoked_at) return "revoked";
  if (key.disabled) return "disabled";
  if (key.expires_at && key.expires_at * 1000 <= now) return "expired";
  return "active";
}

const budgetText = (budget: ListedKey["budget"]) =>
  !budget ? "-" : budget.usd !== undefined ? `$${budget.usd}/${budget.period}` : `${budget.tokens!.toLocaleString("en-US")} tokens/${budget.period}`;

function spentText(spend: ListedKey["spend"]): string {
  if (!spend) return "-";
  const amount = (n: number) => (spend.unit === "usd" ? `$${n.toFixed(4)}` : n.toLocaleString("en-US"));
  return spend.reserved > 0 ? `${amount(spend.used)} (+${amount(spend.reserved)} held)` : amount(spend.used);
}

const when = (seconds: number | null | undefined) => (seconds ? new Date(seconds * 1000).toISOString().slice(0, 16).replace("T", " ") : "-");
