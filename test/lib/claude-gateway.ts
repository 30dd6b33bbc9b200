import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "./fake-anthropic.ts";
import { startGateway } from "./gateway.ts";

/**
 * parley with an `anthropic` upstream (the fake Anthropic API) declared in a parley.toml, beside the
 * fake Bedrock: as `beta` (the variables') and as the file's `bedrock-us`. `toml` adds routes,
 * `anthropicKeys` lines to the anthropic upstream's table.
 */
export async function startClaudeGateway(env: Record<string, string> = {}, toml = "", anthropicKeys = "") {
  const anthropic = await startFakeAnthropic();
  const dir = mkdtempSync(join(tmpdir(), "parley-claude-"));
  const file = join(dir, "parley.toml");
  const gateway = await startGateway({ PARLEY_UPSTREAMS: file, ...env }, (bedrockUrl) => {
    writeFileSync(file, `[upstreams.anthropic]
kind = "anthropic"
api_key = "${FAKE_ANTHROPIC_KEY}"
base_url = "${anthropic.url}"
${anthropicKeys}

[upstreams.bedrock-us]
kind = "bedrock"
region = "us-east-1"
access_key_id = "AKIAFAKEFAKEFAKE"
secret_access_key = "fake-secret-access-key"
endpoint_url = "${bedrockUrl}"
control_endpoint_url = "${bedrockUrl}"
${toml}`);
  });
  return {
    ...gateway,
    anthropic,
    reset() {
      gateway.reset();
      anthropic.reset();
    },
    async stop() {
      await gateway.stop();
      anthropic.stop();
    },
  };
}
