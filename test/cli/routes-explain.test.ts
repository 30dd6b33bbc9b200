import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, userDir } from "../lib/cli.ts";

/** Nothing is called: the URLs need not answer. */
const TOML = `[upstreams.ollama]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
models = ["qwen2.5-coder:7b"]

[upstreams.cloud]
kind = "openai"
base_url = "http://127.0.0.1:9/cloud/v1"

[[routes]]
name = "long"
when = { input_tokens_over = 60000 }
to = [{ upstream = "cloud", model = "gemini-2.5-pro" }]

[[routes]]
name = "thinking"
match = "claude-*"
when = { thinking = true, endpoint = "/v1/messages" }
to = ["cloud"]

[[routes]]
name = "background"
match = "claude-haiku-*"
model = "qwen2.5-coder:7b"
to = ["ollama", "cloud"]
[routes.when]
header = { user-agent = "claude-cli/*" }

[[routes]]
name = "team"
when = { key = "team-a" }
to = [{ upstream = "ollama", weight = 3 }, { upstream = "cloud", weight = 1 }]
`;

function explain(args: string[], files: Record<string, string> = {}, env: Record<string, string> = {}) {
  const user = userDir();
  writeFileSync(join(user.dir, "parley.toml"), TOML);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(user.dir, name), text);
  return runCli(["routes", "explain", ...args], { cwd: user.dir, env: { ...user.env, API_KEY: "sk-routes-explain-0001", ...env } }).then((r) => ({ ...r, file: join(user.dir, "parley.toml") }));
}

describe("parley routes explain", () => {
  test("the route that matches, why each earlier one did not (each condition), then the targets in order", async () => {
    const { stdout, stderr, code, file } = await explain(["--model", "claude-haiku-4-5", "--endpoint", "/v1/messages", "--header", "user-agent=claude-cli/2.0.14 (external, cli)", "--header", "x-team: blue"]);
    expect([code, stderr]).toEqual([0, ""]);
    expect(stdout).toBe(`model claude-haiku-4-5 on /v1/messages, key main
  request: stream false, tools false, thinking false, images false, user-agent: "claude-cli/2.0.14 (external, cli)", x-team: "blue"
route "long" (${file}:10): skipped
  input_tokens_over = 60000: no, the estimate is 7 input tokens
route "thinking" (${file}:15): skipped
  match = "claude-*": yes
  thinking = true: no, thinking is false
  endpoint = "/v1/messages": yes
route "background" (${file}:21): matches
  match = "claude-haiku-*": yes
  header.user-agent = "claude-cli/*": yes
targets, in order:
  1. ollama: qwen2.5-coder:7b
  2. cloud: qwen2.5-coder:7b
affinity = "session": a session stays on one target until 300 s pass without a request of it; it moves only when that target fails or cools down
`);
  });

  test("a weighted route: where the request's session starts, the same pick every time (contract 22)", async () => {
    const picks = new Set<string>();
    for (let run = 0; run < 2; run++) {
      const { stdout, code } = await explain(["--model", "gpt-4o", "--key", "team-a", "--header", "x-parley-session=session-42"]);
      expect(code).toBe(0);
      expect(stdout).toContain('affinity = "session": a session stays on one target until 300 s pass');
      picks.add(/this request's session starts on (\w+)/.exec(stdout)![1]!);
    }
    expect(picks.size).toBe(1);
  });

  test("a body file is decoded as its endpoint decodes it: thinking, tools, images and the token estimate", async () => {
    const body = { model: "claude-sonnet-4-5", max_tokens: 4096, thinking: { type: "enabled", budget_tokens: 2048 }, messages: [{ role: "user", content: "why" }], tools: [{ name: "f", input_schema: { type: "object" } }] };
    const { stdout, code } = await explain(["--body", "body.json", "--endpoint", "/v1/messages"], { "body.json": JSON.stringify(body) });
    expect(code).toBe(0);
    expect(stdout).toContain("request: stream false, tools true, thinking true, images false");
    expect(stdout).toContain(`route "thinking"`);
    expect(stdout).toMatch(/route "thinking" \(.*\): matches\n  match = "claude-\*": yes\n  thinking = true: yes\n  endpoint = "\/v1\/messages": yes\ntargets, in order:\n  1\. cloud: claude-sonnet-4-5\n$/);
    // The same body to another endpoint does not hold: the endpoint condition says why.
    const chat = await explain(["--body", "body.json", "--model", "claude-sonnet-4-5"], { "body.json": JSON.stringify(body) });
    expect(chat.stdout).toContain(`  endpoint = "/v1/messages": no, endpoint is "/v1/chat/completions"\n`);
  });

  test("--key, weights, MODEL_FALLBACKS and a step before the file's routes", async () => {
    const team = await explain(["-m", "gpt-4o", "--key", "team-a"], {}, { MODEL_FALLBACKS: "gpt-4o=ollama/llama3" });
    expect(team.stdout).toContain(`  key = "team-a": yes\ntargets, the first drawn by weight:\n  1. ollama: gpt-4o (weight 3)\n  2. cloud: gpt-4o (weight 1)\naffinity = "session": a session stays on one target until 300 s pass without a request of it; it moves only when that target fails or cools down\nthen MODEL_FALLBACKS ollama/llama3: ollama llama3\n`);
    const other = await explain(["-m", "gpt-4o", "--key", "ci"]);
    expect(other.stdout).toContain(`  key = "team-a": no, key label is "ci"\nno route matched: routed by the built-in model names of kind openai\n`);
    const addressed = await explain(["-m", "cloud/anything"]);
    expect(addressed.stdout).toContain("routed by 'cloud/' naming the upstream, before the file's routes\ntargets, in order:\n  1. cloud: anything\n");
  });

  test("mistakes: an id routed nowhere exits 1; a bad endpoint, header or body exits 2 with one line", async () => {
    const nowhere = await explain(["-m", "llama3"]);
    expect(nowhere.code).toBe(1);
    expect(nowhere.stderr).toContain("parley: The model 'llama3' is not routed to any upstream.");
    const endpoint = await explain(["-m", "gpt-4o", "--endpoint", "/v1/message"]);
    expect([endpoint.code, endpoint.stderr]).toEqual([2, "parley: --endpoint /v1/message: not an endpoint that routes by model; did you mean /v1/messages? (/v1/chat/completions, /v1/messages, /v1/responses, /v1/completions, /v1/embeddings)\n"]);
    const header = await explain(["-m", "gpt-4o", "--header", "user-agent"]);
    expect([header.code, header.stderr]).toEqual([2, 'parley: --header "user-agent": write name=value, e.g. --header user-agent=claude-cli/2.0.0\n']);
    const missing = await explain(["--body", "nope.json"]);
    expect([missing.code, missing.stderr]).toEqual([2, "parley: --body nope.json: no such file\n"]);
    const notJson = await explain(["--body", "b.json"], { "b.json": "{model" });
    expect(notJson.code).toBe(2);
    expect(notJson.stderr).toStartWith("parley: --body b.json: not JSON");
    const invalid = await explain(["--body", "b.json", "--endpoint", "/v1/messages"], { "b.json": JSON.stringify({ model: "claude-x", messages: [] }) });
    expect(invalid.code).toBe(1);
    expect(invalid.stderr).toStartWith("parley: ");
    const noModel = await explain([]);
    expect([noModel.code, noModel.stderr]).toEqual([2, "parley: no model: give --model, or a body with a model (or set DEFAULT_ALPHA_MODEL)\n"]);
  });
});
