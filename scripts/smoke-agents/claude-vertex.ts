/**
 * Claude Code in Vertex mode against parley (contract 23): CLAUDE_CODE_USE_VERTEX=1 with
 * ANTHROPIC_VERTEX_BASE_URL pointed at parley's /v1, CLAUDE_CODE_SKIP_VERTEX_AUTH=1 and a parley key
 * as ANTHROPIC_AUTH_TOKEN, as a team that buys Claude through Google Cloud sets it. Installs
 * `@anthropic-ai/claude-code` from npm into a temporary directory (or uses CLAUDE_BIN) and runs
 * `claude -p "say hi"` once per kind of upstream, every Claude id routed to it: Vertex (passed
 * through to the fake Vertex), the Anthropic API, Bedrock, the Gemini API, OpenAI and the mock.
 * Prints every call Claude Code made. Exits 1 on a failed check.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { TEST_KEY } from "../../test/lib/gateway.ts";
import { claudeCode, smokeRun } from "./_harness.ts";
import { startGoogleGateway } from "../../test/lib/google-gateway.ts";

const { check, exit } = smokeRun("claude-vertex");

const binary = claudeCode();

/** Each kind, the upstream every Claude id is routed to, and what its fake answers (the mock repeats the prompt's last words). */
const KINDS: [kind: string, upstream: string, expected: string | RegExp][] = [
  ["vertex (passed through)", "vtx", "Hello from Anthropic"],
  ["anthropic", "anthropic", "Hello from Anthropic"],
  ["bedrock", "beta", "Hello from Claude"],
  ["gemini", "gem", "Hello from Gemini"],
  ["openai", "alpha", "Hello from OpenAI"],
  ["mock", "mock", /\S/],
];
for (const [kind, upstream, expected] of KINDS) await route(kind, upstream, expected);
exit();

async function route(kind: string, upstream: string, expected: string | RegExp) {
  console.log(`\n== Claude Code (Vertex mode) to ${kind}`);
  const gateway = await startGoogleGateway({ UPSTREAM_RETRIES: "0", MODEL_ROUTES: `*claude*=${upstream}` });
  const calls: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const auth = request.headers.get("authorization")?.split(" ")[0] ?? "none";
      calls.push(`${request.method} ${decodeURIComponent(url.pathname)}${url.search} auth=${auth}`);
      return gateway.app.handle(request);
    },
  });

  const home = mkdtempSync(join(tmpdir(), "parley-claude-home-"));
  const run = Bun.spawn([binary, "-p", "say hi"], {
    cwd: home,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      CLAUDE_CODE_USE_VERTEX: "1",
      ANTHROPIC_VERTEX_BASE_URL: `http://127.0.0.1:${server.port}/v1`,
      ANTHROPIC_VERTEX_PROJECT_ID: "my-project",
      CLOUD_ML_REGION: "us-east5",
      CLAUDE_CODE_SKIP_VERTEX_AUTH: "1",
      ANTHROPIC_AUTH_TOKEN: TEST_KEY,
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
      DISABLE_AUTOUPDATER: "1",
      DISABLE_TELEMETRY: "1",
      DISABLE_ERROR_REPORTING: "1",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  const timer = setTimeout(() => run.kill(), 120_000);
  const [stdout, stderr, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  clearTimeout(timer);

  console.log("calls Claude Code made:");
  for (const call of calls) console.log(`  ${call}`);
  const predictions = calls.filter((c) => /^POST \/v1\/projects\/[^ ]+\/publishers\/anthropic\/models\/[^ ]+:(rawPredict|streamRawPredict) auth=Bearer$/.test(c)).length;
  check("claude -p exits 0", code === 0, code === 0 ? "" : stderr.trim().slice(0, 500));
  check("claude -p prints the model's answer", typeof expected === "string" ? stdout.includes(expected) : expected.test(stdout), JSON.stringify(stdout.trim().slice(0, 200)));
  check("it called Vertex's rawPredict on parley with a bearer", predictions > 0);
  check("every call was answered by parley (no 404)", !stderr.includes("404"), stderr.trim().slice(0, 200));
  const reached = [
    ...gateway.vertex.claude.received.map(({ method, model }) => `Vertex ${method} ${model}`),
    ...gateway.anthropic.received.map(({ path }) => `Anthropic ${path}`),
    ...gateway.bedrock.received.map(({ action, modelId }) => `Bedrock ${action} ${modelId}`),
    ...gateway.gemini.received.map(({ model, method }) => `Gemini ${model}:${method}`),
    ...gateway.openai.received.filter((r) => r.path.endsWith("/chat/completions")).map(({ body }) => `OpenAI ${body.model}`),
  ];
  if (upstream !== "mock") check(`the calls reached ${kind}`, reached.length >= predictions, `${reached.length} of ${predictions}`);
  for (const line of reached) console.log(`  upstream: ${line}`);
  server.stop(true);
  await gateway.stop();
}

