import { Database } from "bun:sqlite";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Settings } from "./client.ts";
import type { Turn } from "./transcript.ts";

export interface ConversationSummary {
  id: number;
  title: string;
  model: string;
  updatedAt: number;
  turns: number;
  /** For a search: the words found, in their context. */
  match?: string;
}

export interface StoredConversation {
  id: number;
  model: string;
  settings?: Settings;
  usage: { input: number; output: number };
  turns: Turn[];
}

/** What of a turn is kept besides its role and text. */
type TurnData = Omit<Turn, "id" | "role" | "text">;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS conversations (
  id INTEGER PRIMARY KEY, title TEXT NOT NULL DEFAULT '', model TEXT NOT NULL DEFAULT '', settings TEXT,
  input_tokens INTEGER NOT NULL DEFAULT 0, output_tokens INTEGER NOT NULL DEFAULT 0,
  created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS turns (
  id INTEGER PRIMARY KEY, conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  role TEXT NOT NULL, text TEXT NOT NULL, data TEXT NOT NULL DEFAULT '{}', created_at INTEGER NOT NULL);
CREATE INDEX IF NOT EXISTS turns_by_conversation ON turns(conversation_id, id);
CREATE TABLE IF NOT EXISTS prompts (id INTEGER PRIMARY KEY, text TEXT NOT NULL, at INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS preferences (key TEXT PRIMARY KEY, value TEXT NOT NULL);
`;

/** Full-text search over every turn's text; made (and filled from the turns there are) when a database lacks it. */
const SEARCH = `
CREATE VIRTUAL TABLE turns_fts USING fts5(text, content='turns', content_rowid='id');
CREATE TRIGGER turns_fts_insert AFTER INSERT ON turns BEGIN INSERT INTO turns_fts(rowid, text) VALUES (new.id, new.text); END;
CREATE TRIGGER turns_fts_delete AFTER DELETE ON turns BEGIN INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, old.text); END;
CREATE TRIGGER turns_fts_update AFTER UPDATE OF text ON turns BEGIN
  INSERT INTO turns_fts(turns_fts, rowid, text) VALUES ('delete', old.id, old.text); INSERT INTO turns_fts(rowid, text) VALUES (new.id, new.text); END;
INSERT INTO turns_fts(turns_fts) VALUES ('rebuild');
`;

const SUMMARY = `SELECT c.id, c.title, c.model, c.updated_at AS updatedAt, (SELECT COUNT(*) FROM turns t WHERE t.conversation_id = c.id AND t.role = 'user') AS turns`;

/**
 * The chat's own database, `chat.sqlite` under PARLEY_DATA_DIR (apart from the server's): every
 * conversation turn by turn as it happens, the prompts typed (for Up-arrow history) and preferences.
 */
export function openStore(dataDir: string) {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, "chat.sqlite"), { create: true, strict: true });
  db.run("PRAGMA journal_mode = WAL");
  db.run("PRAGMA busy_timeout = 5000");
  db.run("PRAGMA foreign_keys = ON");
  db.exec(SCHEMA);
  if (!db.query("SELECT 1 FROM sqlite_master WHERE name = 'turns_fts'").get()) db.transaction(() => db.exec(SEARCH))();
  const now = () => Date.now();

  const data = (turn: Omit<Turn, "id">): string => {
    const { role: _role, text: _text, ...rest } = turn as Turn;
    const { id: _id, ...kept } = rest as TurnData & { id?: number };
    return JSON.stringify(kept);
  };

  return {
    createConversation(model: string, settings: Settings): number {
      const at = now();
      return Number(db.query("INSERT INTO conversations (model, settings, created_at, updated_at) VALUES (?, ?, ?, ?)").run(model, JSON.stringify(settings), at, at).lastInsertRowid);
    },

    updateConversation(id: number, change: { model?: string; settings?: Settings; usage?: { input: number; output: number } }) {
      if (change.model !== undefined) db.query("UPDATE conversations SET model = ? WHERE id = ?").run(change.model, id);
      if (change.settings) db.query("UPDATE conversations SET settings = ? WHERE id = ?").run(JSON.stringify(change.settings), id);
      if (change.usage) db.query("UPDATE conversations SET input_tokens = input_tokens + ?, output_tokens = output_tokens + ? WHERE id = ?").run(change.usage.input, change.usage.output, id);
      db.query("UPDATE conversations SET updated_at = ? WHERE id = ?").run(now(), id);
    },

    addTurn(conversationId: number, turn: Omit<Turn, "id">): number {
      const at = now();
      const id = Number(db.query("INSERT INTO turns (conversation_id, role, text, data, created_at) VALUES (?, ?, ?, ?, ?)").run(conversationId, turn.role, turn.text, data(turn), at).lastInsertRowid);
      if (turn.role === "user") db.query("UPDATE conversations SET title = ? WHERE id = ? AND title = ''").run(turn.text.replace(/\s+/g, " ").trim().slice(0, 80), conversationId);
      db.query("UPDATE conversations SET updated_at = ? WHERE id = ?").run(at, conversationId);
      return id;
    },

    updateTurn(turn: Turn) {
      db.query("UPDATE turns SET text = ?, data = ? WHERE id = ?").run(turn.text, data(turn), turn.id);
    },

    deleteTurns(ids: number[]) {
      const remove = db.query("DELETE FROM turns WHERE id = ?");
      db.transaction(() => ids.forEach((id) => remove.run(id)))();
    },

    conversations(limit = 200): ConversationSummary[] {
      return db.query(`${SUMMARY}
        FROM conversations c WHERE EXISTS (SELECT 1 FROM turns t WHERE t.conversation_id = c.id) ORDER BY c.updated_at DESC, c.id DESC LIMIT ?`).all(limit) as ConversationSummary[];
    },

    /** Conversations whose turns contain every word (a word's start will do) or whose title contains the text, newest first. */
    search(text: string, limit = 200): ConversationSummary[] {
      const words = text.match(/[\p{L}\p{N}_]+/gu) ?? [];
      if (!words.length) return this.conversations(limit);
      const query = words.map((w) => `"${w}"*`).join(" ");
      return db.query(`${SUMMARY}, m.match FROM conversations c JOIN (
          SELECT conversation_id, MIN(match) AS match FROM (
            SELECT t.conversation_id, snippet(turns_fts, 0, '[', ']', '…', 8) AS match FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid WHERE turns_fts MATCH ?
            UNION ALL SELECT id, NULL FROM conversations WHERE instr(lower(title), lower(?)) > 0)
          GROUP BY conversation_id) m ON m.conversation_id = c.id
        WHERE EXISTS (SELECT 1 FROM turns t WHERE t.conversation_id = c.id) ORDER BY c.updated_at DESC, c.id DESC LIMIT ?`).all(query, text.trim(), limit) as ConversationSummary[];
    },

    rename(id: number, title: string) {
      db.query("UPDATE conversations SET title = ? WHERE id = ?").run(title.replace(/\s+/g, " ").trim().slice(0, 80), id);
    },

    /** The conversation and all its turns, for good. */
    deleteConversation(id: number) {
      db.query("DELETE FROM conversations WHERE id = ?").run(id);
    },

    latestId(): number | undefined {
      return this.conversations(1)[0]?.id;
    },

    load(id: number): StoredConversation | undefined {
      const row = db.query("SELECT id, model, settings, input_tokens, output_tokens FROM conversations WHERE id = ?").get(id) as
        | { id: number; model: string; settings: string | null; input_tokens: number; output_tokens: number }
        | null;
      if (!row) return undefined;
      const turns = (db.query("SELECT id, role, text, data FROM turns WHERE conversation_id = ? ORDER BY id").all(id) as { id: number; role: Turn["role"]; text: string; data: string }[])
        .map(({ id, role, text, data }) => ({ ...(parseJson(data) as TurnData), id, role, text }));
      return { id: row.id, model: row.model, settings: row.settings ? (parseJson(row.settings) as Settings) : undefined, usage: { input: row.input_tokens, output: row.output_tokens }, turns };
    },

    addPrompt(text: string) {
      db.query("INSERT INTO prompts (text, at) VALUES (?, ?)").run(text, now());
    },

    /** The last `limit` prompts, oldest first, without repeats in a row. */
    prompts(limit = 1000): string[] {
      const rows = db.query("SELECT text FROM prompts ORDER BY id DESC LIMIT ?").all(limit) as { text: string }[];
      return rows.reverse().map((r) => r.text).filter((text, i, all) => text !== all[i - 1]);
    },

    preference<T>(key: string): T | undefined {
      const row = db.query("SELECT value FROM preferences WHERE key = ?").get(key) as { value: string } | null;
      return row ? (parseJson(row.value) as T | undefined) : undefined;
    },

    setPreference(key: string, value: unknown) {
      db.query("INSERT INTO preferences (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(key, JSON.stringify(value));
    },

    close: () => db.close(),
  };
}

export type ChatStore = ReturnType<typeof openStore>;

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
