/**
 * Claude Code against parley: installs `@anthropic-ai/claude-code` from npm into a temporary
 * directory (or uses CLAUDE_BIN), starts parley on the fake upstreams, runs `claude -p "say hi"`
 * with ANTHROPIC_BASE_URL pointed at it and checks the reply: once to Bedrock Claude (lossless), once
 * to an OpenAI model through the IR; to the Anthropic API (lossless), and to it overloaded (every
 * call a 529) so that Bedrock answers; then `--model mock/tools`, whose tool call Claude Code runs and
 * whose answer to the result must end the turn (it once looped ~1,100 requests a minute). Prints every call Claude Code made
 * (method, path, model, anthropic-beta), so a new release's habits show. Exits 1 on a failed check.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startClaudeGateway } from "../../test/lib/claude-gateway.ts";
import { claudeCode, smokeRun } from "./_harness.ts";
import { startGateway, TEST_KEY } from "../../test/lib/gateway.ts";

const { check, exit } = smokeRun("claude");

const binary = claudeCode();

// The lossless route (Claude to Bedrock Claude), then a cross-family one: Claude Code's own model
// name aliased to an OpenAI model, as a user who points it at GPT or a local model does.
await route("Bedrock Claude", {}, "Hello from Claude");
await route("an OpenAI model", { MODEL_ALIASES: "claude-opus-5-5=gpt-4o,claude-sonnet-4-5=gpt-4o,claude-haiku-4-5=gpt-4o" }, "Hello from OpenAI");
await route("the Anthropic API", {}, "Hello from Anthropic", [], "anthropic");
await route("the Anthropic API overloaded, failing over to Bedrock", {}, "Hello from Claude", [], "overloaded");
await route("the mock's tool call", {}, "returned:", ["--model", "mock/tools"]);
exit();

/** `anthropic`: an Anthropic upstream first (parley.toml), Bedrock after it; `overloaded`: it answers every call with 529. */
async function route(name: string, env: Record<string, string>, expected: string, args: string[] = [], anthropic?: "anthropic" | "overloaded") {
  console.log(`\n== Claude Code to ${name}`);
  const claude = anthropic ? await startClaudeGateway({ UPSTREAM_RETRIES: "0", ...env }) : undefined;
  const gateway = claude ?? (await startGateway({ UPSTREAM_RETRIES: "0", ...env }));
  if (anthropic === "overloaded") claude!.anthropic.outage.script = { kind: "error", status: 529, type: "overloaded_error", message: "Overloaded" };
  const calls: string[] = [];
  /** parley's answers to Claude Code's Messages calls: an error would make it retry. */
  const statuses: number[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const body = request.method === "POST" ? await request.clone().text() : "";
      const model = /"model"\s*:\s*"([^"]+)"/.exec(body)?.[1];
      const beta = request.headers.get("anthropic-beta");
      // The body's first and last members: parley keeps the client's text when they are model and stream.
      const keys = body.startsWith("{") ? Object.keys(JSON.parse(body)) : [];
      const ends = keys.length ? ` members=${keys[0]}..${keys.at(-1)}` : "";
      calls.push(`${request.method} ${url.pathname}${url.search}${model ? ` model=${model}` : ""}${beta ? ` anthropic-beta=${beta}` : ""}${ends}`);
      const response = await gateway.app.handle(request);
      if (url.pathname === "/v1/messages") statuses.push(response.status);
      return response;
    },
  });

  const home = mkdtempSync(join(tmpdir(), "parley-claude-home-"));
  const run = Bun.spawn([binary, "-p", "say hi", ...args], {
    cwd: home,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${server.port}`,
      ANTHROPIC_API_KEY: TEST_KEY,
      // Nothing but parley: no telemetry, error reports, update checks.
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
  const messageCalls = calls.filter((c) => /^POST \/v1\/messages(\?|\s|$)/.test(c)).length;
  check("claude -p exits 0", code === 0, code === 0 ? "" : stderr.trim().slice(0, 500));
  check(`claude -p prints the model's answer`, stdout.includes(expected), JSON.stringify(stdout.trim().slice(0, 200)));
  check("it called POST /v1/messages", messageCalls > 0);
  check("every Messages call was answered 200 (nothing for Claude Code to retry)", statuses.every((status) => status === 200), statuses.join(", "));
  if (args.length) {
    // mock/tools: a tool call, its result answered with text, and the turn ends (a few side calls besides).
    check("the turn ended after a tool round trip", messageCalls <= 10, `${messageCalls} Messages calls`);
    server.stop(true);
    await (claude ?? gateway).stop();
    return;
  }
  const upstream = [
    ...(anthropic === "anthropic" ? claude!.anthropic.received.filter((r) => r.path === "/v1/messages").map(({ body, headers }) => ({ to: `Anthropic ${body.model}`, body: { ...body, anthropic_beta: headers.get("anthropic-beta")?.split(",") } as Record<string, any> })) : []),
    ...gateway.bedrock.received.filter((r) => r.action !== "count-tokens").map(({ action, modelId, body }) => ({ to: `Bedrock ${action} ${modelId}`, body })),
    ...gateway.openai.received.filter((r) => r.path.endsWith("/chat/completions")).map(({ body }) => ({ to: `OpenAI ${body.model}`, body })),
  ];
  check(`every Messages call reached ${name}`, upstream.length >= messageCalls, `${upstream.length} of ${messageCalls}`);
  if (anthropic === "overloaded") {
    const overloaded = claude!.anthropic.received.filter((r) => r.path === "/v1/messages").length;
    check("each Messages call tried Anthropic first", overloaded >= messageCalls, `${overloaded} of ${messageCalls}`);
  }
  for (const { to, body } of upstream) {
    const roles = Array.isArray(body.messages) ? body.messages.map((m: { role: string }) => m.role).join(",") : "-";
    const tools = Array.isArray(body.tools) ? body.tools.length : 0;
    console.log(`${to} got fields ${Object.keys(body).join(", ")}; roles ${roles}; ${tools} tools; anthropic_beta ${JSON.stringify(body.anthropic_beta ?? [])}`);
  }
  server.stop(true);
  await (claude ?? gateway).stop();
}

