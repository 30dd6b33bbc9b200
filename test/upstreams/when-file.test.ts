import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, loadConfig } from "../../src/config.ts";

const OLLAMA = `[upstreams.ollama]
kind = "openai"
base_url = "http://127.0.0.1:11434/v1"
`;
const ROUTE = `${OLLAMA}
[[routes]]
name = "r"
to = ["ollama"]
`;

function load(toml: string, env: Record<string, string> = {}) {
  const dir = mkdtempSync(join(tmpdir(), "parley-when-"));
  const file = join(dir, "parley.toml");
  writeFileSync(file, toml);
  return { file, loaded: () => loadConfig({ env: { HOME: dir, PARLEY_CONFIG_DIR: join(dir, "config"), PARLEY_TRUST_CWD: "1", ...env }, cwd: dir }) };
}

describe("a route's when is checked with FILE:LINE (contract 13, 15)", () => {
  const cases: [name: string, toml: string, line: number, message: RegExp][] = [
    ["a misspelt condition, inline", `${ROUTE}when = { input_token_over = 60000 }\n`, 8, /unknown key 'input_token_over' in when \(did you mean 'input_tokens_over'\?\); known keys: input_tokens_over, thinking, tools, images, stream, endpoint, key, header/],
    ["a misspelt condition in [routes.when]", `${ROUTE}\n[routes.when]\nstream = true\nimage = true\n`, 11, /unknown key 'image' in when \(did you mean 'images'\?\)/],
    ["a misspelt dotted condition", `${ROUTE}when.thinkng = true\n`, 8, /unknown key 'thinkng' in when \(did you mean 'thinking'\?\)/],
    ["a string for a boolean", `${ROUTE}when = { thinking = "yes" }\n`, 8, /thinking in when must be true or false/],
    ["a negative token count", `${ROUTE}when = { input_tokens_over = -1 }\n`, 8, /input_tokens_over in when must be a whole number/],
    ["a token count as text", `${ROUTE}\n[routes.when]\ninput_tokens_over = "60k"\n`, 10, /input_tokens_over in when must be a whole number/],
    ["a number for a key label", `${ROUTE}when = { key = 7 }\n`, 8, /key in when must be a string/],
    ["header as a string", `${ROUTE}when = { header = "user-agent: claude-cli/*" }\n`, 8, /header in when must be a table of strings/],
    ["a header value that is not a string", `${ROUTE}\n[routes.when]\nheader = { x-team = 3 }\n`, 10, /header in when must be a table of strings/],
    ["a header name with a space", `${ROUTE}\n[routes.when.header]\n"user agent" = "claude-cli/*"\n`, 10, /'user agent' in when.header is not a header name/],
    ["a misspelt endpoint", `${ROUTE}when = { endpoint = "/v1/message" }\n`, 8, /endpoint '\/v1\/message' in when is not an endpoint that routes by model \(did you mean '\/v1\/messages'\?\); they are \/v1\/chat\/completions, \/v1\/messages, \/v1\/responses, \/v1\/completions, \/v1\/embeddings/],
    ["when as a string", `${ROUTE}when = "thinking"\n`, 8, /when must be a table/],
    ["the route's keys after [routes.when]", `${OLLAMA}\n[[routes]]\nname = "r"\n[routes.when]\nthinking = true\nto = ["ollama"]\n`, 9, /to = … follows \[routes\.when\], so it is read as a condition/],
    ["an unset variable in a condition", `${ROUTE}when = { key = "\${TEAM_LABEL}" }\n`, 8, /\$\{TEAM_LABEL\} is not set \(used in \[\[routes\]\] when\)/],
    ["the second route's when", `${ROUTE}when = { stream = true }\n\n[[routes]]\nto = ["ollama"]\nwhen = { tools = 1 }\n`, 12, /tools in when must be true or false/],
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
    });
  }

  test("every form of when reads the same: inline, a sub-table, dotted keys, a header sub-table; header names in any case", () => {
    const forms = [
      `${ROUTE}when = { thinking = true, header = { User-Agent = "claude-cli/*" } }\n`,
      `${ROUTE}\n[routes.when]\nthinking = true\nheader = { "user-agent" = "claude-cli/*" }\n`,
      `${ROUTE}when.thinking = true\nwhen.header.user-agent = "claude-cli/*"\n`,
      `${ROUTE}\n[routes.when]\nthinking = true\n[routes.when.header]\nUSER-AGENT = "claude-cli/*"\n`,
    ];
    for (const toml of forms) {
      const { routes } = load(toml).loaded().config.upstreams;
      expect(routes[0]!.when).toEqual({ thinking: true, header: { "user-agent": "claude-cli/*" } });
    }
  });

  test("a glob endpoint, a key glob, ${VAR}s and an empty when are accepted; an empty when is no condition", () => {
    const { routes } = load(`${ROUTE}when = { endpoint = "/v1/*", key = "\${TEAM}-*", input_tokens_over = 0 }\n\n[[routes]]\nto = ["ollama"]\nwhen = {}\n`, { TEAM: "blue" }).loaded().config.upstreams;
    expect(routes[0]!.when).toEqual({ endpoint: "/v1/*", key: "blue-*", input_tokens_over: 0 });
    expect(routes[1]!.when).toBeUndefined();
  });
});
