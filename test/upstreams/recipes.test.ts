import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeBedrock, type FakeAccount } from "../lib/fake-bedrock.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { testApp } from "../lib/app.ts";
import { where, writeToml } from "./fleet.ts";

/**
 * The recipes of docs/upstreams.md "Routing by what a request needs", each run as written: its
 * upstreams are pointed at local fakes (OpenAI-compatible ones at fake servers, Bedrock ones at a
 * fake account in their region), everything else in the file is kept.
 */
const page = readFileSync(join(import.meta.dir, "../../docs/upstreams.md"), "utf8");
const section = page.slice(page.indexOf("## Routing by what a request needs"), page.indexOf("\n## ", page.indexOf("## Routing by what a request needs") + 3));
const recipes = new Map([...section.matchAll(/^### (.+)\n[\s\S]*?```toml\n([\s\S]*?)```/gm)].map((m) => [m[1]!, m[2]!]));

const ACCOUNT: FakeAccount = { region: "us-east-1", accessKeyId: "AKIARECIPEACCOUNT01", secretAccessKey: "recipe-secret-0123456789" };
const openai = await Promise.all([1, 2, 3, 4].map(() => startFakeOpenAI()));
const alpha = await startFakeOpenAI();
const bedrock = await startFakeBedrock(ACCOUNT);
afterAll(() => [...openai, alpha, bedrock].forEach((f) => f.stop()));
beforeEach(() => [...openai, alpha, bedrock].forEach((f) => f.reset()));

const TEAM_KEY = "sk-team-a-recipe-0001";
const SECRETS = { OPENROUTER_API_KEY: "sk-or", DEEPSEEK_API_KEY: "sk-ds", OPENAI_API_KEY: "sk-oa", TEAM_A_KEY: "sk-azure" };

/** The recipe as a running parley: each OpenAI-compatible upstream is one of the fakes, in order of declaration. */
function run(heading: string) {
  const text = recipes.get(heading);
  if (!text) throw new Error(`docs/upstreams.md has no recipe "${heading}" (it has: ${[...recipes.keys()].join("; ")})`);
  const doc = Bun.TOML.parse(text) as { upstreams: Record<string, Record<string, unknown>>; routes?: Record<string, unknown>[] };
  const fakes = new Map<string, (typeof openai)[number]>();
  for (const [name, table] of Object.entries(doc.upstreams)) {
    if (table.kind === "openai") {
      const fake = openai[fakes.size]!;
      fakes.set(name, fake);
      table.base_url = fake.url;
    } else {
      expect(table.region).toBe(ACCOUNT.region);
      delete table.profile;
      Object.assign(table, { access_key_id: ACCOUNT.accessKeyId, secret_access_key: ACCOUNT.secretAccessKey, endpoint_url: bedrock.url, discover: false });
    }
  }
  const { file } = writeToml(toToml(doc));
  // alpha (the spec's variables) stands for "as before" beside the file.
  const app = testApp({ PARLEY_UPSTREAMS: file, ALPHA_BASE_URL: alpha.url, ALPHA_API_KEY: "sk-alpha", API_KEYS: `team-a=${TEAM_KEY}:chat`, ...SECRETS });
  const fake = (name: string) => fakes.get(name)!;
  return { ...app, fake };
}

/** Sends it and reads the whole answer; says where it went and as which model. */
async function ask(app: ReturnType<typeof run>, path: string, body: Record<string, unknown>, init: { key?: string; headers?: Record<string, string> } = {}) {
  const response = await app.json(path, body, init);
  const text = await response.text();
  if (response.status !== 200) throw new Error(`${response.status} ${text}`);
  return { ...where(response), model: response.headers.get("x-parley-model") };
}

const messages = (model: string, content: unknown = "hi", extra: Record<string, unknown> = {}) => ({ model, max_tokens: 4096, messages: [{ role: "user", content }], ...extra });
const CLAUDE_CODE = { "user-agent": "claude-cli/2.0.14 (external, cli)" };

describe("the recipes of docs/upstreams.md, run as written", () => {
  test("every recipe is a whole parley.toml that routes", () => {
    expect([...recipes.keys()]).toEqual([
      "Claude Code's background calls to a local model",
      "Long contexts to a long-context model",
      "Thinking calls to a larger model",
      "Images to a vision model",
      "One team's key to one upstream",
      "Codex: short calls to a local model, long ones to OpenAI",
    ]);
  });

  test("Claude Code's background calls go to Ollama; its main turns and other clients' haiku calls do not", async () => {
    const app = run("Claude Code's background calls to a local model");
    for (const stream of [false, true]) {
      expect(await ask(app, "/v1/messages", messages("claude-haiku-4-5", "a title for this", { stream }), { headers: CLAUDE_CODE })).toMatchObject({ upstream: "ollama", route: "background", model: "qwen2.5-coder:7b" });
      expect(app.fake("ollama").last().body.model).toBe("qwen2.5-coder:7b");
    }
    expect(await ask(app, "/v1/messages", messages("claude-sonnet-4-5"), { headers: CLAUDE_CODE })).toMatchObject({ upstream: "bedrock", route: null });
    expect(await ask(app, "/v1/messages", messages("claude-haiku-4-5"))).toMatchObject({ upstream: "bedrock", route: null });
  });

  test("calls over 60,000 input tokens go to the long-context model, shorter ones as before", async () => {
    const app = run("Long contexts to a long-context model");
    const long = "lorem ipsum dolor sit amet ".repeat(13_000);
    expect(await ask(app, "/v1/messages", messages("claude-sonnet-4-5", long))).toMatchObject({ upstream: "openrouter", route: "long", model: "google/gemini-2.5-pro" });
    expect(app.fake("openrouter").last().body.model).toBe("google/gemini-2.5-pro");
    expect(await ask(app, "/v1/messages", messages("claude-sonnet-4-5", long.slice(0, 20_000)))).toMatchObject({ upstream: "bedrock", route: null });
  });

  test("thinking calls to Sonnet go to Opus, the others to Sonnet", async () => {
    const app = run("Thinking calls to a larger model");
    const thinking = { thinking: { type: "enabled", budget_tokens: 2048 } };
    for (const stream of [false, true]) {
      const hard = await ask(app, "/v1/messages", messages("claude-sonnet-4-5", "prove it", { ...thinking, stream }));
      expect(hard).toMatchObject({ upstream: "bedrock", route: "think-harder" });
      expect(hard.model).toStartWith("us.anthropic.claude-opus-4-6");
    }
    expect(bedrock.last().modelId).toStartWith("us.anthropic.claude-opus-4-6");
    const easy = await ask(app, "/v1/messages", messages("claude-sonnet-4-5"));
    expect(easy).toMatchObject({ upstream: "bedrock", route: null });
    expect(easy.model).toStartWith("us.anthropic.claude-sonnet-4-5");
  });

  test("calls with an image go to the vision model, the rest to DeepSeek", async () => {
    const app = run("Images to a vision model");
    const image = [{ type: "text", text: "what is this" }, { type: "image_url", image_url: { url: "data:image/png;base64,iVBORw0KGgo=" } }];
    for (const stream of [false, true]) {
      expect(await ask(app, "/v1/chat/completions", { model: "deepseek-chat", stream, messages: [{ role: "user", content: image }] })).toMatchObject({ upstream: "openai", route: "vision", model: "gpt-4o" });
    }
    expect(app.fake("openai").last().body.model).toBe("gpt-4o");
    expect(await ask(app, "/v1/chat/completions", { model: "deepseek-chat", messages: [{ role: "user", content: "hi" }] })).toMatchObject({ upstream: "deepseek", route: "deepseek" });
  });

  test("the team's key goes to its upstream whatever the model; other keys as before", async () => {
    const app = run("One team's key to one upstream");
    expect(await ask(app, "/v1/chat/completions", { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] }, { key: TEAM_KEY })).toMatchObject({ upstream: "team-a", route: "team-a" });
    expect(await ask(app, "/v1/messages", messages("claude-sonnet-4-5"), { key: TEAM_KEY })).toMatchObject({ upstream: "team-a", route: "team-a" });
    expect(await ask(app, "/v1/chat/completions", { model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })).toMatchObject({ upstream: "alpha", route: null });
  });

  test("Codex's short calls go to Ollama, its long ones to OpenAI", async () => {
    const app = run("Codex: short calls to a local model, long ones to OpenAI");
    const codex = (input: string, stream = false) => ({ model: "gpt-5-codex", input, stream, reasoning: { effort: "medium" } });
    for (const stream of [false, true]) {
      expect(await ask(app, "/v1/responses", codex("fix the test", stream))).toMatchObject({ upstream: "ollama", route: "codex-local", model: "gpt-oss:20b" });
    }
    expect(await ask(app, "/v1/responses", codex("lorem ipsum dolor sit amet ".repeat(21_000)))).toMatchObject({ upstream: "openai", route: "codex-long" });
    // Another endpoint: neither route.
    expect(await ask(app, "/v1/chat/completions", { model: "gpt-5", messages: [{ role: "user", content: "hi" }] })).toMatchObject({ route: null });
  });
});

/** The parsed file written back as TOML (values inline). */
function toToml(doc: { upstreams: Record<string, Record<string, unknown>>; routes?: Record<string, unknown>[] }): string {
  const value = (v: unknown): string => {
    if (typeof v === "string") return JSON.stringify(v);
    if (Array.isArray(v)) return `[${v.map(value).join(", ")}]`;
    if (typeof v === "object" && v !== null) return `{ ${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)} = ${value(x)}`).join(", ")} }`;
    return String(v);
  };
  const table = (head: string, entries: Record<string, unknown>) => `${head}\n${Object.entries(entries).map(([k, v]) => `${k} = ${value(v)}`).join("\n")}\n`;
  return [
    ...Object.entries(doc.upstreams).map(([name, t]) => table(`[upstreams.${name}]`, t)),
    ...(doc.routes ?? []).map((r) => table("[[routes]]", r)),
  ].join("\n");
}
