import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Upstream } from "../../src/providers/kind.ts";
import { vertexKind } from "../../src/providers/vertex/kind.ts";
import type { createVertexProvider } from "../../src/providers/vertex/provider.ts";
import type { VertexSettings } from "../../src/providers/vertex/settings.ts";
import { AUTHORIZED_USER, FAKE_PROJECT, serviceAccount, startFakeVertex } from "../lib/fake-vertex.ts";

/** Contract 23: where a Vertex upstream's tokens come from, and how long they are kept. */
const fake = await startFakeVertex();
afterAll(() => fake.stop());
const account = await serviceAccount(fake.tokenUrl);
fake.tokens.publicKey = account.publicKey;
const dir = mkdtempSync(join(tmpdir(), "vertex-credentials-"));
const write = (name: string, json: unknown) => {
  const file = join(dir, name);
  writeFileSync(file, JSON.stringify(json));
  return file;
};
const keyFile = write("sa.json", account.json);
const saved = { ...process.env };
beforeEach(() => {
  fake.reset();
  delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
  delete process.env.CLOUDSDK_CONFIG;
});
afterEach(() => {
  for (const key of ["GOOGLE_APPLICATION_CREDENTIALS", "CLOUDSDK_CONFIG"]) {
    if (saved[key] === undefined) delete process.env[key];
    else process.env[key] = saved[key];
  }
});

const build = async (table: Record<string, unknown>) => {
  const upstream: Upstream<VertexSettings> = {
    name: "vertex", kind: "vertex" as never, settings: vertexKind.settings({ project: FAKE_PROJECT, region: "us-east5", base_url: fake.url, ...table }),
    discover: false, timeoutMs: 5000, retries: 0, headers: {}, origin: {},
  };
  return (await vertexKind.build(upstream)) as ReturnType<typeof createVertexProvider>;
};
const signal = new AbortController().signal;
const hi = { system: [], messages: [{ role: "user" as const, content: [{ type: "text" as const, text: "Hi" }] }], stream: false, includeUsage: true, fileIds: [] };
const bearerOf = () => fake.gemini.last().headers.get("authorization");

describe("a service account's key file", () => {
  test("its RS256 JWT is exchanged at its token_uri; one exchange serves many calls", async () => {
    const vertex = await build({ credentials_file: keyFile });
    await Promise.all([1, 2, 3].map(() => vertex.complete(hi, "gemini-2.5-flash", signal)));
    await vertex.complete(hi, "gemini-2.5-flash", signal);
    expect(fake.tokens.requests).toHaveLength(1);
    expect(vertex.tokens.exchanges).toBe(1);
    const [request] = fake.tokens.requests;
    expect(request!.grant).toBe("urn:ietf:params:oauth:grant-type:jwt-bearer");
    expect(request!.header).toEqual({ alg: "RS256", typ: "JWT", kid: "fakekeyid01" });
    expect(request!.claims).toMatchObject({ iss: account.json.client_email, aud: fake.tokenUrl, scope: "https://www.googleapis.com/auth/cloud-platform" });
    expect(request!.claims!.exp - request!.claims!.iat).toBe(3600);
    expect(bearerOf()).toMatch(/^Bearer ya29\.fake-\d+$/);
  });

  test("a token within a minute of its end is renewed before the next call", async () => {
    fake.tokens.lifetime = 59;
    try {
      const vertex = await build({ credentials_file: keyFile });
      await vertex.complete(hi, "gemini-2.5-flash", signal);
      await vertex.complete(hi, "gemini-2.5-flash", signal);
      expect(fake.tokens.requests).toHaveLength(2);
    } finally {
      fake.tokens.lifetime = 3599;
    }
  });

  test("token_url overrides where it is exchanged (and is the JWT's audience)", async () => {
    const elsewhere = write("sa-elsewhere.json", { ...account.json, token_uri: "http://127.0.0.1:9/token" });
    const vertex = await build({ credentials_file: elsewhere, token_url: fake.tokenUrl });
    await vertex.complete(hi, "gemini-2.5-flash", signal);
    expect(fake.tokens.requests[0]!.claims!.aud).toBe(fake.tokenUrl);
  });

  test("a token Vertex refuses (401) is dropped: that call fails (502), the next one gets a new token", async () => {
    const vertex = await build({ credentials_file: keyFile });
    await vertex.complete(hi, "gemini-2.5-flash", signal);
    const first = bearerOf()!.slice(7);
    fake.tokens.issued.delete(first);
    expect(await vertex.complete(hi, "gemini-2.5-flash", signal).catch((e) => e)).toMatchObject({ status: 502 });
    await vertex.complete(hi, "gemini-2.5-flash", signal);
    expect(bearerOf()).not.toBe(`Bearer ${first}`);
    expect(vertex.tokens.exchanges).toBe(2);
  });

  test("a key Google refuses is parley's credentials: 502, not retried, naming where to set them", async () => {
    const other = await serviceAccount(fake.tokenUrl);
    const vertex = await build({ credentials_file: write("other.json", other.json) });
    const error = await vertex.complete(hi, "gemini-2.5-flash", signal).catch((e) => e);
    expect(error).toMatchObject({ status: 502, retryable: false });
    expect(error.message).toContain("Invalid JWT Signature");
    expect(error.message).toContain("credentials_file");
    expect(error.message).not.toContain("PRIVATE KEY");
  });
});

describe("the other sources, in order", () => {
  test("access_token is sent as it is, with no exchange", async () => {
    const vertex = await build({ access_token: "ya29.static-token", credentials_file: keyFile });
    await vertex.complete(hi, "gemini-2.5-flash", signal);
    expect(bearerOf()).toBe("Bearer ya29.static-token");
    expect(fake.tokens.requests).toHaveLength(0);
    expect(vertexKind.credentials!(vertexKind.settings({ project: "p", access_token: "x" }))).toBe("access token");
  });

  test("GOOGLE_APPLICATION_CREDENTIALS when the upstream names none", async () => {
    process.env.GOOGLE_APPLICATION_CREDENTIALS = keyFile;
    const vertex = await build({});
    await vertex.complete(hi, "gemini-2.5-flash", signal);
    expect(fake.tokens.requests.map((r) => r.grant)).toEqual(["urn:ietf:params:oauth:grant-type:jwt-bearer"]);
    expect(vertexKind.credentials!(vertexKind.settings({ project: "p" }))).toBe("GOOGLE_APPLICATION_CREDENTIALS");
  });

  test("else gcloud's application-default credentials: the refresh token exchanged", async () => {
    const gcloud = join(dir, "gcloud");
    mkdirSync(gcloud, { recursive: true });
    writeFileSync(join(gcloud, "application_default_credentials.json"), JSON.stringify({ type: "authorized_user", ...AUTHORIZED_USER }));
    process.env.CLOUDSDK_CONFIG = gcloud;
    const vertex = await build({ token_url: fake.tokenUrl });
    await vertex.complete(hi, "gemini-2.5-flash", signal);
    await vertex.complete(hi, "gemini-2.5-flash", signal);
    expect(fake.tokens.requests.map((r) => r.grant)).toEqual(["refresh_token"]);
    expect(bearerOf()).toMatch(/^Bearer ya29\.fake-/);
  });

  test("with none of them, a 404 that says what to set", async () => {
    process.env.CLOUDSDK_CONFIG = join(dir, "nowhere");
    const vertex = await build({});
    const error = await vertex.complete(hi, "gemini-2.5-flash", signal).catch((e) => e);
    expect(error).toMatchObject({ status: 404, type: "not_found_error" });
    expect(error.message).toContain("GOOGLE_APPLICATION_CREDENTIALS");
    expect(error.message).toContain("application_default_credentials.json");
  });
});
