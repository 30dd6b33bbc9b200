import { afterAll, describe, expect, test } from "bun:test";
import { TEST_KEY } from "../lib/app.ts";
import { CLI, userDir } from "../lib/cli.ts";
import { alive, childrenOf, eventually, type Ready } from "./serve-process.ts";

/** Every process a test started, killed at the end whatever happened. */
const started: number[] = [];
afterAll(() => {
  for (const pid of started) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
});

/**
 * An app that runs parley as its sidecar: a shell that starts `parley serve` in the background
 * and waits, so that parley's parent is the shell. Resolves with the shell and parley's ready line.
 */
async function sidecar(args: string[], env: Record<string, string> = {}) {
  const user = userDir();
  const command = `exec 0</dev/null; bun --no-env-file '${CLI}' serve --port 0 ${args.join(" ")} & wait`;
  const app = Bun.spawn(["sh", "-c", command], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY, ...env }, stdout: "pipe", stderr: "pipe" });
  started.push(app.pid);
  const reader = app.stdout.getReader();
  let out = "";
  while (!out.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`no ready line: ${out}${await new Response(app.stderr).text()}`);
    out += new TextDecoder().decode(value);
  }
  const ready = JSON.parse(out.slice(0, out.indexOf("\n"))) as Ready;
  started.push(ready.pid);
  return { app, ready };
}

describe("serve --exit-with-parent (an app's sidecar)", () => {
  for (const [name, args, env] of [
    ["one server, the flag", ["--exit-with-parent"], {}],
    ["a supervisor and 2 workers, PARLEY_EXIT_WITH_PARENT", ["--workers", "2"], { PARLEY_EXIT_WITH_PARENT: "true" }],
  ] as const) {
    test(`${name}: stops serving when the app that started it is SIGKILLed`, async () => {
      const { app, ready } = await sidecar([...args], env);
      const workers = (args as readonly string[]).includes("--workers") ? await eventually(() => childrenOf(ready.pid), (pids) => pids.length === 2) : [];
      started.push(...workers);
      expect((await fetch(`${ready.url}/health`)).status).toBe(200);
      app.kill("SIGKILL");
      await app.exited;
      const all = [ready.pid, ...workers];
      await eventually(() => all.filter(alive), (left) => left.length === 0);
      expect(await fetch(`${ready.url}/health`).then((r) => r.status, () => "refused")).toBe("refused");
    }, 30_000);
  }

  test("without it, parley outlives its parent as before (a server run from a shell that exits keeps serving)", async () => {
    const { app, ready } = await sidecar([]);
    app.kill("SIGKILL");
    await app.exited;
    // The flag's poll is 500 ms: four of them, and the orphan still answers.
    await Bun.sleep(2000);
    expect((await fetch(`${ready.url}/health`)).status).toBe(200);
  }, 30_000);
});
