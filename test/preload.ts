// Every test run gets its own HOME, data and config dirs, and no provider credentials from the
// developer's shell, so results never depend on the machine they run on.
import { afterAll, setDefaultTimeout } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

// The temporary directories the tests make, and those of the servers they start (which inherit
// TMPDIR), all go under this run's own, which is removed after the last test file (`bun test`
// runs no "exit" handlers; a preload's afterAll runs once, at the end).
const scratch = mkdtempSync(join(tmpdir(), "parley-test-"));
process.env.TMPDIR = scratch;
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const home = join(scratch, "home");
mkdirSync(home);
const CLEARED = /^(ALPHA_|BETA_|AWS_|GOOGLE_|GEMINI_|CLOUDSDK_|OPENAI_|ANTHROPIC_|OBJSTORE_|PARLEY_|API_KEY|DEFAULT_ALPHA_MODEL|LOG_LEVEL|ENVIRONMENT|DEBUG|CORS_ORIGINS|MODEL_|RATE_LIMIT|MAX_UPLOAD|FILE_CONTEXT|UPSTREAM_|SHUTDOWN_|OTEL_|REDIS_URL$|HOST$|PORT$|WORKERS$)/;
for (const key of Object.keys(process.env)) if (CLEARED.test(key)) delete process.env[key];

Object.assign(process.env, {
  HOME: home,
  XDG_CONFIG_HOME: join(home, ".config"),
  XDG_DATA_HOME: join(home, ".local", "share"),
  AWS_CONFIG_FILE: join(home, ".aws", "config"),
  AWS_SHARED_CREDENTIALS_FILE: join(home, ".aws", "credentials"),
  AWS_EC2_METADATA_DISABLED: "true",
  // Servers the tests start never ask real upstreams for their models.
  MODELS_REFRESH_S: "0",
  // The tests write the working directory's .env and parley.toml themselves: trusted (contract 25; test/limits/trust.test.ts unsets it).
  PARLEY_TRUST_CWD: "1",
});

// Tests start servers and processes, and some wait for a rate-limit window to turn: on a machine
// busy with other work that takes many times as long (a test of a few seconds took 22 s while two
// cores ran 16 other processes). A plain `bun test` gets the same 60 s per test as `bun run test`,
// not Bun's default of 5 s; a test that hangs still fails.
setDefaultTimeout(60_000);
