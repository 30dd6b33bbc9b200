import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";
import type { BedrockSettings } from "../../src/providers/bedrock/kind.ts";
import type { OpenAISettings } from "../../src/providers/openai/kind.ts";
import { userDir } from "../lib/cli.ts";
import { serveFails } from "../server/serve-process.ts";

/** A user's directory: HOME, a config directory, and the working directory holding parley.toml (and .env, config.env when given). */
function user(toml: string, files: { dotenv?: string; configEnv?: string } = {}) {
  const dir = mkdtempSync(join(tmpdir(), "parley-file-"));
  const configDir = join(dir, "config");
  mkdirSync(configDir);
  const file = join(dir, "parley.toml");
  writeFileSync(file, toml);
  if (files.dotenv !== undefined) writeFileSync(join(dir, ".env"), files.dotenv);
  if (files.configEnv !== undefined) writeFileSync(join(configDir, "config.env"), files.configEnv);
  return { dir, file, env: { HOME: dir, PARLEY_CONFIG_DIR: configDir, PARLEY_DATA_DIR: join(dir, "data"), PARLEY_TRUST_CWD: "1" } };
}

/** Loads the configuration as `serve` does, from the user's working directory. */
function load(toml: string, env: Record<string, string> = {}, files: { dotenv?: string; configEnv?: string } = {}) {
  const u = user(toml, files);
  return { ...u, loaded: () => loadConfig({ env: { ...u.env, ...env }, cwd: u.dir }) };
}

/** The one line loadConfig refuses the file with. */
function refusal(toml: string, env: Record<string, string> = {}): string {
  const { loaded } = load(toml, env);
  try {
    loaded();
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return (error as Error).message;
  }
  throw new Error("the file was accepted");
}

const OLLAMA = `[upstreams.ollama]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
`;

describe("every mistake in parley.toml is refused with FILE:LINE (contract 13)", () => {
  // [text, line, what the message says]
  const cases: [name: string, toml: string, line: number, message: RegExp][] = [
    ["an unterminated string", `${OLLAMA}\n[upstreams.groq]\nkind = "openai"\nbase_url = "https://api.groq.com/openai/v1\napi_key = "gsk"\n`, 7, /Unterminated string/],
    ["a value missing after a multi-line array", `${OLLAMA}models = [\n  "qwen2.5-coder:7b",\n  "llama3",\n]\ntimeout_ms =\ndiscover = true\n`, 8, /Missing value after '='/],
    ["a key given twice", `${OLLAMA}api_key = "a"\napi_key = "b"\n`, 5, /Cannot redefine key 'api_key'/],
    ["an unclosed table header", `${OLLAMA}\n[upstreams.groq\nkind = "openai"\n`, 5, /: the table header on this line is not closed: end it with '\]'$/],
    ["an unclosed [[routes]] header", `${OLLAMA}\n[[routes\nto = ["ollama"]\n`, 5, /: the \[\[…\]\] header on this line is not closed: end it with '\]\]'$/],
    ["an unclosed array", `${OLLAMA}models = ["a", "b"\n`, 4, /: Expected ',' or '\]' in an array before the end of the (line|file)$/],
    ["a table given twice", `${OLLAMA}\n[upstreams.other]\nkind = "openai"\nbase_url = "http://x"\n\n[upstreams.ollama]\nkind = "openai"\n`, 9, /Cannot redefine table/],
    ["a syntax error after a multi-line string", `${OLLAMA}headers = { X-Note = """ok""" }\n\n[[routes]]\nmatch = "a = = b"\nto = ["ollama"]\nname = \n`, 9, /Missing value/],
    ["a misspelt key", `${OLLAMA}api_kye = "sk-x"\n`, 4, /unknown key 'api_kye' in \[upstreams\.ollama\] \(kind openai\) \(did you mean 'api_key'\?\)/],
    ["a misspelt bedrock key", `${OLLAMA}\n[upstreams.us]\nkind = "bedrock"\nregion = "us-east-1"\naccess_key = "AKIA"\n`, 8, /unknown key 'access_key' .*did you mean 'access_key_id'/],
    ["a key of another kind", `${OLLAMA}region = "us-east-1"\n`, 4, /unknown key 'region' in \[upstreams\.ollama\] \(kind openai\)/],
    ["a misspelt key in a route", `${OLLAMA}\n[[routes]]\nmach = "gpt-*"\nto = ["ollama"]\n`, 6, /unknown key 'mach' in \[\[routes\]\] \(did you mean 'match'\?\)/],
    ["a misspelt key in a target", `${OLLAMA}\n[[routes]]\nto = [{ upstream = "ollama", wieght = 2 }]\n`, 6, /unknown key 'wieght' in a target of to \(did you mean 'weight'\?\)/],
    ["a misspelt top-level table", `${OLLAMA}\n[upstream.groq]\nkind = "openai"\n`, 5, /unknown key 'upstream' at the top of the file \(did you mean 'upstreams'\?\)/],
    ["a number as a string", `${OLLAMA}timeout_ms = "30000"\n`, 4, /timeout_ms in \[upstreams\.ollama\] must be a whole number/],
    ["a string for a list", `${OLLAMA}models = "llama3"\n`, 4, /models in \[upstreams\.ollama\] must be an array of strings/],
    ["a string for a boolean", `${OLLAMA}discover = "no"\n`, 4, /discover .* must be true or false/],
    ["a number in a table of strings", `${OLLAMA}query = { api-version = 2024 }\n`, 4, /query .* must be a table of strings/],
    ["a negative retry count", `${OLLAMA}retries = -1\n`, 4, /retries .* must be a whole number/],
    ["a weight of zero", `${OLLAMA}\n[[routes]]\nto = [{ upstream = "ollama", weight = 0 }]\n`, 6, /weight must be a positive integer/],
    ["a wrong type in the second upstream with the same key", `${OLLAMA}timeout_ms = 1000\n\n[upstreams.groq]\nkind = "openai"\nbase_url = "http://x"\ntimeout_ms = "1000"\n`, 9, /timeout_ms in \[upstreams\.groq\] must be a whole number/],
    ["an unknown kind", `${OLLAMA}\n[upstreams.vllm]\nkind = "opneai"\nbase_url = "http://x"\n`, 6, /unknown kind "opneai" \(did you mean "openai"\?\); kinds are "openai", "bedrock"/],
    ["the mock's kind", `[upstreams.fake]\nkind = "mock"\n`, 2, /unknown kind "mock"/],
    ["no kind", `${OLLAMA}\n[upstreams.vllm]\nbase_url = "http://x"\n`, 5, /\[upstreams\.vllm\] needs kind = "openai", "bedrock"/],
    ["an openai upstream without base_url", `${OLLAMA}\n[upstreams.vllm]\nkind = "openai"\napi_key = "x"\n`, 5, /\[upstreams\.vllm\] \(kind openai\) needs base_url/],
    ["a bedrock upstream without region", `${OLLAMA}\n[upstreams.us]\nkind = "bedrock"\nprofile = "work"\n`, 5, /\[upstreams\.us\] \(kind bedrock\) needs region/],
    ["a route naming no upstream", `${OLLAMA}\n[[routes]]\nmatch = "qwen*"\nto = ["olama"]\n`, 7, /the route names no upstream 'olama' \(did you mean 'ollama'\?\)/],
    ["a target table naming no upstream", `${OLLAMA}\n[[routes]]\nmatch = "a"\nto = ["ollama"]\n\n[[routes]]\nmatch = "b"\nto = [{ upstream = "groq", weight = 1 }]\n`, 11, /the route names no upstream 'groq'/],
    ["a route without to", `${OLLAMA}\n[[routes]]\nmatch = "qwen*"\n`, 5, /a route needs to =/],
    ["an unset variable", `${OLLAMA}api_key = "\${OLLAMA_KEY}"\n`, 4, /\$\{OLLAMA_KEY\} is not set \(used in \[upstreams\.ollama\] api_key\)/],
    ["an unset variable in a header table", `${OLLAMA}\n[upstreams.ollama.headers]\nX-Team = "\${TEAM}"\n`, 5, /\$\{TEAM\} is not set/],
    ["an unset variable in a route", `${OLLAMA}\n[[routes]]\nmatch = "a"\nmodel = "\${ROUTED_MODEL}"\nto = ["ollama"]\n`, 7, /\$\{ROUTED_MODEL\} is not set \(used in \[\[routes\]\] model\)/],
    ["the reserved name mock", `${OLLAMA}\n[upstreams.mock]\nkind = "openai"\nbase_url = "http://x"\n`, 5, /the name 'mock' is parley's built-in mock/],
    ["an upper-case name", `${OLLAMA}\n[upstreams.MyServer]\nkind = "openai"\nbase_url = "http://x"\n`, 5, /upstream name 'MyServer' must be lower-case/],
    ["a name starting with a dash", `${OLLAMA}\n[upstreams."-x"]\nkind = "openai"\nbase_url = "http://x"\n`, 5, /upstream name '-x'/],
    ["a name with a dot", `${OLLAMA}\n[upstreams."my.server"]\nkind = "openai"\nbase_url = "http://x"\n`, 5, /upstream name 'my\.server'/],
    ["an inline table whose name is in an earlier line", `[upstreams]\nollama = { kind = "openai", base_url = "http://localhost:11434/v1" }\nlocal = { kind = "opneai", base_url = "http://127.0.0.1:8080/v1" }\n`, 3, /unknown kind "opneai"/],
    ["routes as a table", `${OLLAMA}\n[routes]\nto = ["ollama"]\n`, 5, /routes must be an array of tables: \[\[routes\]\]/],
    ["a misspelt key in a file with CRLF line ends", `${OLLAMA}\n[upstreams.groq]\nkind = "openai"\nbase_url = "http://x"\napi_kye = "x"\n`.replaceAll("\n", "\r\n"), 8, /unknown key 'api_kye'/],
    ["a syntax error in a CRLF file", `${OLLAMA}\n[upstreams.groq]\nkind = "openai"\nbase_url =\n`.replaceAll("\n", "\r\n"), 7, /Missing value/],
    ["a bad system_messages", `${OLLAMA}system_messages = "bottom"\n`, 4, /system_messages .* must be "inline" \(or "in-place"\) or "top"/],
  ];

  for (const [name, toml, line, message] of cases) {
    test(`${name}: line ${line}`, () => {
      const { file, loaded } = load(toml);
      let thrown: unknown;
      try {
        loaded();
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(ConfigError);
      const text = (thrown as Error).message;
      expect(text).not.toContain("\n");
      expect(text).toStartWith(`${file}:${line}: `);
      expect(text).toMatch(message);
      expect(text).not.toContain("TOML Parse error");
    });
  }

  test("a secret is never quoted back in an error", () => {
    const text = refusal(`${OLLAMA}api_key = "sk-very-secret-value"\napi_kye = 1\n`);
    expect(text).toContain("api_kye");
    expect(text).not.toContain("sk-very-secret-value");
  });

  test("PARLEY_UPSTREAMS naming no file is refused", () => {
    expect(() => testLoad({ PARLEY_UPSTREAMS: "/nonexistent/parley.toml" })).toThrow(/PARLEY_UPSTREAMS="\/nonexistent\/parley.toml": no such file/);
  });

  test("a route naming alpha or beta (declared by the variables) is accepted", () => {
    const config = load(`${OLLAMA}\n[[routes]]\nmatch = "gpt-*"\nto = ["alpha", "beta", "mock", "ollama"]\n`).loaded().config;
    expect(config.upstreams.routes[0]!.to.map((t) => t.upstream)).toEqual(["alpha", "beta", "mock", "ollama"]);
  });
});

function testLoad(env: Record<string, string>) {
  const u = user("");
  return loadConfig({ env: { ...u.env, ...env }, cwd: u.dir });
}

describe("${VAR} in parley.toml is read like every other setting", () => {
  const toml = `${OLLAMA}api_key = "\${OLLAMA_KEY}"\nheaders = { X-Team = "team-\${TEAM}" }\n\n[upstreams.us]\nkind = "bedrock"\nregion = "\${AWS_REGION_US}"\naccess_key_id = "\${US_KEY_ID}"\nsecret_access_key = "\${US_SECRET}"\n\n[[routes]]\nmatch = "coder"\nmodel = "\${CODER_MODEL}"\nto = ["ollama"]\n`;
  const vars = "OLLAMA_KEY=from-dotenv\nTEAM=red\nAWS_REGION_US=eu-west-1\nUS_KEY_ID=AKIADOTENV\nUS_SECRET=dotenv-secret\nCODER_MODEL=qwen2.5-coder:7b\n";

  const settings = (config: ReturnType<typeof loadConfig>["config"]) => {
    const byName = new Map(config.upstreams.upstreams.map((u) => [u.name, u]));
    return { ollama: byName.get("ollama")!, us: byName.get("us")!.settings as BedrockSettings };
  };

  test("from ./.env", () => {
    const { config } = load(toml, {}, { dotenv: vars }).loaded();
    const { ollama, us } = settings(config);
    expect((ollama.settings as OpenAISettings).apiKey).toBe("from-dotenv");
    expect(ollama.headers).toEqual({ "X-Team": "team-red" });
    expect(us).toMatchObject({ region: "eu-west-1", accessKeyId: "AKIADOTENV", secretAccessKey: "dotenv-secret" });
    expect(config.upstreams.routes[0]!.model).toBe("qwen2.5-coder:7b");
  });

  test("from the environment, which wins over ./.env and the user config file", () => {
    const { config } = load(toml, { OLLAMA_KEY: "from-env", TEAM: "blue" }, { dotenv: vars.replace("TEAM=red\n", ""), configEnv: "TEAM=green\nOLLAMA_KEY=from-config-file\n" }).loaded();
    expect((settings(config).ollama.settings as OpenAISettings).apiKey).toBe("from-env");
    expect(settings(config).ollama.headers).toEqual({ "X-Team": "team-blue" });
  });

  test("from the user config file, after ./.env", () => {
    const { config } = load(toml, {}, { dotenv: vars.replace("OLLAMA_KEY=from-dotenv\n", ""), configEnv: "OLLAMA_KEY=from-config-file\nTEAM=green\n" }).loaded();
    expect((settings(config).ollama.settings as OpenAISettings).apiKey).toBe("from-config-file");
    expect(settings(config).ollama.headers).toEqual({ "X-Team": "team-red" });
  });

  test("an unset one is refused with its line", () => {
    expect(refusal(toml, { OLLAMA_KEY: "k", TEAM: "t", AWS_REGION_US: "us-east-1", US_KEY_ID: "a", CODER_MODEL: "m" })).toMatch(/parley\.toml:11: \$\{US_SECRET\} is not set \(used in \[upstreams\.us\] secret_access_key\)$/);
  });
});

describe("parley serve with a bad parley.toml", () => {
  test("exits 2 with the one FILE:LINE line", async () => {
    const u = userDir();
    const file = join(u.dir, "parley.toml");
    writeFileSync(file, `${OLLAMA}\n[[routes]]\nmatch = "qwen*"\nto = ["ollama"\n`);
    const { code, stderr, stdout } = await serveFails(["--port", "0"], { cwd: u.dir, env: { ...u.env, API_KEY: "sk-test-0123456789abcdef" } });
    expect(code).toBe(2);
    expect(stdout).toBe("");
    const lines = stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}:7: `));
  });

  test("--upstreams FILE names the file, and its errors carry that name", async () => {
    const u = userDir();
    const file = join(u.dir, "team.toml");
    writeFileSync(file, `${OLLAMA}\n[upstreams.us]\nkind = "bedrock"\n`);
    const { code, stderr } = await serveFails(["--port", "0", "--upstreams", file], { cwd: u.dir, env: { ...u.env, API_KEY: "sk-test-0123456789abcdef" } });
    expect(code).toBe(2);
    expect(stderr.trim()).toMatch(/team\.toml:5: \[upstreams\.us\] \(kind bedrock\) needs region$/);
  });
});

describe("system_messages: one spelling accepted everywhere", () => {
  const systemOnTop = (toml: string, env: Record<string, string> = {}, name = "ollama") =>
    (load(toml, env).loaded().config.upstreams.upstreams.find((u) => u.name === name)!.settings as OpenAISettings).systemOnTop;
  for (const [spelling, top] of [["inline", false], ["in-place", false], ["top", true]] as const) {
    test(`"${spelling}" in the file and in ALPHA_SYSTEM_MESSAGES`, () => {
      expect(systemOnTop(`${OLLAMA}system_messages = "${spelling}"\n`)).toBe(top);
      expect(systemOnTop("", { ALPHA_SYSTEM_MESSAGES: spelling }, "alpha")).toBe(top);
    });
  }
});
