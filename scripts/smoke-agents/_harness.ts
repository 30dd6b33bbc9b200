import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/**
 * What every agent's smoke run shares: `check` prints one line per expectation and counts the
 * failures (`exit` ends the run with them), and one scratch directory (TMPDIR for everything the run
 * starts: the install, the agent's home, the gateway's data) is removed at exit.
 */
export function smokeRun(name: string) {
  let failures = 0;
  const scratch = mkdtempSync(join(tmpdir(), `parley-smoke-${name}-`));
  process.env.TMPDIR = scratch;
  process.on("exit", () => rmSync(scratch, { recursive: true, force: true }));
  return {
    scratch,
    check(what: string, ok: boolean, detail = "") {
      if (!ok) failures++;
      console.log(`${ok ? "ok  " : "FAIL"} ${what}${detail ? `: ${detail}` : ""}`);
    },
    exit: (): never => process.exit(failures === 0 ? 0 : 1),
  };
}

// The dist-tag, not the bare name: npm 11 on Node 20 resolves a bare name to the newest release whose
// `engines` allow Node 20 (2.1.197), while the native binary runs anywhere and users get `latest`.
const CLAUDE_CODE = process.env.CLAUDE_CODE_PACKAGE ?? "@anthropic-ai/claude-code@latest";

/** Claude Code from npm into a temporary directory (its native binary comes as an optional dependency), or CLAUDE_BIN. */
export function claudeCode(): string {
  if (process.env.CLAUDE_BIN) return process.env.CLAUDE_BIN;
  const dir = mkdtempSync(join(tmpdir(), "parley-claude-code-"));
  console.log(`installing ${CLAUDE_CODE} into ${dir}`);
  const npm = Bun.spawnSync(["npm", "install", "--no-audit", "--no-fund", "--prefix", dir, CLAUDE_CODE], { stdout: "inherit", stderr: "inherit" });
  if (npm.exitCode !== 0) throw new Error(`npm install ${CLAUDE_CODE} failed`);
  const libc = existsSync("/etc/alpine-release") ? "-musl" : "";
  const candidates = [
    join(dir, "node_modules/@anthropic-ai", `claude-code-${process.platform}-${process.arch}${libc}`, "claude"),
    join(dir, "node_modules/@anthropic-ai/claude-code/bin/claude.exe"),
    join(dir, "node_modules/.bin/claude"),
  ];
  const found = candidates.find((path) => existsSync(path));
  if (!found) throw new Error(`no claude binary in ${dir}`);
  console.log(`claude ${Bun.spawnSync([found, "--version"]).stdout.toString().trim()}`);
  return found;
}
