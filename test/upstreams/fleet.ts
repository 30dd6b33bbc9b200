import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "../lib/app.ts";
import { startFakeBedrock, type FakeAccount } from "../lib/fake-bedrock.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";

/**
 * Three OpenAI-compatible servers and two Bedrock accounts in two regions, each a real local fake,
 * declared in one parley.toml. Each Bedrock fake checks signatures against its own account only.
 */
export const US: FakeAccount = { region: "us-east-1", accessKeyId: "AKIAUSEASTACCOUNT01", secretAccessKey: "us-secret-0123456789" };
export const EU: FakeAccount = { region: "eu-west-1", accessKeyId: "AKIAEUWESTACCOUNT02", secretAccessKey: "eu-secret-9876543210" };

/** What the file's `${VAR}`s read. */
export const SECRETS = { OPENROUTER_KEY: "sk-or-v1-openrouter-key", EU_SECRET: EU.secretAccessKey };

export async function startFakes() {
  const [ollama, openrouter, groq, us, eu] = await Promise.all([startFakeOpenAI(), startFakeOpenAI(), startFakeOpenAI(), startFakeBedrock(US), startFakeBedrock(EU)]);
  const all = { ollama, openrouter, groq, us, eu };
  return {
    ...all,
    reset: () => Object.values(all).forEach((f) => f.reset()),
    stop: () => Object.values(all).forEach((f) => f.stop()),
  };
}

export type Fakes = Awaited<ReturnType<typeof startFakes>>;

/** The upstreams, in this order: ollama, openrouter, groq, bedrock-us, bedrock-eu. */
export function upstreamsToml(f: Fakes): string {
  return `# three OpenAI-compatible servers and two Bedrock accounts
[upstreams.ollama]
kind = "openai"
base_url = "${f.ollama.url}"
models = ["qwen2.5-coder:7b", "shared-model", "routed-listed", "claude-local"]

[upstreams.openrouter]
kind = "openai"
base_url = "${f.openrouter.url}"
api_key = "\${OPENROUTER_KEY}"
models = ["shared-model", "gpt-4o"]

[upstreams.groq]
kind = "openai"
base_url = "${f.groq.url}"
api_key = "gsk-groq-key"
discover = false

[upstreams.bedrock-us]
kind = "bedrock"
region = "${US.region}"
access_key_id = "${US.accessKeyId}"
secret_access_key = "${US.secretAccessKey}"
endpoint_url = "${f.us.url}"
discover = false

[upstreams.bedrock-eu]
kind = "bedrock"
region = "${EU.region}"
access_key_id = "${EU.accessKeyId}"
secret_access_key = "\${EU_SECRET}"
endpoint_url = "${f.eu.url}"
discover = false
`;
}

/** A route for each kind of target list the tests use. */
export const ROUTES = `
[[routes]]
name = "coder"
match = "coder-*"
to = ["groq", "ollama"]
model = "qwen2.5-coder:7b"

[[routes]]
match = "big-*"
to = [{ upstream = "openrouter", model = "meta-llama/llama-3.3-70b-instruct" }, "groq"]

[[routes]]
name = "routed"
match = "routed-*"
to = ["groq"]

[[routes]]
name = "pair"
match = "pair-*"
to = ["ollama", "openrouter"]

[[routes]]
name = "bedrock-pair"
match = "twin-*"
model = "claude-sonnet-4-5"
to = ["bedrock-us", "bedrock-eu"]

[[routes]]
name = "spread"
match = "spread"
to = [{ upstream = "ollama", weight = 3 }, { upstream = "openrouter", weight = 1 }]
`;

/** A directory holding a parley.toml with this text. */
export function writeToml(text: string, dir = mkdtempSync(join(tmpdir(), "parley-upstreams-"))) {
  const file = join(dir, "parley.toml");
  writeFileSync(file, text);
  return { dir, file };
}

/** parley, in process, with the fakes declared in a parley.toml (and `routes`), and `env` on top. */
export function fleetApp(fakes: Fakes, env: Record<string, string> = {}, routes = ROUTES) {
  const { file } = writeToml(upstreamsToml(fakes) + routes);
  return { ...testApp({ PARLEY_UPSTREAMS: file, ...SECRETS, ...env }), file };
}

export type Endpoint = "/v1/chat/completions" | "/v1/messages" | "/v1/responses";

/** The smallest body each endpoint takes for `model`. */
export function bodyFor(path: Endpoint, model: string, stream = false): Record<string, unknown> {
  if (path === "/v1/messages") return { model, max_tokens: 32, messages: [{ role: "user", content: "hi" }], stream };
  if (path === "/v1/responses") return { model, input: "hi", stream };
  return { model, messages: [{ role: "user", content: "hi" }], stream };
}

/** What the reply says about where it went. */
export const where = (response: Response) => ({
  status: response.status,
  upstream: response.headers.get("x-parley-upstream"),
  attempts: response.headers.get("x-parley-attempts"),
  route: response.headers.get("x-parley-route"),
});
