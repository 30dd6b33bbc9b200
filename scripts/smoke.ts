/**
 * Smoke test of the built binary, as a user would run it: `bun scripts/smoke.ts [dist/parley]`.
 * From an empty directory with no node_modules: --version, serve, /health, /docs, a chat through
 * a fake OpenAI, config show, a clean stop; with the start-up numbers. Ends `smoke: N passed, M failed`.
 */
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import pkg from "../package.json" with { type: "json" };
import { startFakeOpenAI } from "../test/lib/fake-openai.ts";
import { freePort, rssMb } from "../test/lib/proc.ts";

const binary = resolve(process.argv[2] ?? "dist/parley");
const cwd = mkdtempSync(join(tmpdir(), "parley-smoke-cwd-"));
const home = mkdtempSync(join(tmpdir(), "parley-smoke-home-"));
const key = "sk-smoke-test-key-000111";
const upstreamKey = "sk-smoke-upstream-999888";
const env = { PATH: "/usr/bin:/bin", HOME: home, API_KEY: key, ALPHA_API_KEY: upstreamKey };
let passed = 0;
let failed = 0;

function check(name: string, ok: boolean, detail = "") {
  if (ok) passed++;
  else failed++;
  console.log(`${ok ? "ok  " : "FAIL"} ${name}${detail ? `: ${detail}` : ""}`);
}

const version = Bun.spawnSync([binary, "--version"], { cwd, env });
check("--version prints the package version", version.stdout.toString().trim() === pkg.version, version.stdout.toString().trim());

const upstream = await startFakeOpenAI();
const port = freePort();
const url = `http://127.0.0.1:${port}`;

const launched = performance.now();
const server = Bun.spawn([binary, "serve", "--port", String(port)], { cwd, env: { ...env, ALPHA_BASE_URL: upstream.url }, stdout: "pipe", stderr: "pipe" });
let firstHealth = Number.NaN;
for (let i = 0; i < 2000; i++) {
  if (await fetch(`${url}/health`).then((r) => r.ok, () => false)) {
    firstHealth = performance.now() - launched;
    break;
  }
  await Bun.sleep(2);
}
check("serve answers /health", Number.isFinite(firstHealth), `${firstHealth.toFixed(0)} ms from launch`);
const rss = () => rssMb(server.pid);
await Bun.sleep(500);
const idle = rss();

const docs = await fetch(`${url}/docs`).then((r) => r.text(), () => "");
const assets = [...docs.matchAll(/(?:src|href)="(\/docs\/[^"]+)"/g)].map((m) => m[1]!);
const assetStatus = await Promise.all(assets.map((a) => fetch(`${url}${a}`).then((r) => r.status)));
check("/docs renders from embedded assets", assets.length >= 2 && assetStatus.every((s) => s === 200), assets.join(", "));

const chat = await fetch(`${url}/v1/chat/completions`, {
  method: "POST",
  headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
  body: JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }),
}).then((r) => r.json(), () => ({}));
check("a chat completion goes through the fake upstream", chat?.choices?.[0]?.message?.content === "Hello from OpenAI");

const converted = await fetch(`${url}/v1/chat/completions?target_format=beta_messages`, {
  method: "POST",
  headers: { "x-api-key": key, "content-type": "application/json" },
  body: JSON.stringify({ model: "gpt-4o-mini", stream: true, messages: [{ role: "user", content: "hi" }] }),
}).then((r) => r.text(), () => "");
check("a converted stream ends with message_stop", converted.includes("event: message_stop"));

await Bun.sleep(500);
check("memory", idle > 0, `${idle.toFixed(1)} MB RSS idle after start, ${rss().toFixed(1)} MB after two chats`);

const show = Bun.spawnSync([binary, "config", "show"], { cwd, env });
const shown = show.stdout.toString();
check("config show works and masks secrets", show.exitCode === 0 && shown.includes("PORT") && !shown.includes(key) && !shown.includes(upstreamKey));

server.kill("SIGTERM");
const code = await server.exited;
const log = (await new Response(server.stderr).text()) + (await new Response(server.stdout).text());
check("SIGTERM stops it with exit code 0", code === 0, `exit ${code}`);
check("no secret in the log", !log.includes(key) && !log.includes(upstreamKey));
check("nothing written to the working directory", readdirSync(cwd).length === 0, readdirSync(cwd).join(", "));
upstream.stop();
for (const dir of [cwd, home]) rmSync(dir, { recursive: true, force: true });

console.log(`smoke: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
