import { afterAll, beforeEach } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CLI } from "../lib/cli.ts";
import { startGateway } from "../lib/gateway.ts";

/** What runs `parley`: the built binary PARLEY_BIN names (`bun run build` makes dist/parley), else the source. */
export const PARLEY = process.env.PARLEY_BIN ? resolve(process.env.PARLEY_BIN) : `bun --no-env-file ${CLI}`;

/**
 * A real terminal for `parley chat`: a tmux server of our own (its own socket, so its options touch
 * no one else's), keys typed with send-keys, the screen read with capture-pane.
 */
export function tmuxServer() {
  const socket = `parley-tui-${process.pid}`;
  const tmux = (...args: string[]) => Bun.spawnSync(["tmux", "-L", socket, ...args]);
  let count = 0;
  // A session that stays: when the last session goes, tmux stops its server, and a session started
  // just then can land on the server on its way out and show nothing.
  tmux("new-session", "-d", "-s", "keep", "sleep 3600");

  function start(command: string, options: { cwd: string; env?: Record<string, string>; width?: number; height?: number }) {
    const name = `s${++count}`;
    const env = Object.entries(options.env ?? {}).map(([k, v]) => `${k}='${v}'`).join(" ");
    tmux("new-session", "-d", "-s", name, "-x", String(options.width ?? 100), "-y", String(options.height ?? 30),
      `cd ${options.cwd} && ${env} ${PARLEY} ${command}; echo "EXIT=$?"; sleep 60`);
    const screen = (escapes = false) => tmux("capture-pane", "-p", ...(escapes ? ["-e"] : []), "-t", name).stdout.toString();
    return {
      screen,
      async keys(...keys: string[]) {
        tmux("send-keys", "-t", name, ...keys);
        await Bun.sleep(150);
      },
      /** Text typed as it is (no key names). */
      async text(text: string) {
        tmux("send-keys", "-t", name, "-l", text);
        await Bun.sleep(150);
      },
      async until(check: (screen: string) => boolean, what: string, ms = 30_000) {
        const deadline = Date.now() + ms;
        while (!check(screen())) {
          if (Date.now() > deadline) throw new Error(`never saw ${what}; screen:\n${screen()}`);
          await Bun.sleep(50);
        }
      },
      /** The line the cursor is on in the input box, without the prompt. */
      input: () => screen().split("\n").filter((l) => l.startsWith("> ")).at(-1)?.slice(2).trimEnd() ?? "",
      stop: () => tmux("kill-session", "-t", name),
    };
  }

  /** `parley chat` with gpt-4o against `url`, in a fresh home directory, once its screen is up. */
  async function chat(url: string, key: string, extraEnv: Record<string, string> = {}) {
    const dir = mkdtempSync(join(tmpdir(), "parley-chat-"));
    const env = { HOME: dir, PARLEY_DATA_DIR: join(dir, "data"), ...extraEnv };
    const command = `chat --server-url ${url} --api-key ${key} --model gpt-4o`;
    const t = start(command, { cwd: dir, env });
    try {
      await t.until((screen) => screen.includes("parley · gpt-4o ·"), "the chat screen");
    } catch (error) {
      t.stop();
      throw error;
    }
    return { t, dir, env, command };
  }

  return {
    tmux,
    start,
    chat,
    stop() {
      tmux("kill-server");
      rmSync(join(process.env.TMUX_TMPDIR || "/tmp", `tmux-${process.getuid?.() ?? 0}`, socket), { force: true });
    },
  };
}

export type Terminal = ReturnType<ReturnType<typeof tmuxServer>["start"]>;

/**
 * A terminal test file's set-up: a fake-upstream gateway listening for `parley chat`, a tmux server,
 * both stopped after the file and the gateway's script reset before each test. `env` adds settings.
 */
export async function terminalSuite(env: Record<string, string> = {}) {
  const gateway = await startGateway({ RATE_LIMIT_RPM: "0", ...env });
  const url = gateway.listen();
  const terminal = tmuxServer();
  afterAll(async () => {
    terminal.stop();
    await gateway.stop();
  });
  beforeEach(() => gateway.reset());
  return { hasTmux: !!Bun.which("tmux"), gateway, url, terminal };
}
