/**
 * The curl examples in the README and docs/, run as written against a gateway on the fake upstreams:
 * only the address (localhost:8000) and the file id placeholder are filled in, and $KEY is the
 * gateway's key. Each must answer 200 in the shape the page shows.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startGateway, TEST_KEY, type Gateway } from "../lib/gateway.ts";
import { codeBlocks, docFiles, read, ROOT } from "./markdown.ts";

const PLACEHOLDER_ID = /file-X{24}/g;
const NOTES = "Buy milk.\nCall the plumber on Tuesday.\n";

/** The curl commands of a shell block: continuation lines joined, lines inside an open quote kept, comments dropped. */
function curls(code: string): string[] {
  const commands: string[] = [];
  let current = "";
  let quote: string | undefined;
  for (const line of code.replace(/\\\n\s*/g, " ").split("\n")) {
    let kept = "";
    for (let i = 0; i < line.length; i++) {
      const c = line[i]!;
      if (quote === undefined && c === "#" && (i === 0 || /\s/.test(line[i - 1]!))) break;
      if (c === "'" || c === '"') quote = quote === undefined ? c : quote === c ? undefined : quote;
      kept += c;
    }
    current += (current ? "\n" : "") + kept;
    if (quote !== undefined) continue;
    if (current.trim().startsWith("curl ")) commands.push(current.trim());
    current = "";
  }
  return commands;
}

const blocks = docFiles().flatMap((file) =>
  codeBlocks(read(file), "sh").map((b) => ({ name: `${file}:${b.line}`, commands: curls(b.code) })).filter((b) => b.commands.length > 0),
);

let gateway: Gateway;
let base: string;

beforeAll(async () => {
  gateway = await startGateway();
  base = gateway.listen();
});
afterAll(() => gateway.stop());

interface Answer {
  status: number;
  type: string;
  body: string;
}

async function run(command: string, cwd: string): Promise<Answer> {
  const address = base.replace("http://", "");
  const line = command.replace(/(https?:\/\/)?(localhost|127\.0\.0\.1):8000/g, (_, scheme: string | undefined) => (scheme ? base : address))
    .replace(/^curl /, `curl -sS -w '\\n%{http_code} %{content_type}' `);
  const proc = Bun.spawn(["bash", "-c", line], { cwd, env: { ...process.env, KEY: TEST_KEY }, stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  expect(err, command).toBe("");
  expect(code, command).toBe(0);
  const at = out.lastIndexOf("\n");
  const [status, type = ""] = out.slice(at + 1).split(" ");
  return { status: Number(status), type, body: out.slice(0, at) };
}

/** What the page promises each endpoint answers. */
function checkShape(command: string, answer: Answer, cwd: string): string | undefined {
  const path = /\/(v1(beta)?\/[\w/.:@-]*|admin\/v1\/[\w/.-]*|health|metrics)(\?[^'"\s]*)?/.exec(command)?.[0] ?? "";
  const sse = answer.type.startsWith("text/event-stream");
  const json = sse ? undefined : JSON.parse(answer.body || "null");
  if (sse) {
    const tail = answer.body.trimEnd();
    // Gemini's stream has no closing event: its last chunk carries the finish reason.
    expect(tail.endsWith("data: [DONE]") || tail.includes("event: message_stop") || tail.split("\n").at(-1)!.includes('"finishReason"')).toBe(true);
  } else if (path.includes(":generateContent")) expect(json.candidates[0].content.parts.length).toBeGreaterThan(0);
  else if (path.includes(":countTokens")) expect(json.totalTokens).toBeGreaterThan(0);
  else if (path.includes(":embedContent") || path.includes(":batchEmbedContents")) expect(json.embedding ?? json.embeddings).toBeDefined();
  else if (path.includes(":rawPredict")) expect(json.type === "message" || json.input_tokens > 0).toBe(true);
  else if (path.startsWith("/v1beta/models")) expect(json.models ?? json.name).toBeDefined();
  else if (path === "/health" || path.endsWith("/health")) expect(json.status).toBe("healthy");
  else if (path.startsWith("/v1/models") || path.startsWith("/v1/usage") || path.startsWith("/admin/v1/")) expect(json.object).toBe("list");
  else if (path.startsWith("/v1/chat/completions")) {
    if (path.includes("target_format=beta_messages")) expect(json.type).toBe("message");
    else expect(json.choices[0].message.content.length).toBeGreaterThan(0);
  } else if (path.startsWith("/v1/files")) {
    if (/-X DELETE/.test(command)) expect(json.deleted).toBe(true);
    else if (path.endsWith("/content")) expect(readFileSync(join(cwd, / -o (\S+)/.exec(command)![1]!), "utf8")).toBe(NOTES);
    else if (/ -F /.test(command)) {
      expect(json.object).toBe("file");
      return json.id;
    } else if (path.startsWith("/v1/files?")) expect(json.object).toBe("list");
    else expect(json.object).toBe("file");
  } else if (path.startsWith("/v1/embeddings")) expect(json.data[0].embedding.length).toBeGreaterThan(0);
  else if (path.startsWith("/v1/completions")) expect(json.object).toBe("text_completion");
  else throw new Error(`no shape known for ${path}: add it to checkShape`);
}

describe("the curl examples in the documentation", () => {
  test("there are examples to run", () => {
    expect(blocks.flatMap((b) => b.commands).length).toBeGreaterThanOrEqual(10);
  });

  for (const block of blocks) {
    test(block.name, async () => {
      const cwd = mkdtempSync(join(tmpdir(), "parley-docs-"));
      writeFileSync(join(cwd, "notes.txt"), NOTES);
      let fileId: string | undefined;
      for (const written of block.commands) {
        const command = fileId ? written.replace(PLACEHOLDER_ID, fileId) : written;
        if (PLACEHOLDER_ID.test(command)) throw new Error(`${block.name}: a file id is used before a file is uploaded`);
        const answer = await run(command, cwd);
        expect({ command, status: answer.status }).toEqual({ command, status: 200 });
        fileId = checkShape(command, answer, cwd) ?? fileId;
      }
    });
  }
});

describe("the shell recipe in docs/ci.md", () => {
  test("starts parley, waits for its ready line and gets the mock's answer", async () => {
    const recipe = codeBlocks(read("docs/ci.md"), "sh").find((b) => b.code.includes("ready.json"));
    expect(recipe).toBeDefined();
    const cwd = mkdtempSync(join(tmpdir(), "parley-ci-shell-"));
    // `./parley` is the built binary in PARLEY_BIN, else this checkout's source.
    const parley = process.env.PARLEY_BIN ? `exec "${process.env.PARLEY_BIN}" "$@"` : `exec bun --no-env-file "${join(ROOT, "src/cli.ts")}" "$@"`;
    writeFileSync(join(cwd, "parley"), `#!/bin/sh\n${parley}\n`, { mode: 0o755 });
    const script = `${recipe!.code}\nstatus=$?\nkill "$(jq -r .pid ready.json)"\nexit $status\n`;
    const { MODELS_REFRESH_S: _, ...env }: Record<string, string | undefined> = { ...process.env, HOME: cwd, XDG_CONFIG_HOME: join(cwd, ".config"), XDG_DATA_HOME: join(cwd, ".data") };
    const proc = Bun.spawn(["timeout", "60", "bash", "-c", script], { cwd, env, stdout: "pipe", stderr: "pipe" });
    const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    expect({ code, out, err }).toMatchObject({ code: 0 });
    expect(out).toContain("ping");
  }, 60_000);
});
