import { describe, expect, test } from "bun:test";
import { SCOPES as SERVER_SCOPES } from "../../src/config.ts";
import { checkChanges, checkNewKey } from "../../src/keys/validate.ts";
import { draftOf, readDraft, SCOPES } from "../../ui/pages/key-draft.ts";

const NOW = Date.parse("2026-11-27T12:00:00Z");
const KEY = {
  name: "ci", scopes: ["chat"], models: ["gpt-4o*"], routes: ["coding"], upstreams: ["alpha"], budget: { tokens: 200000, period: "week" },
  rpm: 60, tpm: 20000, expires_at: NOW / 1000 + 86_400, disabled: true, metadata: { team: "web", note: "a=b" },
};

describe("the Keys page's form, as the admin API's fields", () => {
  test("offers every scope a key may have", () => {
    expect(SCOPES).toEqual([...SERVER_SCOPES]);
  });

  test("a new key sends every field, as the API's checks take them", () => {
    const read = readDraft(draftOf(KEY), undefined, NOW);
    expect(read).toEqual({ ok: true, fields: KEY });
    expect(checkNewKey(read.ok && read.fields)).toEqual(KEY as never);
    expect(readDraft(draftOf({ name: "bare" }), undefined, NOW)).toEqual({
      ok: true,
      fields: { name: "bare", scopes: ["chat", "models"], models: null, routes: null, upstreams: null, budget: null, rpm: null, tpm: null, expires_at: null, disabled: false, metadata: {} },
    });
  });

  test("an edit sends only what changed; emptied fields are cleared as the API clears them", () => {
    const start = draftOf(KEY);
    expect(readDraft({ ...start }, start, NOW)).toEqual({ ok: true, fields: {} });
    expect(readDraft({ ...start, rpm: "61", scopes: ["chat"] }, start, NOW)).toEqual({ ok: true, fields: { rpm: 61 } });
    const cleared = { ...start, models: " ", routes: "", upstreams: "", amount: "", rpm: "", tpm: "", expires: "", disabled: false, metadata: "" };
    const read = readDraft(cleared, start, NOW);
    expect(read).toEqual({ ok: true, fields: { models: null, routes: null, upstreams: null, budget: null, rpm: null, tpm: null, expires_at: null, disabled: false, metadata: {} } });
    expect(checkChanges(read.ok && read.fields)).toEqual(read.ok ? (read.fields as never) : {});
  });

  test("refuses what it cannot send: a metadata line without '=', an expiry in the past; an untouched one stays", () => {
    const start = draftOf(KEY);
    expect(readDraft({ ...start, metadata: "team web" }, start, NOW)).toMatchObject({ ok: false, message: expect.stringContaining("'team web' has no '='") });
    expect(readDraft({ ...start, expires: "2020-01-01T00:00" }, start, NOW)).toMatchObject({ ok: false, message: expect.stringContaining("in the future") });
    // An expired key, or metadata the form cannot show line by line, saved without touching them.
    const odd = draftOf({ ...KEY, expires_at: NOW / 1000 - 60, metadata: { note: "two\nlines" } });
    expect(readDraft({ ...odd, tpm: "" }, odd, NOW)).toEqual({ ok: true, fields: { tpm: null } });
  });

  test("metadata: keys and values trimmed, the first '=' splits, any key stays a key", () => {
    const read = readDraft({ ...draftOf({}), name: "m", metadata: " a = 1 \n\n__proto__=x\nb==2" }, undefined, NOW);
    expect(read.ok && JSON.stringify(read.fields.metadata)).toBe('{"a":"1","__proto__":"x","b":"=2"}');
  });
});
