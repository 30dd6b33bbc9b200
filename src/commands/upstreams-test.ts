import { defineCommand } from "citty";
import { loadConfig, type Config } from "../config.ts";
import { closest } from "../lib/did-you-mean.ts";
import { GatewayError } from "../errors.ts";
import type { ChatRequest } from "../ir.ts";
import type { Upstream } from "../providers/kind.ts";
import { KINDS, missing } from "../providers/kinds.ts";
import { createProviders } from "../providers/registry.ts";
import { exitOnConfigError, exitUsage } from "./fail.ts";
import { hideSecrets } from "./hide-secrets.ts";

const QUESTION: ChatRequest = {
  system: [],
  messages: [{ role: "user", content: [{ type: "text", text: "Say hello in five words." }] }],
  maxTokens: 16,
  stream: false,
  includeUsage: false,
  fileIds: [],
};

/**
 * One short chat straight to one upstream, with no routing, retry or fallback between: whether its
 * URL, credentials and model work. Exit 0 when it answered, 1 when the call failed, 2 when it cannot be made.
 */
export default defineCommand({
  meta: { name: "test", description: "Send one short chat (16 tokens at most) straight to one upstream: status, latency and the first words" },
  args: {
    name: { type: "positional", required: true, description: "the upstream's name (see parley upstreams)" },
    model: { type: "string", alias: "m", description: "the model id to ask (default: the upstream's first listed or discovered model)" },
  },
  run: ({ args }) =>
    exitOnConfigError(async () => {
      const { config } = loadConfig();
      const { upstreams } = config.upstreams;
      const upstream = upstreams.find((u) => u.name === args.name);
      if (!upstream) {
        const names = upstreams.map((u) => u.name);
        const near = closest(args.name, names);
        return exitUsage(`no upstream is named '${args.name}'${near ? `; did you mean '${near}'?` : ""} (upstreams: ${names.join(", ")})`);
      }
      const lacking = missing(upstream);
      if (lacking) exitUsage(`the upstream '${upstream.name}' (${upstream.kind}) is not configured: ${lacking}`);
      const requested = args.model ?? (await firstModel(upstream, config));
      const model = KINDS[upstream.kind].modelFor?.(requested, upstream.settings) ?? requested;
      const where = hideSecrets(upstream, `${upstream.name} (${upstream.kind}, ${KINDS[upstream.kind].where(upstream.settings)}), model ${model}`);

      const started = performance.now();
      const ms = () => `${Math.round(performance.now() - started)} ms`;
      try {
        const provider = await createProviders(upstreams)(upstream.name);
        const reply = await provider.complete({ ...QUESTION, model }, model, AbortSignal.timeout(upstream.timeoutMs));
        const text = reply.content.flatMap((p) => (p.type === "text" ? [p.text] : [])).join("");
        const tokens = reply.usage ? `, ${reply.usage.input.total} → ${reply.usage.output} tokens` : "";
        process.stdout.write(hideSecrets(upstream, `${where}: ok in ${ms()} (finish: ${reply.finish.reason}${tokens})\n  ${firstWords(text) || "(no text)"}\n`));
      } catch (error) {
        process.stderr.write(hideSecrets(upstream, `parley: ${where}: failed after ${ms()}${failure(error)}\n`));
        process.exit(1);
      }
    }),
});

/** The upstream's own list, else what discovery finds (live, cached or built in). */
async function firstModel(upstream: Upstream, config: Config): Promise<string> {
  const listed = upstream.models?.[0];
  if (listed) return listed;
  const [{ openDatabase }, { createDiscovery }, { createLogger }] = await Promise.all([import("../lib/db.ts"), import("../routing/discovery.ts"), import("../log.ts")]);
  const db = openDatabase(config.dataDir);
  const discovery = createDiscovery({ config, database: () => db, log: createLogger("silent"), upstreams: () => [upstream] });
  await discovery.refresh();
  const found = discovery.of(upstream)?.models[0]?.id;
  db.close();
  return found ?? exitUsage(`the upstream '${upstream.name}' lists no models (its discovery failed or is off): pass --model ID`);
}

/** The status the upstream answered with, parley's message, and the upstream's own words when that does not quote them. */
function failure(error: unknown): string {
  if (!(error instanceof GatewayError)) return `: ${error instanceof Error ? error.message : String(error)}`;
  const status = error.upstreamStatus ? ` (HTTP ${error.upstreamStatus})` : "";
  const said = error.upstream && !error.message.includes(error.upstream) ? ` The upstream said: ${firstWords(error.upstream, 300)}` : "";
  return `${status}: ${error.message}${said}`;
}

/** The answer's start, on one line. */
function firstWords(text: string, max = 80): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length <= max ? line : `${line.slice(0, max).replace(/\s+\S*$/, "")}…`;
}
