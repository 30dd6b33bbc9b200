import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "./fake-anthropic.ts";
import { FAKE_GEMINI_KEY, startFakeGemini } from "./fake-gemini.ts";
import { FAKE_PROJECT, startFakeVertex } from "./fake-vertex.ts";
import { startGateway } from "./gateway.ts";

/**
 * parley with every kind of upstream, each a fake that speaks the real API: `gemini` (the Gemini
 * API), `vertex` (Claude and Gemini in one project, a static token), `anthropic`, and, as with
 * startGateway, `alpha` (OpenAI) and `beta` (Bedrock); the mock always. `toml` adds routes.
 */
export async function startGoogleGateway(env: Record<string, string> = {}, toml = "") {
  const gemini = await startFakeGemini();
  const vertex = await startFakeVertex();
  const anthropic = await startFakeAnthropic();
  const dir = mkdtempSync(join(tmpdir(), "parley-google-"));
  const file = join(dir, "parley.toml");
  const gateway = await startGateway({ PARLEY_UPSTREAMS: file, ...env }, () => {
    writeFileSync(file, `[upstreams.anthropic]
kind = "anthropic"
api_key = "${FAKE_ANTHROPIC_KEY}"
base_url = "${anthropic.url}"

[upstreams.gem]
kind = "gemini"
api_key = "${FAKE_GEMINI_KEY}"
base_url = "${gemini.url}"
discover = false

[upstreams.vtx]
kind = "vertex"
project = "${FAKE_PROJECT}"
region = "us-east5"
access_token = "ya29.static-token"
base_url = "${vertex.url}"
${toml}`);
  });
  return {
    ...gateway,
    gemini,
    vertex,
    anthropic,
    reset() {
      gateway.reset();
      gemini.reset();
      vertex.reset();
      anthropic.reset();
    },
    async stop() {
      await gateway.stop();
      gemini.stop();
      vertex.stop();
      anthropic.stop();
    },
  };
}

export type GoogleGateway = Awaited<ReturnType<typeof startGoogleGateway>>;
