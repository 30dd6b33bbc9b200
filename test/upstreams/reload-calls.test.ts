import { afterAll, afterEach, beforeEach, describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { createConsola } from "consola";
import { loadConfig } from "../../src/config.ts";
import { createApp } from "../../src/server/app.ts";
import { reloadUpstreams } from "../../src/server/upstreams-reload.ts";
import { TEST_KEY } from "../lib/app.ts";
import { readSse } from "../lib/gateway.ts";
import { eventually } from "../server/serve-process.ts";
import { bodyFor, SECRETS, startFakes, where, writeToml } from "./fleet.ts";

const fakes = await startFakes();
afterAll(() => fakes.stop());
beforeEach(() => fakes.reset());

const ollama = (url: string) => `[upstreams.ollama]\nkind = "openai"\nbase_url = "${url}"\nmodels = ["qwen2.5-coder:7b"]\n`;
const groq = `\n[upstreams.groq]\nkind = "openai"\nbase_url = "${fakes.groq.url}"\napi_key = "\${OPENROUTER_KEY}"\n`;

/** parley in process, its upstreams file watched as `serve` watches it, its log lines kept. */
function watched(toml: string) {
  const { dir, file } = writeToml(toml);
  const env = { HOME: dir, PARLEY_DATA_DIR: join(dir, "data"), PARLEY_CONFIG_DIR: join(dir, "config"), API_KEY: TEST_KEY, MODELS_REFRESH_S: "0", PARLEY_UPSTREAMS: file, ...SECRETS };
  const load = () => loadConfig({ env, cwd: dir });
  const lines: string[] = [];
  const log = createConsola({ level: 3, reporters: [{ log: (entry) => lines.push(entry.args.join(" ")) }] });
  const app = createApp({ config: load().config, log });
  const stop = reloadUpstreams({ file, load, app, log });
  const ask = (model: string, stream = false) =>
    app.handle(new Request("http://localhost/v1/chat/completions", {
      method: "POST",
      headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" },
      body: JSON.stringify(bodyFor("/v1/chat/completions", model, stream)),
    }));
  return { app, file, lines, ask, load, write: (text: string) => writeFileSync(file, text), stop };
}

let running: ReturnType<typeof watched> | undefined;
afterEach(() => running?.stop());

/** How many calls each fake has received so far. */
const received = () => [fakes.ollama.received.length, fakes.openrouter.received.length, fakes.groq.received.length];

describe("reloading parley.toml in a running parley, with real upstreams (contract 13)", () => {
  test("an upstream added, changed and removed by editing the file; a broken edit keeps what runs", async () => {
    const p = (running = watched(ollama(fakes.ollama.url)));
    expect(where(await p.ask("ollama/qwen2.5-coder:7b")).upstream).toBe("ollama");
    expect((await p.ask("groq/llama3")).status).toBe(404);
    expect(received()).toEqual([1, 0, 0]);

    // Add groq: its calls reach its server, with its key read from ${OPENROUTER_KEY}.
    p.write(ollama(fakes.ollama.url) + groq);
    await eventually(async () => (await p.ask("groq/llama3")).status, (status) => status === 200);
    expect(fakes.groq.last().body.model).toBe("llama3");
    expect(fakes.groq.last().headers.get("authorization")).toBe(`Bearer ${SECRETS.OPENROUTER_KEY}`);
    expect(p.lines.join("\n")).toMatch(/upstreams reloaded \(parley\.toml changed\): added groq/);

    // Change ollama: the same name now calls another server (the openrouter fake).
    p.write(ollama(fakes.openrouter.url) + groq);
    await eventually(async () => (await p.ask("ollama/qwen2.5-coder:7b"), fakes.openrouter.received.length), (n) => n > 0);
    const calledOld = fakes.ollama.received.length;
    expect(where(await p.ask("ollama/qwen2.5-coder:7b")).upstream).toBe("ollama");
    expect(fakes.ollama.received.length).toBe(calledOld);
    expect(p.lines.join("\n")).toMatch(/upstreams reloaded \(parley\.toml changed\): changed ollama/);

    // A broken edit: refused with its line; ollama still calls the openrouter fake, groq is still there.
    p.write(`${ollama(fakes.openrouter.url)}${groq}timeout_ms = "soon"\n`);
    await eventually(() => p.lines.join("\n"), (log) => log.includes("upstreams not reloaded"));
    expect(p.lines.join("\n")).toContain(`the running configuration stays: ${p.file}:10: timeout_ms in [upstreams.groq] must be a whole number`);
    const [, openrouterCalls, groqCalls] = received();
    expect(where(await p.ask("ollama/qwen2.5-coder:7b")).upstream).toBe("ollama");
    expect(where(await p.ask("groq/llama3")).status).toBe(200);
    expect(received().slice(1)).toEqual([openrouterCalls! + 1, groqCalls! + 1]);

    // Remove groq (and mend the file): its id is unknown again.
    p.write(ollama(fakes.openrouter.url));
    await eventually(async () => (await p.ask("groq/llama3")).status, (status) => status === 404);
    expect(p.lines.join("\n")).toMatch(/upstreams reloaded \(parley\.toml changed\): removed groq/);
    expect(Object.keys((await (await p.app.handle(new Request("http://localhost/health"))).json()).services)).toEqual(["alpha", "beta", "ollama", "mock"]);
  });

  test("a route added by an edit applies to the next request, with its name", async () => {
    const p = (running = watched(ollama(fakes.ollama.url) + groq));
    expect((await p.ask("coder")).status).toBe(404);
    p.write(`${ollama(fakes.ollama.url)}${groq}\n[[routes]]\nname = "coding"\nmatch = "coder"\nmodel = "qwen2.5-coder:7b"\nto = ["groq", "ollama"]\n`);
    const response = await eventually(() => p.ask("coder"), (r) => r.status === 200);
    expect(where(response)).toMatchObject({ upstream: "groq", route: "coding" });
    expect(fakes.groq.last().body.model).toBe("qwen2.5-coder:7b");
  });

  test("a stream in flight finishes with the upstream it began with; the next request uses the new file", async () => {
    const p = (running = watched(ollama(fakes.ollama.url)));
    fakes.ollama.next({ kind: "stream", chunks: ["one", " two", " three", " four"], gapMs: 30 });
    const streaming = await p.ask("ollama/qwen2.5-coder:7b", true);
    expect(streaming.status).toBe(200);
    // The reload takes effect at once (app.reload is what the watcher calls).
    p.write(`[upstreams.other]\nkind = "openai"\nbase_url = "${fakes.groq.url}"\n`);
    p.app.reload(p.load().config);
    expect((await p.ask("ollama/qwen2.5-coder:7b")).status).toBe(404);
    const events = await readSse(streaming);
    const text = events.filter((e) => typeof e.data === "object").map((e) => e.data.choices?.[0]?.delta?.content ?? "").join("");
    expect(text).toBe("one two three four");
    expect(events.at(-1)!.data).toBe("[DONE]");
    expect(where(await p.ask("other/llama3")).upstream).toBe("other");
    expect(received()).toEqual([1, 0, 1]);
  });
});
