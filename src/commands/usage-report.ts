import { defineCommand } from "citty";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../lib/db.ts";
import { createLogger } from "../log.ts";
import { openUsageStore } from "../usage/service.ts";
import { GROUPINGS, isGrouping, parseSince, SINCE_HELP, type UsageRow, type UsageSummary } from "../usage/summary.ts";
import { exitOnConfigError, exitUsage } from "./fail.ts";

export default defineCommand({
  meta: { name: "usage", description: "What was used and what it cost, from the usage records (DATABASE_URL's, else this machine's)" },
  subCommands: { import: () => import("./usage-import.ts").then((m) => m.default) },
  args: {
    since: { type: "string", default: "7d", description: `from when: ${SINCE_HELP}` },
    by: { type: "string", default: "model", description: `group by ${GROUPINGS.join(", ")}` },
    json: { type: "boolean", description: "print the JSON of GET /v1/usage instead of a table" },
  },
  run: ({ args, rawArgs }) =>
    exitOnConfigError(async () => {
      // citty runs this after a sub-command too.
      if (rawArgs[0] === "import") return;
      const since = parseSince(args.since);
      if (since === undefined) exitUsage(`--since ${JSON.stringify(args.since)} is not a time: use ${SINCE_HELP}`);
      if (!isGrouping(args.by)) exitUsage(`--by ${JSON.stringify(args.by)}: use one of ${GROUPINGS.join(", ")}`);
      const { config } = loadConfig();
      const db = config.databaseUrl ? undefined : openDatabase(config.dataDir);
      const store = openUsageStore(config, () => db!, createLogger("silent"));
      const data = await store.summarize(since, args.by).catch((error: Error) => {
        process.stderr.write(`parley: the usage database cannot be read: ${error.message}\n`);
        process.exit(1);
      });
      const summary: UsageSummary = { object: "list", since, by: args.by, data };
      await store.close();
      db?.close();
      process.stdout.write(args.json ? `${JSON.stringify(summary)}\n` : table(summary));
    }),
});

const HEADINGS = ["requests", "input", "output", "cache read", "cache write", "cost (USD)"];

/** The summary as aligned columns, with a total line; a cost no request had a price for is "-". */
export function table(summary: UsageSummary): string {
  const since = new Date(summary.since * 1000).toISOString().replace("T", " ").slice(0, 16);
  if (summary.data.length === 0) return `No usage since ${since} UTC.\n`;
  const total: UsageRow = summary.data.reduce((sum, row) => ({
    group: "total",
    requests: sum.requests + row.requests,
    input_tokens: sum.input_tokens + row.input_tokens,
    output_tokens: sum.output_tokens + row.output_tokens,
    cache_read_tokens: sum.cache_read_tokens + row.cache_read_tokens,
    cache_write_tokens: sum.cache_write_tokens + row.cache_write_tokens,
    cost_usd: row.cost_usd === null ? sum.cost_usd : (sum.cost_usd ?? 0) + row.cost_usd,
  }), { group: "total", requests: 0, input_tokens: 0, output_tokens: 0, cache_read_tokens: 0, cache_write_tokens: 0, cost_usd: null });
  const cells = (row: UsageRow) => [
    row.group ?? "(none)",
    ...[row.requests, row.input_tokens, row.output_tokens, row.cache_read_tokens, row.cache_write_tokens].map((n) => n.toLocaleString("en-US")),
    row.cost_usd === null ? "-" : `$${row.cost_usd.toFixed(4)}`,
  ];
  const rows = [[summary.by, ...HEADINGS], ...summary.data.map(cells), cells(total)];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((cell, i) => (i === 0 ? cell.padEnd(widths[i]!) : cell.padStart(widths[i]!))).join("  ").trimEnd();
  const rule = widths.map((w) => "-".repeat(w)).join("  ");
  const body = rows.slice(1, -1).map(line);
  return `Usage since ${since} UTC, by ${summary.by}\n${line(rows[0]!)}\n${rule}\n${body.join("\n")}\n${rule}\n${line(rows.at(-1)!)}\n`;
}
