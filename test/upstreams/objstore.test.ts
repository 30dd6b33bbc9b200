import { afterAll, describe, expect, test } from "bun:test";
import type { BedrockSettings } from "../../src/providers/bedrock/kind.ts";
import { testApp, testConfig } from "../lib/app.ts";
import { form, startS3 } from "../lib/files.ts";

const BETA = { BETA_REGION: "us-east-1", BETA_ACCESS_KEY_ID: "AKIABEDROCK", BETA_SECRET_ACCESS_KEY: "bedrock-secret" };

describe("S3 takes its own region and credentials, OBJSTORE_*, else BETA_* (contract 13)", () => {
  test("without OBJSTORE_* credentials S3 uses Bedrock's region and keys", () => {
    expect(testConfig(BETA).files.aws).toEqual({ region: "us-east-1", accessKeyId: "AKIABEDROCK", secretAccessKey: "bedrock-secret" });
  });

  test("OBJSTORE_REGION and OBJSTORE_ACCESS_KEY_ID + OBJSTORE_SECRET_ACCESS_KEY replace them, and Bedrock keeps its own", () => {
    const config = testConfig({ ...BETA, OBJSTORE_REGION: "eu-central-1", OBJSTORE_ACCESS_KEY_ID: "AKIAS3ONLY", OBJSTORE_SECRET_ACCESS_KEY: "s3-secret", OBJSTORE_SESSION_TOKEN: "s3-token" });
    expect(config.files.aws).toEqual({ region: "eu-central-1", accessKeyId: "AKIAS3ONLY", secretAccessKey: "s3-secret", sessionToken: "s3-token" });
    const beta = config.upstreams.upstreams.find((u) => u.name === "beta")!.settings as BedrockSettings;
    expect(beta).toMatchObject({ region: "us-east-1", accessKeyId: "AKIABEDROCK", secretAccessKey: "bedrock-secret" });
  });

  test("an OBJSTORE_ credential drops every BETA_ one: a profile is not mixed with Bedrock's keys", () => {
    expect(testConfig({ ...BETA, BETA_PROFILE: "bedrock", OBJSTORE_PROFILE: "s3" }).files.aws).toEqual({ region: "us-east-1", profile: "s3" });
  });

  test("OBJSTORE_REGION alone moves S3 to another region with Bedrock's credentials (it is no credential)", () => {
    expect(testConfig({ ...BETA, OBJSTORE_REGION: "eu-west-1" }).files.aws).toEqual({ region: "eu-west-1", accessKeyId: "AKIABEDROCK", secretAccessKey: "bedrock-secret" });
  });

  test("nothing set: no region and no keys (the AWS default chain)", () => {
    expect(testConfig({}).files.aws).toEqual({});
  });
});

const s3 = await startS3("parley-objstore");
afterAll(() => s3.stop());

describe("an S3 store signed with OBJSTORE_* credentials", () => {
  // The S3 server knows only the S3RVER key; Bedrock's keys are others.
  const env = { ...s3.env, BETA_ACCESS_KEY_ID: "AKIABEDROCK", BETA_SECRET_ACCESS_KEY: "bedrock-secret" };
  const upload = (app: ReturnType<typeof testApp>) => app.call("/v1/files", { method: "POST", body: form({ name: "notes.txt", content: "hello" }, "assistants") });

  test("uploads with S3's own keys while Bedrock's are different", async () => {
    const app = testApp({ ...env, OBJSTORE_ACCESS_KEY_ID: "S3RVER", OBJSTORE_SECRET_ACCESS_KEY: "S3RVER" });
    const response = await upload(app);
    expect(response.status).toBe(200);
    const { id } = await response.json();
    expect(await (await app.call(`/v1/files/${id}/content`)).text()).toBe("hello");
  });

  test("with Bedrock's keys only, the same store refuses the upload", async () => {
    const response = await upload(testApp(env));
    expect(response.status).toBeGreaterThanOrEqual(500);
  });
});
