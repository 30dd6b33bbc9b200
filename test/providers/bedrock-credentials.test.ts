import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { bedrockEndpoint } from "../../src/providers/bedrock/transport.ts";
import { startGateway } from "../lib/gateway.ts";

// A credentials file of this file's own, so other tests still see a machine without AWS credentials.
const previous = process.env.AWS_SHARED_CREDENTIALS_FILE;
const file = join(mkdtempSync(join(tmpdir(), "parley-aws-")), "credentials");
process.env.AWS_SHARED_CREDENTIALS_FILE = file;
writeFileSync(file, "[default]\naws_access_key_id = AKIADEFAULTCHAIN\naws_secret_access_key = s1\n\n[parley-dev]\naws_access_key_id = AKIANAMEDPROFILE\naws_secret_access_key = s2\n");

const started: Awaited<ReturnType<typeof startGateway>>[] = [];
afterAll(async () => {
  process.env.AWS_SHARED_CREDENTIALS_FILE = previous;
  await Promise.all(started.map((g) => g.stop()));
});

async function signedWith(env: Record<string, string>) {
  const gateway = await startGateway({ BETA_ACCESS_KEY_ID: "", BETA_SECRET_ACCESS_KEY: "", ...env });
  started.push(gateway);
  const response = await gateway.json("/v1/chat/completions", { model: "anthropic.claude-3-5-haiku-20241022-v1:0", messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(200);
  return /Credential=([A-Z0-9]+)\//.exec(gateway.bedrock.last().headers.get("authorization") ?? "")?.[1];
}

test("BETA_PROFILE picks a named profile", async () => {
  expect(await signedWith({ BETA_PROFILE: "parley-dev" })).toBe("AKIANAMEDPROFILE");
});

test("without static keys or a profile, the AWS default chain is used", async () => {
  expect(await signedWith({})).toBe("AKIADEFAULTCHAIN");
});

test("static keys win over profiles", async () => {
  expect(await signedWith({ BETA_PROFILE: "parley-dev", BETA_ACCESS_KEY_ID: "AKIASTATICKEYS", BETA_SECRET_ACCESS_KEY: "s3" })).toBe("AKIASTATICKEYS");
});

test("a session token is sent and signed with the request", async () => {
  const gateway = await startGateway({ BETA_ACCESS_KEY_ID: "AKIASTATICKEYS", BETA_SECRET_ACCESS_KEY: "s3", BETA_SESSION_TOKEN: "session-token-123" });
  started.push(gateway);
  const response = await gateway.json("/v1/chat/completions", { model: "anthropic.claude-3-5-haiku-20241022-v1:0", messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(200);
  const headers = gateway.bedrock.last().headers;
  expect(headers.get("x-amz-security-token")).toBe("session-token-123");
  expect(headers.get("authorization")).toMatch(/SignedHeaders=[^,]*x-amz-security-token/);
});

test("a wrong secret is refused by the signature check and reported as 502", async () => {
  const gateway = await startGateway({ BETA_ACCESS_KEY_ID: "AKIASTATICKEYS", BETA_SECRET_ACCESS_KEY: "not-the-secret" });
  started.push(gateway);
  const response = await gateway.json("/v1/chat/completions", { model: "anthropic.claude-3-5-haiku-20241022-v1:0", messages: [{ role: "user", content: "hi" }] });
  expect(response.status).toBe(502);
  expect((await response.json()).error.message).toContain("rejected parley's credentials");
});

test("without BETA_ENDPOINT_URL, calls go to the region's public Bedrock Runtime endpoint", () => {
  expect(bedrockEndpoint({ region: "us-east-1" }).href).toBe("https://bedrock-runtime.us-east-1.amazonaws.com/");
  expect(bedrockEndpoint({ region: "cn-north-1" }).href).toBe("https://bedrock-runtime.cn-north-1.amazonaws.com.cn/");
  expect(bedrockEndpoint({ region: "us-gov-west-1" }).href).toBe("https://bedrock-runtime.us-gov-west-1.amazonaws.com/");
  expect(bedrockEndpoint({ region: "us-east-1", endpointUrl: "http://127.0.0.1:9999/prefix" }).href).toBe("http://127.0.0.1:9999/prefix");
});
