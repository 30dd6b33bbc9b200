import { afterAll, describe, expect, test } from "bun:test";
import { createKeyLookup } from "../../src/keys/lookup.ts";
import { runCli, startCli, userDir } from "../lib/cli.ts";
import { freePort } from "../lib/proc.ts";
import { keysIn } from "./lib.ts";

const ADMIN = "sk-admin-0123456789abcdef";
const keys = keysIn({ reservedNames: new Map([["main", "API_KEY"]]) });
// A real `parley serve` on the data directory the test reads the store from.
const user = userDir();
const server = await startCli([], { cwd: user.dir, env: { ...user.env, API_KEY: ADMIN, PARLEY_DATA_DIR: keys.dataDir } });
const lookup = createKeyLookup(keys.store);
afterAll(async () => {
  await server.stop();
  keys[Symbol.dispose]();
});

const env = { ...process.env, PARLEY_ADMIN_KEY: ADMIN };
const parley = (...args: string[]) => runCli(["keys", ...args, "--url", server.url], { env });

describe("parley keys, against a running parley serve", () => {
  test("create prints the secret alone, and the key it made works", async () => {
    const made = await parley("create", "ci", "--scopes", "chat,models", "--models", "claude-*,gpt-4o", "--budget", "5usd/day", "--rpm", "60", "--tpm", "100000", "--expires", "30d", "--meta", "team=platform");
    expect(made).toMatchObject({ code: 0, stderr: "" });
    expect(made.stdout).toMatch(/^pk-[A-Za-z0-9]{40}\n$/);
    const found = lookup.identify(made.stdout.trim());
    if (!found?.ok) throw new Error("the new key is not accepted");
    expect(found.key.label).toBe("ci");
    const record = keys.store.find("ci")!;
    expect(record).toMatchObject({ scopes: ["chat", "models"], models: ["claude-*", "gpt-4o"], budget: { usd: 5, period: "day" }, rpm: 60, tpm: 100000, metadata: { team: "platform" } });
    expect(record.expires_at! - Date.now() / 1000).toBeCloseTo(30 * 86_400, -2);

    const json = await parley("create", "desktop", "--budget", "200000tokens/week", "--json");
    const issued = JSON.parse(json.stdout) as { key: string; name: string; budget: unknown; prefix: string };
    expect(issued).toMatchObject({ name: "desktop", budget: { tokens: 200000, period: "week" } });
    expect(issued.prefix).toBe(issued.key.slice(0, 10));
  });

  test("list shows a table, env keys read-only, and never a secret", async () => {
    const listed = await parley("list");
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^NAME\s+ID\s+PREFIX\s+SCOPES\s+MODELS\s+BUDGET\s+SPENT\s+EXPIRES\s+LAST USED\s+STATUS$/);
    expect(lines.find((l) => l.startsWith("main "))).toMatch(/env \(read-only\)$/);
    expect(lines.find((l) => l.startsWith("ci "))).toMatch(/claude-\*,gpt-4o\s+\$5\/day\s+\$0\.0000\s+.*active$/);
    const json = JSON.parse((await parley("list", "--json")).stdout) as { data: { name: string; key?: string }[] };
    expect(json.data.map((k) => k.name)).toEqual(["main", "ci", "desktop"]);
    expect(json.data.every((k) => k.key === undefined)).toBe(true);
  });

  test("show, update and revoke a key by its name", async () => {
    const shown = await parley("show", "ci");
    expect(shown.stdout).toMatch(/^name\s+ci$/m);
    expect(shown.stdout).toMatch(/^metadata\.team\s+platform$/m);

    const updated = await parley("update", "ci", "--budget", "none", "--models", "all", "--disable", "--rpm", "10", "--json");
    expect(JSON.parse(updated.stdout)).toMatchObject({ name: "ci", budget: null, models: null, disabled: true, rpm: 10 });
    const id = keys.store.find("ci")!.id;
    const revoked = await parley("revoke", id);
    expect(revoked.stdout).toBe(`Revoked key 'ci' (${id}).\n`);
    expect(keys.store.find(id)!.revoked_at).toBeNumber();
  });

  test("rotate prints the new secret; with --grace the old one keeps working until then", async () => {
    const made = (await parley("create", "rotating")).stdout.trim();
    const rotated = await parley("rotate", "rotating", "--grace", "1h");
    expect(rotated.stdout).toMatch(/^pk-[A-Za-z0-9]{40}\n$/);
    expect(lookup.identify(made)).toMatchObject({ ok: true });
    expect(lookup.identify(rotated.stdout.trim())).toMatchObject({ ok: true });
    const audit = await fetch(`${server.url}/admin/v1/audit?limit=1`, { headers: { authorization: `Bearer ${ADMIN}` } }).then((r) => r.json());
    expect(audit.data[0]).toMatchObject({ actor: "main", action: "key.rotate", detail: { name: "rotating", grace_s: 3600 } });
    const again = await parley("rotate", "rotating", "--json");
    expect(JSON.parse(again.stdout)).toMatchObject({ name: "rotating", key: expect.stringMatching(/^pk-/) });
    expect(lookup.identify(rotated.stdout.trim())).toMatchObject({ ok: false, reason: "rotated" });
  });

  test("the server's refusals and the user's mistakes in one line", async () => {
    const taken = await parley("create", "desktop");
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/^parley: 422 from http:\/\/127\.0\.0\.1:\d+: Invalid value for 'name'\. \(name: 'desktop' is already the name of key key_\w+\)\n$/);
    expect((await parley("show", "nobody")).stderr).toStartWith("parley: no key named or with the id 'nobody'");
    expect((await parley("update", "main", "--rpm", "5")).stderr).toStartWith("parley: 'main' is set in the environment");
    const badBudget = await parley("create", "x", "--budget", "5eur/day");
    expect(badBudget.code).toBe(2);
    expect(badBudget.stderr).toStartWith('parley: --budget "5eur/day": use <N>usd/<period>');
    const wrongKey = await runCli(["keys", "list", "--url", server.url], { env: { ...process.env, PARLEY_ADMIN_KEY: "sk-wrong-0123456789abcdef" } });
    expect(wrongKey).toMatchObject({ code: 1, stderr: expect.stringMatching(/^parley: 401 from .*: Invalid API key\.\n$/) });
  });
});

describe("parley keys without a server", () => {
  test("says plainly that no server answers, at --url or at the configured address", async () => {
    const port = freePort();
    const atUrl = await runCli(["keys", "list", "--url", `http://127.0.0.1:${port}`], { env });
    expect(atUrl.code).toBe(1);
    expect(atUrl.stderr).toMatch(new RegExp(`^parley: no parley server answers at http://127\\.0\\.0\\.1:${port} \\(\\w+\\): start one with \`parley serve\`, or pass --url\\n$`));
    const configured = await runCli(["keys", "list"], { env: { ...process.env, PORT: String(port), API_KEY: ADMIN } });
    expect(configured.code).toBe(1);
    expect(configured.stderr).toStartWith(`parley: no parley server answers at http://127.0.0.1:${port} `);
    const keyless = await runCli(["keys", "list"], { env: { ...process.env, PORT: String(port) } });
    expect(keyless).toMatchObject({ code: 2, stderr: "parley: no admin key: set PARLEY_ADMIN_KEY (or API_KEY) to a key with the admin scope\n" });
  });
});
