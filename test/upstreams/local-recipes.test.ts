import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { testApp } from "../lib/app.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { bodyFor, where, writeToml } from "./fleet.ts";

/**
 * docs/clients.md's local-model recipes, as written: its parley.toml (the URL pointed at a fake
 * llama-server), its MODEL_ALIASES for Claude Code and Codex, and opencode's `models` entry, each
 * reach the local server as the model it lists; gpt-4o, which it does not list, is not sent to it
 * (as docs/upstreams.md promises).
 */
const page = readFileSync(join(import.meta.dir, "../../docs/clients.md"), "utf8");
const section = page.slice(page.indexOf("## A local model with each agent"), page.indexOf("## OpenAI SDK and AI SDK"));
const block = (lang: string, n = 0) => [...section.matchAll(new RegExp("```" + lang + "\\n([\\s\\S]*?)```", "g"))][n]![1]!;

const local = await startFakeOpenAI();
afterAll(() => local.stop());
local.catalogue.ids = ["qwen3-coder-30b", "qwen2.5-coder-7b"];

const toml = block("toml").replace(/base_url = "[^"]*"/, `base_url = "${local.url}"`);
const claudeAliases = /MODEL_ALIASES '([^']+)'/.exec(block("sh"))![1]!;
const codexAlias = /\(`(gpt-5-codex=[^`]+)` in\s+`MODEL_ALIASES`\)/.exec(section)![1]!;
const codexModel = /^model = "([^"]+)"/m.exec(block("toml", 1))![1]!;
const opencodeModel = Object.keys(JSON.parse(block("json")).provider.parley.models)[0]!;

const { file } = writeToml(toml);
const { json, call } = testApp({ PARLEY_UPSTREAMS: file, MODEL_ALIASES: `${claudeAliases},${codexAlias}`, MODELS_REFRESH_S: "600", RATE_LIMIT_RPM: "0" });

test("each agent's recipe reaches the local server as a model it lists", async () => {
  const deadline = Date.now() + 30_000;
  while (!((await (await call("/v1/models")).json()).data as { id: string }[]).some((m) => m.id === "qwen3-coder-30b")) {
    if (Date.now() > deadline) throw new Error("discovery never listed the local models");
    await Bun.sleep(50);
  }
  const cases: [string, "/v1/messages" | "/v1/responses" | "/v1/chat/completions", string][] = [
    ["claude-sonnet-4-5", "/v1/messages", "qwen3-coder-30b"],
    ["claude-haiku-4-5", "/v1/messages", "qwen2.5-coder-7b"],
    [codexModel, "/v1/responses", "qwen3-coder-30b"],
    [opencodeModel, "/v1/chat/completions", "qwen3-coder-30b"],
    ["qwen3-coder-30b", "/v1/chat/completions", "qwen3-coder-30b"],
  ];
  for (const [model, path, sent] of cases) {
    const response = await json(path, bodyFor(path, model));
    expect({ model, ...where(response) }).toMatchObject({ model, status: 200, upstream: "local" });
    await response.text();
    expect(local.last().body.model).toBe(sent);
  }
  local.reset();
  const gpt = await json("/v1/chat/completions", bodyFor("/v1/chat/completions", "gpt-4o"));
  expect(gpt.status).toBe(404);
  expect(local.received.length).toBe(0);
});
