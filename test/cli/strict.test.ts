import { describe, expect, test } from "bun:test";
import { runCli, startCli, userDir, CLI } from "../lib/cli.ts";

const ESC = "\x1b";
const user = userDir();
const run = (args: string[], env: Record<string, string> = {}) => runCli(args, { cwd: user.dir, env: { ...user.env, ...env } });

/** One line on stderr, nothing on stdout, exit code 2. */
async function rejected(args: string[]) {
  const { stdout, stderr, code } = await run(args);
  expect(code).toBe(2);
  expect(stdout).toBe("");
  expect(stderr.trim().split("\n")).toHaveLength(1);
  expect(stderr).not.toContain(ESC);
  return stderr;
}

describe("a command line parley cannot run stops with exit code 2", () => {
  test("an unknown command names the closest one", async () => {
    expect(await rejected(["sevre"])).toContain('unknown command "sevre" for "parley"; did you mean "serve"?');
    expect(await rejected(["config", "shwo"])).toContain('unknown command "shwo" for "parley config"; did you mean "show"?');
    expect(await rejected(["config", "gte", "API_KEY"])).toContain('did you mean "get"?');
  });

  test("an unknown option names the closest one, and the command does not run", async () => {
    const stderr = await rejected(["serve", "--prot", "0"]);
    expect(stderr).toContain('unknown option --prot for "parley serve"; did you mean --port?');
    expect(stderr).toContain("parley serve --help");
    expect(await rejected(["chat", "-p", "hi", "--modle", "gpt-4o"])).toContain("did you mean --model?");
    expect(await rejected(["config", "show", "--al"])).toContain('unknown option --al for "parley config show"');
  });

  test("every command rejects unknown options", async () => {
    const commands = [["serve"], ["config", "show"], ["config", "get", "API_KEY"], ["config", "set", "PORT", "9000"], ["chat", "-p", "hi"], []];
    for (const command of commands) expect(await rejected([...command, "--frobnicate"])).toContain("unknown option --frobnicate");
    expect(await rejected(["-x"])).toContain("unknown option -x");
  });

  test("a far-off name gets no guess", async () => {
    expect(await rejected(["serve", "--completely-different"])).not.toContain("did you mean");
  });

  test("a missing command, value or argument, and a stray argument", async () => {
    expect(await rejected([])).toContain("missing command");
    expect(await rejected(["config"])).toContain("show, get, set");
    expect(await rejected(["serve", "--port"])).toContain("--port needs a value");
    expect(await rejected(["config", "get"])).toContain("missing argument KEY");
    expect(await rejected(["config", "show", "extra"])).toContain('unexpected argument "extra"');
  });

  test("the internal --worker flag is hidden from help and from guesses", async () => {
    const { stdout, code } = await run(["serve", "--help"]);
    expect(code).toBe(0);
    expect(stdout).toContain("--workers=<workers>");
    expect(stdout).not.toContain("--worker=");
    expect(stdout).not.toContain("(internal)");
    expect(await rejected(["serve", "--worke", "1"])).toContain("did you mean --workers?");
  });

  test("the internal --worker flag is still accepted", async () => {
    const server = await startCli(["--worker", "1"], { cwd: user.dir, env: { ...user.env, API_KEY: "sk-strict-test-key-123456" } });
    expect((await fetch(`${server.url}/health`)).status).toBe(200);
    await server.stop();
  });

  test("known spellings still work: --version, -h, --name=value, -p", async () => {
    expect((await run(["--version"])).code).toBe(0);
    expect((await run(["config", "set", "-h"])).stdout).toContain("USAGE");
    expect((await run(["config", "get", "PORT", "--help"])).code).toBe(0);
    const { stdout, code } = await run(["serve", "--port=http"]);
    expect(code).toBe(2);
    expect(stdout).toBe("");
  });
});

describe("no colour off a terminal", () => {
  test("help, errors and logs have no ANSI codes in a pipe", async () => {
    for (const args of [["--help"], ["serve", "--help"], ["config", "--help"], ["config", "set", "--help"], ["chat", "--help"]]) {
      const { stdout, stderr, code } = await run(args);
      expect(code).toBe(0);
      expect(stdout).toContain("USAGE");
      expect(stdout + stderr).not.toContain(ESC);
    }
    // Not as a test or CI run, where consola would pick plain lines on its own.
    const env = { ...user.env, API_KEY: "sk-strict-test-key-123456", NODE_ENV: undefined, CI: undefined };
    const server = await startCli([], { cwd: user.dir, env });
    const logs = await server.stop();
    expect(logs).not.toContain(ESC);
    // Plain lines a log file can be searched by: no icons or badges, which are for a terminal.
    expect(logs).toMatch(/^\[info\] parley listening on http:\/\/127\.0\.0\.1:\d+/m);
    expect(logs).not.toContain("ℹ");
  });

  // `script` gives the command a real terminal, where colour is on unless NO_COLOR says otherwise.
  test.skipIf(!Bun.which("script"))("on a terminal, help is coloured unless NO_COLOR is set", async () => {
    const env: Record<string, string | undefined> = { ...user.env, NO_COLOR: undefined, CI: undefined, FORCE_COLOR: undefined };
    const inTerminal = async (extra: Record<string, string>) => {
      const command = `bun --no-env-file ${CLI} --help`;
      const proc = Bun.spawn(["script", "-qec", command, "/dev/null"], { env: { ...env, TERM: "xterm-256color", ...extra }, stdout: "pipe", stderr: "pipe", stdin: "pipe" });
      const out = await new Response(proc.stdout).text();
      await proc.exited;
      return out;
    };
    expect(await inTerminal({})).toContain(ESC);
    expect(await inTerminal({ NO_COLOR: "true" })).not.toContain(ESC); // any value, not only the "1" citty looks for
  });
});
