import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { runCli, userDir } from "../lib/cli.ts";

const EXAMPLE = resolve(import.meta.dir, "../../examples/cassette-ci/cassettes");

describe("parley cassettes DIR", () => {
  test("lists each recorded call: cassette, method, upstream, model, status, size", async () => {
    const { stdout, stderr, code } = await runCli(["cassettes", EXAMPLE], userDir());
    expect({ code, stderr }).toEqual({ code: 0, stderr: "" });
    const [head, ...rows] = stdout.trimEnd().split("\n");
    expect(head!.split(/\s{2,}/)).toEqual(["CASSETTE", "METHOD", "UPSTREAM", "MODEL", "STATUS", "SIZE", "PATH"]);
    expect(rows.length).toBe(2);
    expect(rows[0]!.split(/\s{2,}/)).toEqual(["default", "POST", "alpha (openai)", "gpt-4o-mini", "200", expect.stringMatching(/^\d+ B$/), "/v1/chat/completions"]);
    expect(rows[1]).toMatch(/\d+ B in \d+ chunk\(s\)/);
  });

  test("--json, a Bedrock model named in the path, a failed call", async () => {
    const dir = mkdtempSync(join(tmpdir(), "parley-cassettes-cli-"));
    const entry = (url: string, status: number, body: string | undefined, error?: object) => ({
      request: { method: "POST", url, ...(body ? { postData: { mimeType: "application/json", text: body } } : {}) },
      response: { status, content: { size: 0, mimeType: "x-unknown" }, ...(error ? { _error: error } : {}) },
      _upstream: "beta", _kind: "bedrock",
    });
    writeFileSync(join(dir, "nightly.har"), JSON.stringify({ log: { version: "1.2", entries: [
      entry("https://bedrock-runtime.us-east-1.amazonaws.com/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse", 200, "{}"),
      entry("https://bedrock-runtime.us-east-1.amazonaws.com/model/amazon.nova-micro-v1%3A0/invoke", 0, "{}", { name: "TypeError", message: "Unable to connect" }),
    ] } }));
    const { stdout, code } = await runCli(["cassettes", dir, "--json"], userDir());
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([
      { cassette: "nightly", method: "POST", upstream: "beta", kind: "bedrock", model: "us.anthropic.claude-sonnet-4-5-20250929-v1:0", path: "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse", status: 200, size: 0 },
      { cassette: "nightly", method: "POST", upstream: "beta", kind: "bedrock", model: "amazon.nova-micro-v1:0", path: "/model/amazon.nova-micro-v1%3A0/invoke", status: 0, size: 0, error: "TypeError: Unable to connect" },
    ]);
  });

  test("a directory that does not exist, or a file that is not HAR: one line, exit code 2", async () => {
    const missing = await runCli(["cassettes", "/nonexistent/cassettes"], userDir());
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("parley: /nonexistent/cassettes: no such directory\n");
    const dir = mkdtempSync(join(tmpdir(), "parley-cassettes-cli-"));
    writeFileSync(join(dir, "broken.har"), "{ not json");
    const broken = await runCli(["cassettes", dir], userDir());
    expect(broken.code).toBe(2);
    expect(broken.stderr).toContain("broken.har is not a HAR file");
  });
});
