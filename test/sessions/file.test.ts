import { describe, expect, test } from "bun:test";
import { readUpstreamsFile } from "../../src/routing/upstreams-file.ts";

const FILE = `[upstreams.one]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"

[upstreams.two]
kind = "openai"
base_url = "http://127.0.0.1:9/v2"

[[routes]]
name = "pair"
to = [{ upstream = "one", weight = 1 }, { upstream = "two", weight = 1 }]
`;

const read = (extra: string) => readUpstreamsFile("parley.toml", FILE + extra, () => undefined);

describe("the route keys of contract 22 in parley.toml", () => {
  test("affinity, affinity_ttl_s and prompt_cache are read", () => {
    expect(read('affinity = "none"\naffinity_ttl_s = 60\nprompt_cache = "off"\n').routes[0]).toMatchObject({ affinity: "none", affinityTtlS: 60, promptCache: "off" });
    expect(read("").routes[0]).not.toHaveProperty("affinity");
  });

  for (const [line, message] of [
    ['affinity = "sticky"', 'parley.toml:12: affinity in [[routes]] must be "session" or "none", not "sticky"'],
    ["affinity_ttl_s = 0", "parley.toml:12: affinity_ttl_s in [[routes]] must be from 1 to 86400 seconds, not 0"],
    ['affinity_ttl_s = "5m"', "parley.toml:12: affinity_ttl_s in [[routes]] must be a whole number"],
    ['prompt_cache = "on"', 'parley.toml:12: prompt_cache in [[routes]] must be "auto" or "off", not "on"'],
    ['afinity = "none"', "parley.toml:12: unknown key 'afinity' in [[routes]] (did you mean 'affinity'?)"],
  ]) {
    test(`${line}: one line naming it`, () => {
      expect(() => read(`${line}\n`)).toThrow(message);
    });
  }
});
