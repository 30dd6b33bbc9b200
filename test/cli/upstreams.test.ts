import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { CLI, runCli, userDir } from "../lib/cli.ts";
import { startFakeBedrock } from "../lib/fake-bedrock.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";

const ollama = await startFakeOpenAI();
const groq = await startFakeOpenAI();
const bedrock = await startFakeBedrock();
afterAll(() => {
  ollama.stop();
  groq.stop();
  bedrock.stop();
});
beforeEach(() => {
  ollama.reset();
  groq.reset();
  bedrock.reset();
  ollama.catalogue.ids = ["llama3.2", "qwen2.5-coder:7b"];
  groq.catalogue.ids = ["llama3.2", "mixtral-8x7b"];
});

const GROQ_KEY = "gsk-groq-secret-ABCDEFGHIJKL";
const PASSWORD = "proxy-password-MNOPQRST";
const BEDROCK_SECRET = "fake-secret-access-key";

/** A new user's directory with a parley.toml: two OpenAI-compatible servers, one Bedrock account, one behind a proxy with a password. */
function withFile(text = toml()) {
  const user = userDir();
  writeFileSync(join(user.dir, "parley.toml"), text);
  writeFileSync(join(user.dir, ".env"), `GROQ_KEY=${GROQ_KEY}\n`);
  return user;
}

function toml() {
  return `# laptop
[upstreams.ollama]
kind = "openai"
base_url = "${ollama.url}"

[upstreams.groq]
kind = "openai"
base_url = "${groq.url}"
api_key = "\${GROQ_KEY}"

[upstreams.eu]
kind = "bedrock"
region = "eu-west-1"
access_key_id = "AKIAFAKEFAKEFAKE"
secret_access_key = "${BEDROCK_SECRET}"
endpoint_url = "${bedrock.url}"
models = ["anthropic.claude-3-haiku-20240307-v1:0"]

[upstreams.us]
kind = "bedrock"
region = "us-west-2"
models = ["amazon.nova-micro-v1:0"]

[upstreams.proxied]
kind = "openai"
base_url = "http://parley:${PASSWORD}@127.0.0.1:9/v1"
discover = false

[[routes]]
match = "llama*"
to = ["ollama", "groq"]
`;
}

const cli = (args: string[], user: ReturnType<typeof userDir>, env: Record<string, string> = {}) => runCli(args, { cwd: user.dir, env: { ...user.env, ...env } });

describe("parley upstreams", () => {
  test("a line per upstream: kind, URL or region, model count, status with what is missing; no secret", async () => {
    const user = withFile();
    const { stdout, stderr, code } = await cli(["upstreams"], user);
    expect({ stderr, code }).toEqual({ stderr: "", code: 0 });
    const [file, ...lines] = stdout.trimEnd().split("\n");
    expect(file).toBe(`# upstreams file: ${join(user.dir, "parley.toml")}`);
    expect(lines[0]).toMatch(/^NAME +KIND +URL OR REGION +MODELS +STATUS$/);
    // The file declares every upstream: the spec's alpha and beta, not configured, are left out and said so.
    expect(lines.map((l) => l.split(/ {2,}/)[0])).toEqual(["NAME", "ollama", "groq", "eu", "us", "proxied", "mock", "# not configured, not shown: alpha, beta (set ALPHA_* or BETA_* to use them)"]);
    expect(stdout).not.toContain("not configured: set ALPHA_API_KEY");
    expect(stdout).toContain(`ollama   openai   ${ollama.url}`);
    expect(stdout).toMatch(/^ollama .* 2 \(discovered\) +configured$/m);
    expect(stdout).toMatch(/^groq .* 2 \(discovered\) +configured$/m);
    // The region signs the calls: shown beside endpoint_url (contract 26).
    expect(stdout).toMatch(new RegExp(`^eu +bedrock +eu-west-1 ${bedrock.url.replace(/[./]/g, "\\$&")} +1 \\(configured\\) +configured$`, "m"));
    expect(stdout).toMatch(/^us +bedrock +us-west-2 +1 \(configured\) +configured$/m);
    expect(stdout).toMatch(/^proxied +openai +http:\/\/parley:\*\*\*\*@127\.0\.0\.1:9\/v1 +- \(discovery off\) +configured$/m);
    expect(stdout).toMatch(/^mock +mock +built-in +\d+ \(catalogue\) +configured$/m);
    // The key went with discovery: it is read, just never shown.
    expect(groq.catalogue.ids.length).toBe(2);
    for (const secret of [GROQ_KEY, PASSWORD, BEDROCK_SECRET]) expect(stdout).not.toContain(secret);
  });

  test("the spec's alpha and beta are listed when no file declares upstreams, and when configured", async () => {
    const bare = await cli(["upstreams"], userDir());
    expect(bare.stdout).toMatch(/^alpha +openai +https:\/\/api\.openai\.com\/v1 +- +not configured: set ALPHA_API_KEY/m);
    expect(bare.stdout).toMatch(/^beta +bedrock +- +- +not configured: set BETA_REGION/m);
    const configured = await cli(["upstreams"], withFile(), { ALPHA_API_KEY: "sk-alpha-0123456789", MODELS_REFRESH_S: "0" });
    expect(configured.stdout).toMatch(/^alpha +openai .* configured$/m);
    expect(configured.stdout).toContain("# not configured, not shown: beta (set BETA_* to use it)");
  });

  test("--json for scripts; an upstream that cannot be reached has no count", async () => {
    groq.catalogue.failing = true;
    try {
      const user = withFile();
      const { stdout, code } = await cli(["upstreams", "--json"], user);
      expect(code).toBe(0);
      const rows = JSON.parse(stdout);
      expect(rows).toContainEqual({ name: "ollama", kind: "openai", where: ollama.url, status: "configured", models: 2, models_source: "discovered" });
      expect(rows).toContainEqual({ name: "groq", kind: "openai", where: groq.url, status: "configured", models: null, models_source: null, models_note: "discovery failed" });
      expect(rows.find((r: { name: string }) => r.name === "eu").where).toBe(`eu-west-1 ${bedrock.url}`);
      expect(rows).toContainEqual({ name: "us", kind: "bedrock", where: "us-west-2", status: "configured", models: 1, models_source: "configured" });
      expect(rows.find((r: { name: string }) => r.name === "beta")).toMatchObject({ status: "not_configured", missing: expect.stringContaining("BETA_REGION"), models: null });
      for (const secret of [GROQ_KEY, PASSWORD, BEDROCK_SECRET]) expect(stdout).not.toContain(secret);
    } finally {
      groq.catalogue.failing = false;
    }
  });
});

describe("parley upstreams check", () => {
  test("a valid file: exit 0 and one line with its upstreams and routes", async () => {
    const user = withFile();
    const { stdout, stderr, code } = await cli(["upstreams", "check"], user);
    expect({ stdout, stderr, code }).toEqual({ stdout: `${join(user.dir, "parley.toml")}: ok, 5 upstreams (ollama, groq, eu, us, proxied), 1 route\n`, stderr: "", code: 0 });
    // No upstream is called to check a file.
    expect(ollama.received.length + groq.received.length + bedrock.received.length).toBe(0);
  });

  test("the file given, else PARLEY_UPSTREAMS, else ./parley.toml, else the config directory's", async () => {
    const user = userDir();
    writeFileSync(join(user.dir, "other.toml"), `[upstreams.lan]\nkind = "openai"\nbase_url = "http://10.0.0.2:8080/v1"\n`);
    expect((await cli(["upstreams", "check", "other.toml"], user)).stdout).toBe("other.toml: ok, 1 upstream (lan), 0 routes\n");
    expect((await cli(["upstreams", "check"], user, { PARLEY_UPSTREAMS: "other.toml" })).stdout).toBe("other.toml: ok, 1 upstream (lan), 0 routes\n");
    const none = await cli(["upstreams", "check"], user);
    expect(none.code).toBe(0);
    expect(none.stdout).toStartWith("no upstreams file");
    const configDir = join(user.dir, ".config", "parley");
    mkdirSync(configDir, { recursive: true });
    writeFileSync(join(configDir, "parley.toml"), `[upstreams.home]\nkind = "openai"\nbase_url = "http://127.0.0.1:11434/v1"\n`);
    expect((await cli(["upstreams", "check"], user)).stdout).toBe(`${join(configDir, "parley.toml")}: ok, 1 upstream (home), 0 routes\n`);
  });

  test("a mistake: exit 2 and the FILE:LINE line, nothing on stdout", async () => {
    const user = userDir();
    const cases: [string, string][] = [
      [`[upstreams.lan]\nkind = "openai"\nbase_ur = "http://a/v1"\n`, "bad.toml:3: unknown key 'base_ur' in [upstreams.lan] (kind openai) (did you mean 'base_url'?)"],
      [`[upstreams.lan]\nkind = "openai"\nbase_url = "http://a/v1"\n\n[[routes]]\nmatch = "*"\nto = ["lna"]\n`, "bad.toml:7: the route names no upstream 'lna' (did you mean 'lan'?)"],
      [`[upstreams.lan]\nkind = "openai"\nbase_url = "http://a/v1"\napi_key = "\${LAN_KEY}"\n`, "bad.toml:4: ${LAN_KEY} is not set (used in [upstreams.lan] api_key)"],
      // An unterminated string is on its own line, not the next one.
      [`[upstreams.lan]\nkind = "openai"\nbase_url = "http://a/v1\nretries = 2\n`, "bad.toml:3: Unterminated string"],
      [`[upstreams.lan]\nkind = openai\n`, "bad.toml:2: Strings must be quoted"],
    ];
    for (const [text, line] of cases) {
      writeFileSync(join(user.dir, "bad.toml"), text);
      const { stdout, stderr, code } = await cli(["upstreams", "check", "bad.toml"], user);
      expect({ stdout, code }).toEqual({ stdout: "", code: 2 });
      expect(stderr.trim().split("\n")).toHaveLength(1);
      expect(stderr).toContain(line);
    }
  });

  test("the settings around the file count: MODEL_ROUTES naming no upstream, a missing file", async () => {
    const user = withFile();
    const routes = await cli(["upstreams", "check"], user, { MODEL_ROUTES: "qwen*=olama" });
    expect(routes.code).toBe(2);
    expect(routes.stderr).toContain("MODEL_ROUTES=\"qwen*=olama\" is invalid: no upstream 'olama'");
    expect((await cli(["upstreams", "check"], user, { MODEL_ROUTES: "qwen*=ollama" })).code).toBe(0);
    const missing = await cli(["upstreams", "check", "nope.toml"], user);
    expect({ code: missing.code, stderr: missing.stderr }).toEqual({ code: 2, stderr: "parley: nope.toml: no such file\n" });
  });
});

describe("parley upstreams test", () => {
  test("one short call straight to the upstream: status, latency, the first words", async () => {
    const user = withFile();
    groq.next({ kind: "reply", text: "Hello there, friend, how are you today?" });
    const { stdout, stderr, code } = await cli(["upstreams", "test", "groq"], user);
    expect({ stderr, code }).toEqual({ stderr: "", code: 0 });
    expect(stdout).toMatch(new RegExp(`^groq \\(openai, ${groq.url.replace(/[./]/g, "\\$&")}\\), model llama3\\.2: ok in \\d+ ms \\(finish: stop, \\d+ → \\d+ tokens\\)\\n {2}Hello there, friend, how are you today\\?\\n$`));
    // Its first discovered model, 16 tokens at most, not streamed, with its own key; nothing to the others.
    expect(groq.received).toHaveLength(1);
    expect(groq.last().body).toMatchObject({ model: "llama3.2", max_tokens: 16 });
    expect(groq.last().body.stream).toBeFalsy();
    expect(groq.last().headers.get("authorization")).toBe(`Bearer ${GROQ_KEY}`);
    expect(stdout).not.toContain(GROQ_KEY);
    expect(ollama.received).toHaveLength(0);
  });

  test("--model picks the model; a Bedrock upstream is called with its own region and credentials", async () => {
    const user = withFile();
    expect((await cli(["upstreams", "test", "ollama", "--model", "qwen2.5-coder:7b"], user)).code).toBe(0);
    expect(ollama.last().body.model).toBe("qwen2.5-coder:7b");
    const { stdout, code } = await cli(["upstreams", "test", "eu"], user);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^eu \(bedrock, eu-west-1 http:\/\/127\.0\.0\.1:\d+\), model anthropic\.claude-3-haiku-20240307-v1:0: ok in \d+ ms/);
    expect(bedrock.received).toHaveLength(1);
    expect(bedrock.last().modelId).toBe("anthropic.claude-3-haiku-20240307-v1:0");
    expect(bedrock.last().headers.get("authorization")).toContain("/eu-west-1/bedrock/aws4_request");
  });

  test("a failing upstream: exit 1 with its message, called once (no retry)", async () => {
    const user = withFile();
    // A retry would get the default reply and succeed.
    groq.next({ kind: "error", status: 503, message: "The engine is currently overloaded." });
    const { stdout, stderr, code } = await cli(["upstreams", "test", "groq"], user, { UPSTREAM_RETRIES: "2" });
    expect({ stdout, code }).toEqual({ stdout: "", code: 1 });
    expect(stderr).toMatch(/^parley: groq \(openai, .*\), model llama3\.2: failed after \d+ ms \(HTTP 503\): .* The upstream said: The engine is currently overloaded\.\n$/);
    expect(groq.received).toHaveLength(1);
    // An upstream that quotes the key back: the key is masked.
    groq.next({ kind: "error", status: 401, message: `Invalid API Key: ${GROQ_KEY}` });
    const refused = await cli(["upstreams", "test", "groq"], user);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("(HTTP 401)");
    expect(refused.stderr).toContain("The upstream said: Invalid API Key: ****");
    expect(refused.stderr).not.toContain(GROQ_KEY);
    const unreachable = await cli(["upstreams", "test", "proxied", "--model", "m"], user);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toContain("could not be reached");
    expect(unreachable.stderr).not.toContain(PASSWORD);
  });

  test("what cannot be tried exits 2 and says why", async () => {
    const user = withFile();
    const typo = await cli(["upstreams", "test", "olama"], user);
    expect({ code: typo.code, stderr: typo.stderr }).toEqual({ code: 2, stderr: "parley: no upstream is named 'olama'; did you mean 'ollama'? (upstreams: alpha, beta, ollama, groq, eu, us, proxied, mock)\n" });
    const alpha = await cli(["upstreams", "test", "alpha"], user);
    expect(alpha.code).toBe(2);
    expect(alpha.stderr).toContain("the upstream 'alpha' (openai) is not configured: set ALPHA_API_KEY");
    const noModel = await cli(["upstreams", "test", "proxied"], user);
    expect(noModel.code).toBe(2);
    expect(noModel.stderr).toContain("pass --model ID");
  });
});

describe("parley models --all", () => {
  test("every upstream's models as <upstream>/<id>, an id two upstreams serve under each", async () => {
    const user = withFile();
    const all = await cli(["models", "--all", "--json"], user);
    expect(all.code).toBe(0);
    const ids = JSON.parse(all.stdout).map((m: { id: string }) => m.id);
    for (const id of ["ollama/llama3.2", "ollama/qwen2.5-coder:7b", "groq/llama3.2", "groq/mixtral-8x7b", "eu/anthropic.claude-3-haiku-20240307-v1:0"]) expect(ids).toContain(id);
    expect(ids.filter((id: string) => id.startsWith("alpha/") || id.startsWith("beta/"))).toEqual([]);
    expect(JSON.parse(all.stdout)).toContainEqual({ id: "groq/llama3.2", provider: "groq", owned_by: "local", source: "discovered" });
    // Without --all, an id is listed once, with the upstream its route sends it to.
    const once = JSON.parse((await cli(["models", "--json"], user)).stdout);
    expect(once.filter((m: { id: string }) => m.id === "llama3.2")).toEqual([{ id: "llama3.2", provider: "ollama", owned_by: "local", source: "discovered" }]);
    const table = await cli(["models", "--all"], user);
    expect(table.stdout).toMatch(/^groq\/mixtral-8x7b +groq +local +discovered$/m);
  });
});

describe("start-up stays lazy", () => {
  /** The source files a command loads, recorded by a Bun plugin preloaded into the CLI's process. */
  async function loads(args: string[], user: ReturnType<typeof userDir>): Promise<string[]> {
    const recorder = resolve(import.meta.dir, "../lib/record-loads.ts");
    const proc = Bun.spawn(["bun", "--no-env-file", "--preload", recorder, CLI, ...args], { cwd: user.dir, env: user.env, stdout: "pipe", stderr: "pipe", stdin: "ignore" });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(0);
    return [...stderr.matchAll(/^loaded (.+)$/gm)].map((m) => m[1]!.replace(/^.*\/src\//, "src/"));
  }

  test("--version loads no upstream code; upstreams check loads no provider", async () => {
    const user = withFile();
    const version = await loads(["--version"], user);
    expect(version).toContain("src/commands/main.ts");
    expect(version.filter((f) => f.startsWith("src/providers/"))).toEqual([]);
    const check = await loads(["upstreams", "check"], user);
    expect(check).toContain("src/commands/upstreams-check.ts");
    expect(check.filter((f) => /provider\.ts$|discovery|db\.ts/.test(f))).toEqual([]);
  });
});
