/**
 * `bun scripts/bench/routes.ts [DIR] [--n 2000000]`: what the router costs per request, in ns, with no
 * file routes and with ten routes whose conditions need no token count (contract 15): a direct
 * measure, steadier than a whole-request bench on a shared machine. Each case routes the same
 * chat (gpt-4o-mini, from /v1/chat/completions, key main) that ends at the built-in names of kind
 * openai, so every route is passed over:
 *
 * - none: no `[[routes]]` (the router as before `when`);
 * - ten globs: ten routes whose `match` does not match;
 * - ten recipes: ten routes as docs/upstreams.md's recipes write them, a glob and a condition or
 *   two each (five without a glob, so their conditions are read);
 * - ten whens: ten routes with no `match` whose `when` fails only at its last condition, every
 *   cheap condition read (stream, endpoint, key, tools, thinking, two headers, images): the worst case;
 * - one token count: one route with `input_tokens_over` (for scale: the estimate is the cost).
 *
 * Rounds alternate the cases; the fastest and the median round are reported (on a busy machine the
 * fastest is the steadier measure of the work itself). DIR (default: this checkout) is a
 * parley checkout to measure: one from before `when` runs the cases it can read (none, ten globs).
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import type { Facts } from "../../src/routing/when.ts";

const { values, positionals } = parseArgs({ args: Bun.argv.slice(2), allowPositionals: true, options: { n: { type: "string", default: "2000000" }, rounds: { type: "string", default: "7" } } });
const root = resolve(positionals[0] ?? join(import.meta.dir, "../.."));
/** A module of the checkout measured, where this tree keeps it or where older trees did. */
const source = (...paths: string[]) => import(join(root, paths.find((p) => existsSync(join(root, p))) ?? paths[0]!));
const { openaiChat } = await source("src/wire/openai-chat/codec.ts", "src/formats/openai-chat.ts");
const { createRouter } = await source("src/routing/routes.ts", "src/providers/routes.ts");
const { declareUpstreams } = await source("src/routing/upstreams.ts", "src/providers/upstreams.ts");
const { readUpstreamsFile } = await source("src/routing/upstreams-file.ts", "src/providers/upstreams-file.ts");
const withWhen = existsSync(join(root, "src/routing/when.ts")) || existsSync(join(root, "src/providers/when.ts"));
type Router = (requested: string, facts?: Facts) => { name?: string; targets: { upstream: string }[] };
const N = Number(values.n);
const ROUNDS = Number(values.rounds);

const UPSTREAMS = `[upstreams.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
`;
const globs = Array.from({ length: 10 }, (_, i) => `[[routes]]\nname = "g${i}"\nmatch = "team-${i}-*"\nto = ["local"]\n`).join("\n");
const whens = Array.from({ length: 10 }, (_, i) => `[[routes]]
name = "w${i}"
to = ["local"]
when = { stream = false, endpoint = "/v1/chat/completions", key = "main", tools = false, thinking = false, header = { user-agent = "bench/*", x-team = "t${i}" }, images = true }
`).join("\n");
const recipes = `[[routes]]
name = "background"
match = "claude-haiku-*"
to = ["local"]
when = { header = { user-agent = "claude-cli/*" } }

[[routes]]
name = "think-harder"
match = "claude-sonnet-*"
when = { thinking = true }
to = ["local"]

[[routes]]
name = "vision"
match = "deepseek-*"
when = { images = true }
to = ["local"]

[[routes]]
name = "deepseek"
match = "deepseek-*"
to = ["local"]

[[routes]]
name = "codex-local"
match = "gpt-5*"
when = { endpoint = "/v1/responses" }
to = ["local"]

[[routes]]
name = "team-a"
when = { key = "team-a" }
to = ["local"]

[[routes]]
name = "tools-local"
when = { tools = true, stream = false }
to = ["local"]

[[routes]]
name = "blue"
when = { header = { x-team = "blue" } }
to = ["local"]

[[routes]]
name = "vision-any"
when = { images = true }
to = ["local"]

[[routes]]
name = "messages-streams"
when = { endpoint = "/v1/messages", stream = true }
to = ["local"]
`;
const tokens = `[[routes]]\nname = "long"\nwhen = { input_tokens_over = 60000 }\nto = ["local"]\n`;

function router(routes: string): Router {
  const file = readUpstreamsFile("bench.toml", UPSTREAMS + routes, () => undefined, ["alpha", "beta"]);
  const declared = declareUpstreams({}, { timeoutMs: 1000, retries: 0 }, file);
  return createRouter({ upstreams: declared.upstreams, routes: declared.routes, modelAliases: new Map(), modelRoutes: [] });
}

const request = openaiChat.decodeRequest({ model: "gpt-4o-mini", messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello in five words." }] });
const headers = new Headers({ "user-agent": "bench/1.0", "x-team": "none", authorization: "Bearer sk-bench", "content-type": "application/json" });
if (withWhen) await (await source("src/routing/estimate.ts", "src/providers/estimate.ts")).loadTokenizer();

const cases = [
  { name: "none", route: router("") },
  { name: "ten globs", route: router(globs) },
  ...(withWhen ? [{ name: "ten recipes", route: router(recipes) }, { name: "ten whens", route: router(whens) }, { name: "one token count", route: router(tokens) }] : []),
];
for (const { name, route } of cases) {
  const facts: Facts = { request, endpoint: "/v1/chat/completions", key: "main", headers };
  const where = route("gpt-4o-mini", facts);
  if (where.name !== undefined || where.targets[0]?.upstream !== "local") throw new Error(`${name}: routed to ${JSON.stringify(where)}`);
}

/** ns per call: a fresh facts object per call, as chat() makes one per request. */
function measure(route: Router, n: number): number {
  let sink = 0;
  const start = Bun.nanoseconds();
  for (let i = 0; i < n; i++) sink += route("gpt-4o-mini", { request, endpoint: "/v1/chat/completions", key: "main", headers }).targets.length;
  const ns = (Bun.nanoseconds() - start) / n;
  if (sink !== n) throw new Error("unexpected");
  return ns;
}

const results = new Map(cases.map((c) => [c.name, [] as number[]]));
for (const c of cases) measure(c.route, c.name === "one token count" ? 2000 : N / 10);
for (let round = 0; round < ROUNDS; round++) {
  for (const c of cases) results.get(c.name)!.push(measure(c.route, c.name === "one token count" ? Math.max(1000, N / 1000) : N));
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const fastest = (xs: number[]) => Math.min(...xs);
const none = results.get("none")!;
const signed = (ns: number) => `${ns >= 0 ? "+" : ""}${ns.toFixed(0)}`;
console.log(`${root}: router cost per request, ns per call, ${ROUNDS} rounds of ${N} calls (bun ${Bun.version}):`);
console.log(`  ${"case".padEnd(16)} ${"fastest".padStart(8)} ${"vs none".padStart(8)} ${"median".padStart(8)} ${"vs none".padStart(8)}   rounds`);
for (const [name, xs] of results) {
  const [f, m] = [fastest(xs), median(xs)];
  console.log(`  ${name.padEnd(16)} ${f.toFixed(0).padStart(8)} ${signed(f - fastest(none)).padStart(8)} ${m.toFixed(0).padStart(8)} ${signed(m - median(none)).padStart(8)}   ${xs.map((x) => x.toFixed(0)).join(" ")}`);
}
