/**
 * Real coding agents against parley: `bun run smoke:agents [name…]`. Runs each check in
 * scripts/smoke-agents/ (claude.ts, codex.ts, …) as its own process; each installs its agent from
 * npm into a temporary directory, starts parley on the fake upstreams and asks the agent one
 * question. Not part of `bun test`: it installs from the network. Ends `smoke:agents: N passed, M failed`.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";

const dir = join(import.meta.dir, "smoke-agents");
const wanted = process.argv.slice(2);
const checks = readdirSync(dir).filter((f) => f.endsWith(".ts") && !f.startsWith("_")).sort()
  .filter((f) => wanted.length === 0 || wanted.includes(f.replace(/\.ts$/, "")));
let passed = 0;
let failed = 0;
for (const file of checks) {
  console.log(`--- ${file}`);
  const child = Bun.spawn([process.execPath, join(dir, file)], { stdout: "inherit", stderr: "inherit", env: process.env });
  const code = await child.exited;
  if (code === 0) passed++;
  else failed++;
  console.log(`--- ${file}: ${code === 0 ? "ok" : `FAIL (exit ${code})`}`);
}
console.log(`smoke:agents: ${passed} passed, ${failed} failed`);
process.exit(failed === 0 && passed > 0 ? 0 : 1);
