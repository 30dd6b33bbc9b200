import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { createKeyLookup, type ActiveKey } from "../../src/keys/lookup.ts";
import { envKeys } from "../../src/keys/env-keys.ts";
import { hashSecret } from "../../src/keys/secret.ts";
import { keysIn } from "./lib.ts";

const HELPER = join(import.meta.dir, "helpers/change-keys.ts");

async function inAnotherProcess(dataDir: string, ...args: string[]) {
  const proc = Bun.spawn(["bun", "--no-env-file", HELPER, dataDir, ...args], { stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  if (code !== 0) throw new Error(`helper failed: ${err}`);
  return JSON.parse(out) as { id: string; key: string };
}

describe("the key lookup", () => {
  test("a live key, an unknown one, and the reason a known one is refused", () => {
    using keys = keysIn();
    const lookup = createKeyLookup(keys.store);
    const key = keys.create({ name: "app", scopes: ["chat"], models: ["claude-*", "gpt-4o"], upstreams: ["bedrock"] });
    const found = lookup.identify(key.key);
    if (!found?.ok) throw new Error("expected the key");
    expect(found.key).toMatchObject({ id: key.id, label: "app", source: "runtime", scopes: new Set(["chat"]), routes: null, upstreams: new Set(["bedrock"]) });
    expect(["claude-sonnet-4", "gpt-4o", "gpt-4o-mini"].map(found.key.allowsModel!)).toEqual([true, true, false]);
    expect(lookup.identify("pk-" + "x".repeat(40))).toBeUndefined();

    keys.store.update(key.id, { disabled: true }, "main");
    expect(lookup.identify(key.key)).toEqual({ ok: false, reason: "disabled", message: "API key 'app' is disabled." });
    keys.store.update(key.id, { disabled: false, expires_at: Math.floor(Date.now() / 1000) - 1 }, "main");
    expect(lookup.identify(key.key)).toMatchObject({ ok: false, reason: "expired" });
    keys.store.update(key.id, { expires_at: Math.floor(Date.now() / 1000) + 3600 }, "main");
    expect(lookup.identify(key.key)).toMatchObject({ ok: true });
    keys.store.revoke(key.id, "main");
    expect(lookup.identify(key.key)).toMatchObject({ ok: false, reason: "revoked", message: "API key 'app' was revoked." });
  });

  test("rotation: the old secret stops at once, or at the end of its grace", async () => {
    using keys = keysIn();
    const lookup = createKeyLookup(keys.store);
    const a = keys.create({ name: "a" });
    const b = keys.create({ name: "b" });
    const aNew = keys.store.rotate(a.id, 0, "main");
    const bNew = keys.store.rotate(b.id, 1, "main");
    expect(lookup.identify(a.key)).toMatchObject({ ok: false, reason: "rotated" });
    expect(lookup.identify(aNew.key)).toMatchObject({ ok: true, key: { id: a.id } });
    expect(lookup.identify(b.key)).toMatchObject({ ok: true, key: { id: b.id } });
    expect(lookup.identify(bNew.key)).toMatchObject({ ok: true, key: { id: b.id } });
    // The grace is a second: wait it out.
    while (lookup.identify(b.key)?.ok) await Bun.sleep(50);
    expect(lookup.identify(b.key)).toMatchObject({ ok: false, reason: "rotated" });
    // A change of the key after its rotation reaches its old secret too.
    keys.store.revoke(b.id, "main");
    expect(lookup.identify(b.key)).toMatchObject({ ok: false, reason: "revoked" });
  });

  test("env keys share the map", () => {
    using keys = keysIn();
    const fixed = envKeys([{ key: "sk-env-0123456789abcdef", label: "main", scopes: ["chat", "admin"] }, { key: "sk-ci-0123456789abcdef", label: "ci", scopes: ["chat"], budget: { unit: "usd", amount: 2 } }]);
    const env = fixed[0]![1];
    expect(env).toMatchObject({ id: "env:main", label: "main", source: "env", scopes: new Set(["chat", "admin"]), allowsModel: null, budget: null, rpm: null });
    expect(fixed[1]![1]).toMatchObject({ id: "env:ci", budget: { usd: 2, period: "day" } });
    const lookup = createKeyLookup(keys.store, { fixed });
    expect(lookup.identify("sk-env-0123456789abcdef")).toEqual({ ok: true, key: env });
    keys.create({ name: "x" });
    expect(lookup.identify("sk-env-0123456789abcdef")).toEqual({ ok: true, key: env });
  });

  test("a change made by another process is seen at the next call", async () => {
    using keys = keysIn();
    const lookup = createKeyLookup(keys.store);
    const mine = keys.create({ name: "mine" });
    expect(lookup.identify(mine.key)?.ok).toBe(true);

    const theirs = await inAnotherProcess(keys.dataDir, "create", "theirs");
    expect(lookup.identify(theirs.key)).toMatchObject({ ok: true, key: { id: theirs.id, label: "theirs" } });
    await inAnotherProcess(keys.dataDir, "revoke", mine.id);
    expect(lookup.identify(mine.key)).toMatchObject({ ok: false, reason: "revoked" });
    await inAnotherProcess(keys.dataDir, "update", theirs.id, JSON.stringify({ scopes: ["models"] }));
    expect(lookup.identify(theirs.key)).toMatchObject({ ok: true, key: { scopes: new Set(["models"]) } });
  });

  test("writes to other tables do not reload the keys; last_used_at is written in batches", async () => {
    using keys = keysIn();
    const lookup = createKeyLookup(keys.store);
    const key = keys.create({ name: "busy" });
    lookup.identify(key.key);
    keys.db.run("CREATE TABLE IF NOT EXISTS other (n INTEGER)");
    keys.db.run("INSERT INTO other VALUES (1)");
    expect(keys.store.changes()).toBeUndefined();
    expect(keys.store.changes()).toBeUndefined();

    expect(keys.store.find(key.id)!.last_used_at).toBeNull();
    for (let i = 0; i < 100; i++) lookup.identify(key.key);
    // Not by the requests: by the next flush (a timer, or here the app stopping).
    expect(keys.store.find(key.id)!.last_used_at).toBeNull();
    await lookup.flush();
    expect(keys.store.find(key.id)!.last_used_at).toBeCloseTo(Date.now() / 1000, -1);
    // Touching is not a change of the keys.
    expect(keys.store.changes()).toBeUndefined();
  });

  test("with the database unreadable, env keys and the last known keys stay in force", () => {
    using keys = keysIn();
    const key = keys.create({ name: "known" });
    let down = false;
    const store = { ...keys.store, changes: () => (down ? failing() : keys.store.changes()) };
    const env: ActiveKey = { id: "env:main", label: "main", source: "env", scopes: new Set(["chat"]), allowsModel: null, routes: null, upstreams: null, budget: null, rpm: null, tpm: null };
    const warnings: unknown[] = [];
    const lookup = createKeyLookup(store, { fixed: [[hashSecret("sk-env-0123456789abcdef"), env]], log: { warn: (...args: unknown[]) => warnings.push(args) } as never });
    expect(lookup.identify(key.key)?.ok).toBe(true);
    down = true;
    expect(lookup.identify(key.key)?.ok).toBe(true);
    expect(lookup.identify(key.key)?.ok).toBe(true);
    expect(warnings.length).toBe(1);

    const fresh = createKeyLookup(store, { fixed: [[hashSecret("sk-env-0123456789abcdef"), env]] });
    expect(fresh.identify("sk-env-0123456789abcdef")).toEqual({ ok: true, key: env });
  });
});

function failing(): never {
  throw new Error("SQLITE_IOERR: disk I/O error");
}
