/**
 * Claude Code in Bedrock mode against parley (contract 17): CLAUDE_CODE_USE_BEDROCK=1 with
 * ANTHROPIC_BEDROCK_BASE_URL pointed at parley and a parley key as AWS_BEARER_TOKEN_BEDROCK, as a
 * team that reaches Claude through Bedrock sets it. Installs `@anthropic-ai/claude-code` from npm
 * into a temporary directory (or uses CLAUDE_BIN), runs `claude -p "say hi"` once to Bedrock Claude
 * (passed through to the fake Bedrock) and once to an OpenAI model (every Claude id routed to it),
 * and prints every call Claude Code made. Exits 1 on a failed check.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeCode, smokeRun } from "./_harness.ts";
import { startGateway, TEST_KEY } from "../../test/lib/gateway.ts";

const { check, exit } = smokeRun("claude-bedrock");

const binary = claudeCode();

await route("Bedrock Claude, passed through", {}, "Hello from Claude");
await route("an OpenAI model", { MODEL_ROUTES: "*claude*=alpha" }, "Hello from OpenAI");
exit();

async function route(name: string, env: Record<string, string>, expected: string) {
  console.log(`\n== Claude Code (Bedrock mode) to ${name}`);
  const gateway = await startGateway({ UPSTREAM_RETRIES: "0", ...env });
  const calls: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const auth = request.headers.get("authorization")?.split(" ")[0] ?? "none";
      const response = await gateway.app.handle(request);
      calls.push(`${request.method} ${decodeURIComponent(url.pathname)}${url.search} auth=${auth} -> ${response.status}`);
      return response;
    },
  });

  const home = mkdtempSync(join(tmpdir(), "parley-claude-home-"));
  const run = Bun.spawn([binary, "-p", "say hi"], {
    cwd: home,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      CLAUDE_CODE_USE_BEDROCK: "1",
      ANTHROPIC_BEDROCK_BASE_URL: `http://127.0.0.1:${server.port}`,
      AWS_BEARER_TOKEN_BEDROCK: TEST_KEY,
      AWS_REGION: "us-east-1",
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
  const runtimeCalls = calls.filter((c) => /^POST \/model\/[^ ]+\/(invoke|invoke-with-response-stream|converse|converse-stream) /.test(c)).length;
  // An error Claude Code would retry (a 4xx/5xx on a runtime call) is a session slower than a direct one.
  const failedCalls = calls.filter((c) => /^POST \/model\//.test(c) && !c.endsWith("-> 200"));
  check("claude -p exits 0", code === 0, code === 0 ? "" : stderr.trim().slice(0, 500));
  check("claude -p prints the model's answer", stdout.includes(expected), JSON.stringify(stdout.trim().slice(0, 200)));
  check("it called the Bedrock Runtime operations on parley", runtimeCalls > 0);
  check("every runtime call was answered 200 (nothing for Claude Code to retry)", failedCalls.length === 0, failedCalls.join("; "));
  check("every call was answered by parley (no 404)", !stderr.includes("404"), stderr.trim().slice(0, 200));
  const upstream = [
    ...gateway.bedrock.received.map(({ action, modelId, body }) => ({ to: `Bedrock ${action} ${modelId}`, body })),
    ...gateway.openai.received.filter((r) => r.path.endsWith("/chat/completions")).map(({ body }) => ({ to: `OpenAI ${body.model}`, body })),
  ];
  check(`every runtime call reached ${name}`, upstream.length >= runtimeCalls, `${upstream.length} of ${runtimeCalls}`);
  for (const { to, body } of upstream) console.log(`${to} got fields ${Object.keys(body).join(", ")}`);
  server.stop(true);
  await gateway.stop();
}

