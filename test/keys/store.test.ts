import { describe, expect, test } from "bun:test";
import { GatewayError } from "../../src/errors.ts";
import { hashSecret, randomAlphanumeric } from "../../src/keys/secret.ts";
import { checkChanges, checkNewKey } from "../../src/keys/validate.ts";
import { keysIn } from "./lib.ts";

const failure = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as GatewayError;
  }
  throw new Error("expected a failure");
};

describe("the key store", () => {
  test("create shows the secret once and keeps only its SHA-256", () => {
    using keys = keysIn();
    const issued = keys.create({ name: "teammate", models: ["claude-*"], budget: { usd: 5, period: "day" }, metadata: { team: "web" } });
    expect(issued.key).toMatch(/^pk-[A-Za-z0-9]{40}$/);
    expect(issued.prefix).toBe(issued.key.slice(0, 10));
    expect(issued).toMatchObject({ name: "teammate", source: "runtime", scopes: ["chat", "models"], models: ["claude-*"], routes: null, budget: { usd: 5, period: "day" }, disabled: false, revoked_at: null, metadata: { team: "web" } });
    expect(issued.id).toMatch(/^key_[A-Za-z0-9]{16}$/);

    // Reads never carry the secret; the database holds its hash and nothing more of it.
    expect(keys.store.find(issued.id)).not.toHaveProperty("key");
    expect(JSON.stringify(keys.store.list())).not.toContain(issued.key);
    const row = keys.db.query<{ hash: string }, []>("SELECT hash FROM keys").get()!;
    expect(row.hash).toBe(hashSecret(issued.key));
    const everything = keys.db.query<Record<string, unknown>, []>("SELECT * FROM keys").all();
    expect(JSON.stringify(everything)).not.toContain(issued.key.slice(10));
  });

  test("names are unique among live keys and env keys: a 422 naming name", () => {
    using keys = keysIn({ reservedNames: new Map([["main", "API_KEY"]]) });
    const first = keys.create({ name: "ci" });
    const taken = failure(() => keys.create({ name: "ci" }));
    expect(taken).toMatchObject({ status: 422, type: "validation_error", message: "Invalid value for 'name'." });
    expect(taken.details).toStartWith("name: 'ci' is already the name of key");
    expect(failure(() => keys.create({ name: "main" })).details).toBe("name: 'main' is the name of a key set in API_KEY");
    const other = keys.create({ name: "other" });
    expect(failure(() => keys.store.update(other.id, { name: "ci" }, "main")).details).toStartWith("name: 'ci'");
    // A revoked key's name is free again.
    keys.store.revoke(first.id, "main");
    expect(keys.create({ name: "ci" }).name).toBe("ci");
  });

  test("bodies are checked field by field", () => {
    expect(failure(() => checkNewKey({})).details).toBe("name: required");
    expect(failure(() => checkNewKey({ name: "a b" })).details).toStartWith("name:");
    expect(failure(() => checkNewKey({ name: "key_AAAAAAAAAAAAAAAA" })).details).toStartWith("name:");
    expect(failure(() => checkNewKey({ name: "x", scopes: ["chat", "root"] })).details).toStartWith("scopes:");
    expect(failure(() => checkNewKey({ name: "x", budget: { usd: 5, tokens: 3, period: "day" } })).details).toStartWith("budget:");
    expect(failure(() => checkNewKey({ name: "x", budget: { tokens: 1.5, period: "day" } })).details).toStartWith("budget:");
    expect(failure(() => checkNewKey({ name: "x", budget: { usd: 5, period: "year" } })).details).toStartWith("budget:");
    expect(failure(() => checkNewKey({ name: "x", metadata: { a: { b: "c" } } })).details).toStartWith("metadata:");
    expect(failure(() => checkNewKey({ name: "x", rpm: 0 })).details).toStartWith("rpm:");
    expect(failure(() => checkChanges({ secret: "x" })).details).toStartWith("secret: unknown field");
    expect(failure(() => checkChanges([])).status).toBe(400);
    expect(checkNewKey({ name: "x", scopes: ["admin"], budget: { tokens: 200000, period: "week" } })).toMatchObject({ scopes: ["admin"], budget: { tokens: 200000, period: "week" } });
    expect(checkChanges({ models: null, rpm: null })).toEqual({ models: null, rpm: null });
  });

  test("update changes only what it names; null clears", () => {
    using keys = keysIn();
    const key = keys.create({ name: "app", models: ["gpt-*"], rpm: 10, metadata: { a: "1" } });
    const updated = keys.store.update(key.id, checkChanges({ models: null, tpm: 1000, disabled: true }), "main");
    expect(updated).toMatchObject({ name: "app", models: null, rpm: 10, tpm: 1000, disabled: true, metadata: { a: "1" }, prefix: key.prefix });
    expect(failure(() => keys.store.update("key_0000000000000000", {}, "main")).status).toBe(404);
  });

  test("revoke, then every change of it is refused; revoking again changes nothing", () => {
    using keys = keysIn();
    const key = keys.create({ name: "leaked" });
    const revoked = keys.store.revoke(key.id, "main");
    expect(revoked.revoked_at).toBeNumber();
    expect(keys.store.revoke(key.id, "main")).toEqual(revoked);
    expect(failure(() => keys.store.update(key.id, { rpm: 5 }, "main")).status).toBe(404);
    expect(failure(() => keys.store.rotate(key.id, 0, "main")).status).toBe(404);
    expect(keys.store.find("leaked")).toBeUndefined();
    expect(keys.store.find(key.id)).toMatchObject({ name: "leaked" });
  });

  test("rotate issues a new secret with a new prefix", () => {
    using keys = keysIn();
    const key = keys.create({ name: "desktop" });
    const rotated = keys.store.rotate(key.id, 3600, "main");
    expect(rotated.key).not.toBe(key.key);
    expect(rotated.id).toBe(key.id);
    expect(rotated.prefix).toBe(rotated.key.slice(0, 10));
    expect(failure(() => keys.store.rotate(key.id, -1, "main")).details).toStartWith("grace_s:");
  });

  test("the audit log names who changed what, and never holds a secret or its hash", () => {
    using keys = keysIn();
    const key = keys.create({ name: "ci", budget: { tokens: 1000, period: "month" } });
    keys.store.update(key.id, { rpm: 60 }, "ops");
    const rotated = keys.store.rotate(key.id, 60, "ops");
    keys.store.revoke(key.id, "main");
    keys.store.addAudit("main", "reload", null, { upstreams: 2 });
    const log = keys.store.audit();
    expect(log.map((e) => [e.actor, e.action, e.target])).toEqual([
      ["main", "reload", null], ["main", "key.revoke", key.id], ["ops", "key.rotate", key.id], ["ops", "key.update", key.id], ["main", "key.create", key.id],
    ]);
    expect(log[3]!.detail).toEqual({ name: "ci", changes: { rpm: 60 } });
    const raw = JSON.stringify(keys.db.query("SELECT * FROM audit_log").all());
    for (const secret of [key.key, rotated.key]) {
      expect(raw).not.toContain(secret.slice(3));
      expect(raw).not.toContain(hashSecret(secret));
    }
    expect(keys.store.audit({ limit: 2 }).length).toBe(2);
  });

  test("secrets are drawn without bias over [A-Za-z0-9]", () => {
    const counts = new Map<string, number>();
    const drawn = randomAlphanumeric(62 * 2000);
    for (const c of drawn) counts.set(c, (counts.get(c) ?? 0) + 1);
    expect(counts.size).toBe(62);
    // Each character 2000 times expected; a modulo over 256 would give the first 8 about 2,300.
    for (const n of counts.values()) expect(Math.abs(n - 2000)).toBeLessThan(250);
  });
});
