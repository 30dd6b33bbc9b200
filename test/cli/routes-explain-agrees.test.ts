import { afterAll, expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";
import { runCli, userDir } from "../lib/cli.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../lib/fake-anthropic.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { bodyFor, writeToml } from "../upstreams/fleet.ts";

/**
 * `parley routes explain` agrees with what the server routes: for each id, explain's first target
 * is the upstream that answers it (`x-parley-upstream`), or both say it routes nowhere. The file
 * has a local model server whose list discovery finds, and an Anthropic upstream with its `models`.
 */
const [local, anthropic] = await Promise.all([startFakeOpenAI(), startFakeAnthropic()]);
afterAll(() => (local.stop(), anthropic.stop()));
local.catalogue.ids = ["readme-llama-1m", "qwen2.5-coder:7b"];

const { file } = writeToml(`
[upstreams.local]
kind = "openai"
base_url = "${local.url}"

[upstreams.anthropic]
kind = "anthropic"
api_key = "${FAKE_ANTHROPIC_KEY}"
base_url = "${anthropic.url}"
models = ["claude-sonnet-4-5", "claude-haiku-4-5"]

[[routes]]
name = "coder"
match = "coder-*"
model = "qwen2.5-coder:7b"
to = ["local"]
`);
const env = { PARLEY_UPSTREAMS: file, MODELS_REFRESH_S: "600", RATE_LIMIT_RPM: "0" };
const { json, call } = testApp(env);
const IDS = ["readme-llama-1m", "qwen2.5-coder:7b", "gpt-4o", "gpt-4o-mini", "claude-sonnet-4-5", "claude-opus-4-1", "coder-fast", "mock", "local/anything", "no-such-model"];

/** The upstream explain puts first, or null when it says the id routes nowhere. */
async function explained(id: string, user: ReturnType<typeof userDir>): Promise<string | null> {
  const { stdout, stderr, code } = await runCli(["routes", "explain", "--model", id, "--endpoint", "/v1/messages"], { cwd: user.dir, env: { ...user.env, ...env } });
  if (code === 1) {
    expect(stderr).toContain("is not routed to any upstream");
    return null;
  }
  expect(code).toBe(0);
  return /^ {2}1\. ([^:]+):/m.exec(stdout)![1]!;
}

test("explain's first target is the server's x-parley-upstream, id by id", async () => {
  // The server's discovery has asked the local server (as explain does).
  const deadline = Date.now() + 30_000;
  while (!((await (await call("/v1/models")).json()).data as { id: string }[]).some((m) => m.id === "readme-llama-1m")) {
    if (Date.now() > deadline) throw new Error("discovery never listed the local model");
    await Bun.sleep(50);
  }
  const user = userDir();
  const pairs: [string, string | null, string | null][] = [];
  for (const id of IDS) {
    const response = await json("/v1/messages", bodyFor("/v1/messages", id));
    await response.text();
    const served = response.status === 404 ? null : response.headers.get("x-parley-upstream");
    pairs.push([id, await explained(id, user), served]);
  }
  expect(pairs.map(([id, explain]) => [id, explain])).toEqual(pairs.map(([id, , served]) => [id, served]));
  // Both outcomes were seen: ids that route, and ids that do not (gpt-4o: the local server lacks it).
  expect(pairs.find(([id]) => id === "gpt-4o")![2]).toBeNull();
  expect(pairs.find(([id]) => id === "readme-llama-1m")![2]).toBe("local");
}, 120_000);
