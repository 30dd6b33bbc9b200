import { expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openStore } from "../../tui/store.ts";
import { contextOf, fromJson, toJson, type Turn } from "../../tui/transcript.ts";

test("conversations, turns, usage, prompts and preferences survive reopening the database", () => {
  const dir = mkdtempSync(join(tmpdir(), "parley-store-"));
  const store = openStore(dir);
  const empty = store.createConversation("gpt-4o", { system: "", stream: true });
  const id = store.createConversation("gpt-4o", { system: "Be brief.", stream: false, temperature: 0.2 });
  const question = store.addTurn(id, { role: "user", text: "What is   2+2?\nQuickly.", files: [{ id: "file-x", name: "a.txt" }] });
  store.addTurn(id, { role: "assistant", text: "4", meta: "gpt-4o · 0.1s", truncated: true, toolCalls: [{ name: "calc", arguments: "{}" }] });
  const gone = store.addTurn(id, { role: "error", text: "oops" });
  store.updateTurn({ id: question, role: "user", text: "What is   2+2?\nQuickly.", excluded: true });
  store.deleteTurns([gone]);
  store.updateConversation(id, { model: "gpt-4o-mini", usage: { input: 10, output: 2 } });
  store.updateConversation(id, { usage: { input: 5, output: 1 } });
  store.addPrompt("one");
  store.addPrompt("two");
  store.addPrompt("two");
  store.setPreference("settings", { system: "x", stream: true });
  store.close();

  const again = openStore(dir);
  expect(again.conversations().map((c) => [c.id, c.title, c.model, c.turns])).toEqual([[id, "What is 2+2? Quickly.", "gpt-4o-mini", 1]]);
  expect(again.latestId()).toBe(id);
  expect(again.load(empty)?.turns).toEqual([]);
  const loaded = again.load(id)!;
  expect(loaded).toMatchObject({ model: "gpt-4o-mini", settings: { system: "Be brief.", stream: false, temperature: 0.2 }, usage: { input: 15, output: 3 } });
  expect(loaded.turns).toEqual([
    { id: question, role: "user", text: "What is   2+2?\nQuickly.", excluded: true },
    { id: expect.any(Number), role: "assistant", text: "4", meta: "gpt-4o · 0.1s", truncated: true, toolCalls: [{ name: "calc", arguments: "{}" }] },
  ]);
  expect(again.load(999)).toBeUndefined();
  expect(again.prompts()).toEqual(["one", "two"]);
  expect(again.preference("settings")).toEqual({ system: "x", stream: true });
  expect(again.preference("nothing")).toBeUndefined();
  again.close();
});

test("the context leaves out failed turns and notes; tool calls go as text", () => {
  const turns: Turn[] = [
    { id: 1, role: "user", text: "a" },
    { id: 2, role: "assistant", text: "b" },
    { id: 3, role: "user", text: "broken", excluded: true },
    { id: 4, role: "assistant", text: "half", excluded: true },
    { id: 5, role: "error", text: "503" },
    { id: 6, role: "info", text: "note" },
    { id: 7, role: "user", text: "weather?" },
    { id: 8, role: "assistant", text: "", toolCalls: [{ name: "get_weather", arguments: "{\"city\":\"Paris\"}" }] },
  ];
  expect(contextOf(turns)).toEqual([
    { role: "user", content: "a" }, { role: "assistant", content: "b" }, { role: "user", content: "weather?" },
    { role: "assistant", content: "[tool call get_weather({\"city\":\"Paris\"})]" },
  ]);
});

test("a /save'd JSON file loads back; anything else is refused with a reason", () => {
  const saved = toJson([{ id: 1, role: "user", text: "hi" }, { id: 2, role: "assistant", text: "hello" }], "gpt-4o", { system: "S", stream: false, maxTokens: 9 });
  expect(fromJson(saved)).toEqual({ model: "gpt-4o", settings: { system: "S", stream: false, maxTokens: 9 }, messages: [{ role: "user", content: "hi" }, { role: "assistant", content: "hello" }] });
  expect(fromJson("nope")).toBe("it is not JSON");
  expect(fromJson("[]")).toContain("no \"messages\" list");
  expect(fromJson(JSON.stringify({ messages: [{ role: "tool", content: "x" }] }))).toContain("each message needs a role");
  expect(fromJson(JSON.stringify({ messages: [], settings: { temperature: "hot", stream: "yes" } }))).toEqual({ model: undefined, settings: { system: "", stream: true }, messages: [] });
});

test("conversations are searched by their text (a migrated database too), renamed and deleted", async () => {
  const dir = mkdtempSync(join(tmpdir(), "parley-store-"));
  // A database from before search: the turns there are get indexed when it is opened.
  const { Database } = await import("bun:sqlite");
  const old = openStore(dir);
  const first = old.createConversation("gpt-4o", { system: "", stream: true });
  old.addTurn(first, { role: "user", text: "How do lighthouses work?" });
  old.addTurn(first, { role: "assistant", text: "A Fresnel lens focuses the lamp." });
  old.close();
  const raw = new Database(join(dir, "chat.sqlite"));
  raw.exec("DROP TRIGGER turns_fts_insert; DROP TRIGGER turns_fts_delete; DROP TRIGGER turns_fts_update; DROP TABLE turns_fts;");
  raw.close();

  const store = openStore(dir);
  const second = store.createConversation("gpt-4o", { system: "", stream: true });
  store.addTurn(second, { role: "user", text: "Bake bread" });
  const reply = store.addTurn(second, { role: "assistant", text: "Knead" });
  store.updateTurn({ id: reply, role: "assistant", text: "Knead the dough, then bake it." });

  expect(store.search("fresnel").map((c) => [c.id, c.match])).toEqual([[first, "A [Fresnel] lens focuses the lamp."]]);
  expect(store.search("lighth").map((c) => c.id)).toEqual([first]);
  expect(store.search("dough bake").map((c) => c.id)).toEqual([second]);
  expect(store.search("knead lamp")).toEqual([]);
  expect(store.search("").map((c) => c.id)).toEqual([second, first]);

  store.rename(first, "Lights at sea");
  expect(store.search("at sea").map((c) => c.id)).toEqual([first]);
  expect(store.conversations().find((c) => c.id === first)?.title).toBe("Lights at sea");

  store.deleteConversation(second);
  expect(store.load(second)).toBeUndefined();
  expect(store.search("dough")).toEqual([]);
  expect(store.conversations().map((c) => c.id)).toEqual([first]);
});
