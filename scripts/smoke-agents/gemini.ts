/**
 * Gemini CLI against parley (contract 23): GOOGLE_GEMINI_BASE_URL pointed at parley (no path) and a
 * parley key as GEMINI_API_KEY, with `security.auth.selectedType = "gemini-api-key"` in its
 * settings.json, as its docs ask for a non-interactive run. Installs `@google/gemini-cli` from npm
 * into a temporary directory (or uses GEMINI_BIN) and runs `gemini -p "say hi"` once per kind of
 * upstream, every Gemini id routed to it: the Gemini API (passed through), Vertex (passed through),
 * the Anthropic API, Bedrock, OpenAI and the mock. Prints every call Gemini CLI made. Exits 1 on a
 * failed check.
 */
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { message } from "../../test/lib/fake-anthropic.ts";
import { reply } from "../../test/lib/fake-gemini.ts";
import { TEST_KEY } from "../../test/lib/gateway.ts";
import { startGoogleGateway, type GoogleGateway } from "../../test/lib/google-gateway.ts";
import { smokeRun } from "./_harness.ts";

const PACKAGE = process.env.GEMINI_CLI_PACKAGE ?? "@google/gemini-cli@latest";
const { check, exit } = smokeRun("gemini");

const binary = process.env.GEMINI_BIN ?? install();
console.log(`gemini ${Bun.spawnSync([binary, "--version"]).stdout.toString().trim()}`);

/** Each kind, the upstream every Gemini id is routed to ("" for none: gemini-* goes to the Gemini API), and what its fake answers. */
const KINDS: [kind: string, upstream: string, expected: string | RegExp][] = [
  ["gemini (passed through)", "", "Hello from Gemini"],
  ["vertex (passed through)", "vtx", "Hello from Gemini"],
  ["anthropic", "anthropic", "Hello from Anthropic"],
  ["bedrock", "beta", "Hello from Claude"],
  ["openai", "alpha", "Hello from OpenAI"],
  ["mock", "mock", /\S/],
];
for (const [kind, upstream, expected] of KINDS) await route(kind, upstream, expected);
exit();

async function route(kind: string, upstream: string, expected: string | RegExp) {
  console.log(`\n== Gemini CLI to ${kind}`);
  // Bedrock knows Claude's ids, not Gemini's: a route names the one it is sent.
  const toBedrock = '\n[[routes]]\nmatch = "gemini-*"\nto = [{ upstream = "beta", model = "anthropic.claude-3-5-haiku-20241022-v1:0" }]\n';
  const env: Record<string, string> = upstream && upstream !== "beta" ? { MODEL_ROUTES: `gemini-*=${upstream}` } : {};
  const gateway = await startGoogleGateway({ UPSTREAM_RETRIES: "0", ...env }, upstream === "beta" ? toBedrock : "");
  classified(gateway, upstream);
  const calls: string[] = [];
  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url);
      const response = await gateway.app.handle(request);
      calls.push(`${request.method} ${url.pathname}${url.search} key=${request.headers.has("x-goog-api-key") ? "x-goog-api-key" : "none"} -> ${response.status}`);
      return response;
    },
  });

  const home = mkdtempSync(join(tmpdir(), "parley-gemini-home-"));
  mkdirSync(join(home, ".gemini"));
  writeFileSync(join(home, ".gemini", "settings.json"), JSON.stringify({ security: { auth: { selectedType: "gemini-api-key" } } }));
  const run = Bun.spawn([binary, "-p", "say hi"], {
    cwd: home,
    env: {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: home,
      GOOGLE_GEMINI_BASE_URL: `http://127.0.0.1:${server.port}`,
      GEMINI_API_KEY: TEST_KEY,
      // A headless run in a folder it has not been told to trust stops at once.
      GEMINI_CLI_TRUST_WORKSPACE: "true",
    },
    stdout: "pipe",
    stderr: "pipe",
  });
  // Where its model router's JSON is not answered (Bedrock, the mock), it retries with backoff for a minute or more, then goes on.
  const timer = setTimeout(() => run.kill(), 240_000);
  const [stdout, stderr, code] = await Promise.all([new Response(run.stdout).text(), new Response(run.stderr).text(), run.exited]);
  clearTimeout(timer);

  console.log("calls Gemini CLI made:");
  for (const call of calls) console.log(`  ${call}`);
  const answered = calls.filter((c) => /^POST \/v1(beta)?\/models\/[^ ]+:streamGenerateContent\?alt=sse key=x-goog-api-key -> 200$/.test(c)).length;
  check("gemini -p exits 0", code === 0, code === 0 ? "" : stderr.trim().slice(-500));
  check("gemini -p prints the model's answer", typeof expected === "string" ? stdout.includes(expected) : expected.test(stdout), JSON.stringify(stdout.trim().slice(0, 200)));
  check("it streamed from parley's Gemini front door with its key", answered > 0);
  check("every call was answered by parley (no 404)", !calls.some((c) => c.endsWith("-> 404")));
  const reached = [
    ...gateway.gemini.received.map(({ model, method }) => `Gemini ${model}:${method}`),
    ...gateway.vertex.gemini.received.map(({ model, method }) => `Vertex ${model}:${method}`),
    ...gateway.anthropic.received.map(({ path, body }) => `Anthropic ${path} ${body.model}`),
    ...gateway.bedrock.received.map(({ action, modelId }) => `Bedrock ${action} ${modelId}`),
    ...gateway.openai.received.filter((r) => r.path.endsWith("/chat/completions")).map(({ body }) => `OpenAI ${body.model}`),
  ];
  if (upstream !== "mock") check(`the calls reached ${kind}`, reached.length >= answered, `${reached.length} of ${answered}`);
  for (const line of reached) console.log(`  upstream: ${line}`);
  server.stop(true);
  await gateway.stop();
}

/**
 * Gemini CLI first asks a small model to rate the prompt (JSON: complexity_reasoning, complexity_score)
 * to pick its model, and retries with backoff while the answer is not that JSON: the fakes that can
 * be scripted give it, as a real model would.
 */
function classified(gateway: GoogleGateway, upstream: string) {
  const rating = '{"complexity_reasoning": "A greeting.", "complexity_score": 5}';
  if (upstream === "") gateway.gemini.next({ kind: "json", body: reply([{ text: rating }]) });
  else if (upstream === "vtx") gateway.vertex.gemini.next({ kind: "json", body: reply([{ text: rating }]) });
  else if (upstream === "anthropic") gateway.anthropic.next({ kind: "json", body: message("claude-sonnet-4-5-20250929", [{ type: "tool_use", id: "toolu_1", name: "json_response", input: JSON.parse(rating) }], "tool_use") });
  else if (upstream === "alpha") gateway.openai.next({ kind: "reply", text: rating });
}

function install(): string {
  const dir = mkdtempSync(join(tmpdir(), "parley-gemini-cli-"));
  console.log(`installing ${PACKAGE} into ${dir}`);
  const npm = Bun.spawnSync(["npm", "install", "--no-audit", "--no-fund", "--prefix", dir, PACKAGE], { stdout: "inherit", stderr: "inherit" });
  if (npm.exitCode !== 0) throw new Error(`npm install ${PACKAGE} failed`);
  const found = join(dir, "node_modules/.bin/gemini");
  if (!existsSync(found)) throw new Error(`no gemini binary in ${dir}`);
  return found;
}
