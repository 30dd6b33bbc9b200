import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { testApp } from "../lib/app.ts";

test("/health names every upstream with its status, and how parley proves itself to each Bedrock account", async () => {
  const dir = mkdtempSync(join(tmpdir(), "parley-health-"));
  const file = join(dir, "parley.toml");
  writeFileSync(file, [
    '[upstreams.us]\nkind = "bedrock"\nregion = "us-east-1"\naccess_key_id = "AKIAEXAMPLEUS"\nsecret_access_key = "secret-us"',
    '[upstreams.eu]\nkind = "bedrock"\nregion = "eu-west-1"\nprofile = "team-eu"',
    '[upstreams.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"',
  ].join("\n\n"));
  const { call } = testApp({ PARLEY_UPSTREAMS: file });
  const body = await (await call("/health")).json();
  expect(body.services).toEqual({ alpha: "not_configured", beta: "not_configured", us: "available", eu: "available", local: "available", mock: "available" });
  expect(body.credentials).toEqual({ us: "static keys", eu: "profile" });
  expect(JSON.stringify(body)).not.toContain("secret-us");
});
