import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { safeHeaders, safeUrl } from "../../src/cassettes/har.ts";
import { ConfigError, loadConfig } from "../../src/config.ts";
import { missing } from "../../src/routing/upstreams.ts";
import { writeToml } from "../upstreams/fleet.ts";

const TOML = `[upstreams.openai]
kind = "openai"
base_url = "https://api.openai.com/v1"
api_key = "\${OPENAI_KEY_NOT_SET_IN_CI}"

[upstreams.claude]
kind = "anthropic"
`;

describe("replay needs no keys (contract 16), the upstreams file as committed", () => {
  const load = (mode: string) => {
    const dir = mkdtempSync(join(tmpdir(), "parley-keyless-"));
    return loadConfig({ env: { HOME: dir, PARLEY_CONFIG_DIR: dir, PARLEY_DATA_DIR: dir, PARLEY_UPSTREAMS: writeToml(TOML).file, PARLEY_CASSETTES: join(dir, "cassettes"), PARLEY_CASSETTE_MODE: mode }, cwd: dir }).config;
  };

  test("replay: an unset ${VAR} and a missing api_key stand in, and every upstream counts as configured", () => {
    const { upstreams } = load("replay").upstreams;
    for (const name of ["openai", "claude"]) expect(missing(upstreams.find((u) => u.name === name)!)).toBeUndefined();
  });

  test("record and auto call out, so they still need the keys", () => {
    for (const mode of ["record", "auto"]) expect(() => load(mode)).toThrow(ConfigError);
  });
});

describe("what a cassette never holds", () => {
  test("a password in the upstream's URL, and the account's organization and project", () => {
    expect(safeUrl("http://alice:hunter2SuperSecret@127.0.0.1:8080/v1/chat/completions").url).not.toContain("hunter2");
    const kept = safeHeaders({ "openai-organization": "org-abc", "openai-project": "proj_abc", "anthropic-organization-id": "1234", "content-type": "application/json" }).map((h) => h.name);
    expect(kept).toEqual(["content-type"]);
  });
});
