import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "../lib/app.ts";
import { runCli } from "../lib/cli.ts";

test("/v1/completions without a text prompt is refused in OpenAI's envelope, as OpenAI does (the mock echoed nothing)", async () => {
  const { json } = testApp();
  const missing = await json("/v1/completions", { model: "mock" });
  expect(missing.status).toBe(400);
  expect((await missing.json()).error.message).toContain("prompt");
  const wrong = await json("/v1/completions", { model: "mock", prompt: 5 });
  expect(wrong.status).toBe(422);
  expect((await wrong.json()).error.param).toBe("prompt");
});

test("parley cassettes on a HAR it did not write: one line and exit 2, not a stack trace", async () => {
  const dir = mkdtempSync(join(tmpdir(), "parley-har-"));
  writeFileSync(join(dir, "odd.har"), JSON.stringify({ log: { entries: [{ request: { url: "nope" } }] } }));
  const { code, stderr } = await runCli(["cassettes", dir]);
  expect(code).toBe(2);
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(stderr).toContain("is not a HAR file parley wrote");
});

test("Titan's image embedding model is refused by name (it takes another body), not sent Titan Text's", async () => {
  const { json } = testApp({ BETA_REGION: "us-east-1", BETA_API_KEY: "bedrock-api-key-test-0001", BETA_ENDPOINT_URL: "http://127.0.0.1:9" });
  const response = await json("/v1/embeddings", { model: "amazon.titan-embed-image-v1", input: "hi" });
  expect(response.status).toBe(400);
  expect((await response.json()).error.message).toContain("amazon.titan-embed-image-v1");
});
