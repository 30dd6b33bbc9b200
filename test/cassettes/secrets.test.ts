/** Contract 16: no key of any kind is ever written to a cassette, whatever carries it (header, query, signature). */
import { afterAll, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { BEDROCK_API_KEYS, startFakeBedrock } from "../lib/fake-bedrock.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { testApp } from "../lib/app.ts";
import { allText, harErrors, readHar, tempDir } from "./lib.ts";

// Keys shaped as the real ones are: OpenAI project keys, AWS access keys with a session token, Bedrock API keys.
const OPENAI_KEY = "sk-proj-Zq3vN8xK2mP5rT9wY1bC4dF7gH0jL6nQ8sU2vX5zA7cE9fI1kM3oR4tW6yB8dG0";
const AZURE_KEY = "sk-proj-AzureQueryKey7Hq2Lm9Np4Rs8Tv1Wx6Yz3Bc5Df0Gh";
const CUSTOM_TOKEN = "custom-header-token-5b8e2f91c4d7a630";
const ACCESS_KEY_ID = "AKIA4EXAMPLEQ7RZ2XKD";
const SECRET_ACCESS_KEY = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzEXAMPLEKEY";
const SESSION_TOKEN = "IQoJb3JpZ2luX2VjEHoaCXVzLWVhc3QtMSJHMEUCIQDexampleSessionTokenValue0123456789abcdef";
const BEDROCK_KEY = "ABSKQmVkcm9ja0FQSUtleS1leGFtcGxlLWF0LTEyMzQ1Njc4OTAxMjpleGFtcGxlU2VjcmV0VmFsdWUwMTIzNDU2Nzg5";
BEDROCK_API_KEYS.add(BEDROCK_KEY);

const openai = await startFakeOpenAI();
const bedrock = await startFakeBedrock({ region: "us-east-1", accessKeyId: ACCESS_KEY_ID, secretAccessKey: SECRET_ACCESS_KEY });
afterAll(() => {
  openai.stop();
  bedrock.stop();
});

test("no key, token, signature or secret query value of any kind is written", async () => {
  const dir = tempDir();
  const file = join(tempDir(), "parley.toml");
  writeFileSync(file, `
[upstreams.azure]
kind = "openai"
base_url = "${openai.url}"
api_key = "${OPENAI_KEY}"
query = { "api-version" = "2024-10-21", "api-key" = "${AZURE_KEY}" }
headers = { "x-custom-token" = "${CUSTOM_TOKEN}" }
models = ["azure-gpt"]

[upstreams.bedrock-key]
kind = "bedrock"
region = "us-east-1"
api_key = "${BEDROCK_KEY}"
endpoint_url = "${bedrock.url}"
control_endpoint_url = "${bedrock.url}"
models = ["anthropic.claude-3-5-haiku-20241022-v1:0"]
`);
  const recorder = testApp({
    PARLEY_UPSTREAMS: file, PARLEY_CASSETTES: dir, PARLEY_CASSETTE_MODE: "record", MODELS_REFRESH_S: "600",
    ALPHA_BASE_URL: openai.url, ALPHA_API_KEY: OPENAI_KEY,
    BETA_REGION: "us-east-1", BETA_ENDPOINT_URL: bedrock.url, BETA_CONTROL_ENDPOINT_URL: bedrock.url,
    BETA_ACCESS_KEY_ID: ACCESS_KEY_ID, BETA_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY, BETA_SESSION_TOKEN: SESSION_TOKEN,
  });
  const hi = [{ role: "user", content: "hi" }];
  const calls: [string, object][] = [
    ["/v1/chat/completions", { model: "gpt-4o", messages: hi }],
    ["/v1/chat/completions", { model: "gpt-4o", stream: true, messages: hi }],
    ["/v1/chat/completions", { model: "azure/azure-gpt", messages: hi }],
    ["/v1/chat/completions", { model: "beta/anthropic.claude-3-5-haiku-20241022-v1:0", stream: true, messages: hi }],
    ["/v1/chat/completions", { model: "beta/amazon.nova-micro-v1:0", messages: hi }],
    ["/v1/messages/count_tokens", { model: "beta/anthropic.claude-3-5-haiku-20241022-v1:0", messages: hi }],
    ["/v1/messages", { model: "bedrock-key/anthropic.claude-3-5-haiku-20241022-v1:0", max_tokens: 20, stream: true, messages: hi }],
    ["/v1/chat/completions", { model: "bedrock-key/amazon.nova-micro-v1:0", messages: hi }],
  ];
  for (const [path, body] of calls) {
    const response = await recorder.json(path, body);
    // The upstreams took the keys: they were sent, and are still not written.
    expect({ path, body, status: response.status }).toEqual({ path, body, status: 200 });
    await response.text();
  }
  expect((await recorder.call("/v1/models")).status).toBe(200);
  await recorder.app.close();
  expect(bedrock.refused).toEqual([]);

  const har = readHar(join(dir, "default.har"));
  expect(harErrors(har)).toEqual([]);
  const called = new Set(har.log.entries.map((e) => `${e._upstream} ${e.request.method}`));
  expect(called).toEqual(new Set(["alpha POST", "alpha GET", "azure POST", "beta POST", "beta GET", "bedrock-key POST"]));
  const azure = har.log.entries.find((e) => e._upstream === "azure")!.request;
  expect(azure.queryString).toEqual([{ name: "api-version", value: "2024-10-21" }, { name: "api-key", value: "REDACTED" }]);

  const text = allText(dir);
  for (const secret of [OPENAI_KEY, AZURE_KEY, CUSTOM_TOKEN, ACCESS_KEY_ID, SECRET_ACCESS_KEY, SESSION_TOKEN, BEDROCK_KEY, "Bearer", "AWS4-HMAC-SHA256", "Signature=", "Credential="]) {
    expect({ secret, found: text.includes(secret) }).toEqual({ secret, found: false });
  }
  for (const header of ["authorization", "x-api-key", "x-amz-security-token", "x-amz-signature", "x-amz-credential", "cookie", "x-custom-token"]) {
    expect({ header, found: text.toLowerCase().includes(`"${header}"`) }).toEqual({ header, found: false });
  }
});
