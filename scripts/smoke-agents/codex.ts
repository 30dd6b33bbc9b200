/**
 * Codex CLI against parley: installs @openai/codex from npm into a temp dir, points a temp
 * CODEX_HOME at a gateway wired to the fake upstreams (wire_api = "responses"), runs `codex exec`
 * and checks the reply, for an OpenAI model (passthrough), Claude on Bedrock (converted, with a
 * tool round trip) and the mock. Not part of `bun test`: it needs the npm registry.
 *
 *   bun scripts/smoke-agents/codex.ts          (or through scripts/smoke-agents.ts)
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { anthropicEvents } from "../../test/lib/fake-bedrock.ts";
import { startGateway, TEST_KEY } from "../../test/lib/gateway.ts";

const CODEX_VERSION = process.env.CODEX_VERSION ?? "latest";
const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const RUN_MS = 120_000;

interface Seen {
  headers: Headers;
  body: Record<string, any>;
  dropped: string | null;
}

export default async function check(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), "parley-codex-"));
  // The gateway's data goes under it too, and is removed with it.
  const outer = process.env.TMPDIR;
  process.env.TMPDIR = dir;
  const gateway = await startGateway();
  const seen: Seen[] = [];
  /** Codex's WebSocket attempts (GET /v1/responses) and every status parley answered: a retry or a delay shows here. */
  const upgrades: number[] = [];
  const statuses: number[] = [];
  // In front of the gateway, to see what Codex itself sends (headers included).
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const raw = await request.text();
      const response = await gateway.app.handle(new Request(request.url, { method: request.method, headers: request.headers, body: raw || undefined }));
      statuses.push(response.status);
      if (request.method === "GET" && new URL(request.url).pathname === "/v1/responses") upgrades.push(response.status);
      if (request.method === "POST") seen.push({ headers: request.headers, body: JSON.parse(raw), dropped: response.headers.get("x-parley-dropped-tools") });
      return response;
    },
  });
  try {
    const codex = await install(dir);
    let builtIn = false;
    const run = (model: string) => exec(codex, dir, model, `http://127.0.0.1:${server.port}/v1`, builtIn);
    const lines: string[] = [];

    const checkReply = async (label: string, model: string, expected: string) => {
      upgrades.length = 0;
      statuses.length = 0;
      const started = performance.now();
      const out = await run(model);
      if (!out.includes(expected)) throw new Error(`codex exec with ${label} (${model}) did not print '${expected}':\n${out}`);
      // One WebSocket attempt at most, answered 426 so that Codex falls back at once (a 404 cost it seven, ~7 s).
      if (upgrades.length > 1 || upgrades.some((status) => status !== 426)) throw new Error(`codex exec with ${label} tried the WebSocket ${upgrades.length} times (statuses ${upgrades.join(", ")})`);
      const failed = statuses.filter((status) => status >= 400 && status !== 426);
      if (failed.length) throw new Error(`codex exec with ${label}: parley answered ${failed.join(", ")}, which Codex retries`);
      lines.push(`${label}: "${expected}" (${upgrades.length} WebSocket attempt, ${statuses.length - upgrades.length} POST, ${Math.round(performance.now() - started)} ms)`);
    };
    await checkReply("OpenAI passthrough", "gpt-4.1", "Hello from OpenAI");
    await checkReply("Bedrock Claude converted", CLAUDE, "Hello from Claude");
    await checkReply("mock", "mock", "say hi");
    const first = seen[0]!;
    // The built-in OpenAI provider pointed at parley tries the Responses WebSocket first: one 426, then POST.
    builtIn = true;
    await checkReply("built-in OpenAI provider", "gpt-4.1", "Hello from OpenAI");
    if (upgrades.length !== 1) throw new Error(`the built-in OpenAI provider made ${upgrades.length} WebSocket attempts, not 1: the 426 path went untried`);
    builtIn = false;

    // A tool round trip through the conversion: Claude asks Codex to run a command, Codex sends its output back.
    seen.length = 0;
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["Running it."], { id: "toolu_smoke", name: "exec_command", json: [JSON.stringify({ cmd: "echo parley-$((40+2))" })] }) });
    await checkReply("Claude tool round trip", CLAUDE, "Hello from Claude");
    lines.push(toolRoundTrip(seen));

    return [
      `codex ${await version(codex)} via parley /v1/responses:`,
      ...lines.map((l) => `  ${l}`),
      `  Codex sent: ${describe(first)}`,
      `  dropped on converted routes (x-parley-dropped-tools): ${seen[0]?.dropped ?? "none"}`,
    ].join("\n");
  } finally {
    server.stop(true);
    await gateway.stop();
    rmSync(dir, { recursive: true, force: true });
    if (outer === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = outer;
  }
}

async function install(dir: string): Promise<string> {
  const npm = Bun.spawn(["npm", "install", "--no-audit", "--no-fund", "--prefix", dir, `@openai/codex@${CODEX_VERSION}`], { stdout: "ignore", stderr: "pipe" });
  if ((await npm.exited) !== 0) throw new Error(`npm install @openai/codex failed:\n${await new Response(npm.stderr).text()}`);
  return join(dir, "node_modules", ".bin", "codex");
}

async function version(codex: string): Promise<string> {
  const proc = Bun.spawn([codex, "--version"], { stdout: "pipe", stderr: "ignore" });
  return (await new Response(proc.stdout).text()).trim().replace(/^codex-cli /, "");
}

/** One `codex exec` in a fresh CODEX_HOME whose only provider is parley: its own table, or (`builtIn`) the built-in OpenAI one at parley's URL. */
async function exec(codex: string, dir: string, model: string, baseUrl: string, builtIn = false): Promise<string> {
  const home = mkdtempSync(join(dir, "home-"));
  writeFileSync(join(home, "config.toml"), builtIn ? [`model = "${model}"`, `model_provider = "openai"`, `openai_base_url = "${baseUrl}"`, ``].join("\n") : [
    `model = "${model}"`,
    `model_provider = "parley"`,
    ``,
    `[model_providers.parley]`,
    `name = "parley"`,
    `base_url = "${baseUrl}"`,
    `wire_api = "responses"`,
    `env_key = "PARLEY_API_KEY"`,
    ``,
  ].join("\n"));
  const proc = Bun.spawn([codex, "exec", "--skip-git-repo-check", "say hi"], {
    cwd: home,
    env: { PATH: process.env.PATH ?? "", HOME: home, CODEX_HOME: home, PARLEY_API_KEY: TEST_KEY, ...(builtIn ? { CODEX_API_KEY: TEST_KEY, OPENAI_API_KEY: TEST_KEY } : {}) },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => proc.kill(), RUN_MS);
  const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
  clearTimeout(timer);
  const code = await proc.exited;
  if (code !== 0) throw new Error(`codex exec (${model}) exited ${code}:\n${err.slice(-2000)}`);
  return out;
}

/** The second request of the round trip carries the command's output as a function_call_output. */
function toolRoundTrip(seen: Seen[]): string {
  const output = seen[1]?.body.input?.find((item: { type?: string }) => item.type === "function_call_output");
  const text = typeof output?.output === "string" ? output.output : JSON.stringify(output?.output ?? "");
  // The command's output, not its text: the shell really ran it.
  if (!text.includes("parley-42")) throw new Error(`Codex did not send the command's output back: ${JSON.stringify(seen[1]?.body.input?.slice(-2) ?? null)}`);
  return `tool round trip: exec_command ran, its output came back as function_call_output (${seen.length} requests)`;
}

function describe(seen: Seen): string {
  const tools = (seen.body.tools ?? []).map((t: { type: string; name?: string }) => (t.type === "function" ? t.name : t.type)).join(", ");
  const fields = Object.keys(seen.body).join(", ");
  const headers = [...seen.headers.keys()].filter((h) => h === "originator" || h.startsWith("x-codex") || h.endsWith("-id")).join(", ");
  return `fields ${fields}; tools ${tools}; headers ${headers}`;
}

if (import.meta.main) {
  try {
    console.log(await check());
  } catch (error) {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  }
}
