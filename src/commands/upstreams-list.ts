import { loadConfig } from "../config.ts";
import { openDatabase } from "../lib/db.ts";
import { createLogger } from "../log.ts";
import { createDiscovery, type Listing } from "../routing/discovery.ts";
import { KINDS, missing } from "../providers/kinds.ts";
import { exitOnConfigError } from "./fail.ts";
import { hideSecrets } from "./hide-secrets.ts";

interface Row {
  name: string;
  kind: string;
  where: string;
  status: "configured" | "not_configured";
  /** What to set before parley can call it. */
  missing?: string;
  /** How many models it serves as far as parley knows (asked live, else the cached or built-in list); null when unknown. */
  models: number | null;
  models_source: Listing["source"] | null;
  /** Why the count is unknown: "discovery off" or "discovery failed". */
  models_note?: string;
}

/** One line per upstream; the model counts are asked live, as `parley models` does. Secrets are never printed. */
export function listUpstreams({ json }: { json: boolean }): Promise<void> {
  return exitOnConfigError(async () => {
    const { config, upstreamsFile } = loadConfig();
    const { upstreams } = config.upstreams;
    const db = openDatabase(config.dataDir);
    const discovery = createDiscovery({ config, database: () => db, log: createLogger("silent"), upstreams: () => upstreams });
    await discovery.refresh();
    const rows = upstreams.map((u): Row => {
      const lacking = missing(u);
      const found = lacking ? undefined : discovery.of(u);
      return {
        name: u.name,
        kind: u.kind,
        where: hideSecrets(u, KINDS[u.kind].where(u.settings)),
        status: lacking ? "not_configured" : "configured",
        ...(lacking ? { missing: lacking } : {}),
        models: found ? found.models.length : null,
        models_source: found ? found.source : null,
        ...(!lacking && !found ? { models_note: u.discover ? "discovery failed" : "discovery off" } : {}),
      };
    });
    db.close();
    if (json) return void process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    // A file that declares upstreams says what the user set up: the spec's alpha and beta, which the
    // variables always declare, are shown only when configured (a note says they are left out).
    const declaresAll = upstreams.some((u) => u.origin.file);
    const unset = declaresAll ? upstreams.filter((u) => u.origin.variables && missing(u)).map((u) => u.name) : [];
    const note = unset.length ? `# not configured, not shown: ${unset.join(", ")} (set ${unset.map((n) => `${n.toUpperCase()}_*`).join(" or ")} to use ${unset.length > 1 ? "them" : "it"})\n` : "";
    process.stdout.write(`${upstreamsFile ? `# upstreams file: ${upstreamsFile}\n` : ""}${table(rows.filter((r) => !unset.includes(r.name)))}${note}`);
  });
}

function table(rows: Row[]): string {
  const cells = rows.map((r) => [
    r.name,
    r.kind,
    r.where || "-",
    r.models === null ? (r.models_note ? `- (${r.models_note})` : "-") : `${r.models} (${r.models_source})`,
    r.missing ? `not configured: ${r.missing}` : "configured",
  ]);
  // The status goes last: what is missing is a sentence, and the columns before it stay aligned.
  const head = ["NAME", "KIND", "URL OR REGION", "MODELS", "STATUS"];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((cell, i) => (i === c.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ");
  return `${[head, ...cells].map(line).join("\n")}\n`;
}
