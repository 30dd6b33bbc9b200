import { useMemo, useRef, useState } from "react";
import type { Client, Message, Settings } from "./client.ts";
import type { ChatStore, StoredConversation } from "./store.ts";
import { contextOf, type Turn } from "./transcript.ts";
import type { Attachment } from "./types.ts";

type NewTurn = Omit<Turn, "id">;

/**
 * The conversation: finished turns, the reply streaming in, sending or cancelling one. Every turn
 * of an exchange is written to the store as it happens; notes (info) are not.
 */
export function useChat(client: Client, store: ChatStore) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [live, setLive] = useState<Turn | undefined>();
  const [busySince, setBusySince] = useState<number | undefined>();
  const [waiting, setWaiting] = useState<Waiting | undefined>();
  const [usage, setUsage] = useState({ input: 0, output: 0 });
  const [cost, setCost] = useState<number | undefined>(undefined);
  // Conversation numbers are this store's own: the installation id keeps two chats' tags apart on one server.
  const costTag = useMemo(() => {
    let installation = store.preference<string>("installation");
    if (!installation) store.setPreference("installation", (installation = crypto.randomUUID().slice(0, 8)));
    return (conversationId: number) => `parley-chat-${installation}-${conversationId}`;
  }, [store]);
  const [conversationId, setConversationId] = useState<number | undefined>();
  const history = useRef<Turn[]>([]);
  const conversation = useRef<number | undefined>(undefined);
  const controller = useRef<AbortController | undefined>(undefined);
  const transientId = useRef(-1);

  const show = (next: Turn[]) => {
    history.current = next;
    setTurns(next);
  };
  const push = (...added: NewTurn[]) =>
    show([...history.current, ...added.map((t) => ({ ...t, id: conversation.current && t.role !== "info" ? store.addTurn(conversation.current, t) : transientId.current-- }))]);
  const update = (turn: Turn) => {
    if (turn.id > 0) store.updateTurn(turn);
    show(history.current.map((t) => (t.id === turn.id ? turn : t)));
  };
  const open = (id: number | undefined) => {
    conversation.current = id;
    setConversationId(id);
  };

  async function send(text: string, model: string, settings: Settings, files: Attachment[] = []) {
    if (!conversation.current) open(store.createConversation(model, settings));
    const messages: Message[] = [...contextOf(history.current), { role: "user", content: text }];
    push({ role: "user", text, ...(files.length ? { files } : {}) });
    const question = history.current.at(-1)!;
    const abort = new AbortController();
    controller.current = abort;
    const started = performance.now();
    setBusySince(Date.now());
    setWaiting({ kind: "first-token" });
    let reply = "";
    let truncated = false;
    let used: { input: number; output: number; cached: number } | undefined;
    const calls: { name: string; arguments: string }[] = [];
    const current = (): NewTurn => ({ role: "assistant", text: reply, ...(calls.length ? { toolCalls: calls.map((c) => ({ ...c })) } : {}), ...(truncated ? { truncated } : {}) });
    setLive({ id: 0, ...current() });
    const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;
    // The reply is written as it streams (at most once a second), so a closed terminal loses little.
    const conversationId = conversation.current!;
    let savedId: number | undefined;
    let savedAt = 0;
    const keep = () => {
      if (performance.now() - savedAt < 1000) return;
      savedAt = performance.now();
      const partial = { ...current(), meta: "interrupted" };
      if (savedId === undefined) savedId = store.addTurn(conversationId, partial);
      else store.updateTurn({ id: savedId, ...partial });
    };
    const settle = (turn: NewTurn) => {
      if (savedId === undefined) return push(turn);
      const done = { ...turn, id: savedId };
      store.updateTurn(done);
      show([...history.current, done]);
    };
    try {
      for await (const piece of client.chat(model, messages, settings, abort.signal, files.map((f) => f.id), costTag(conversationId))) {
        if (piece.type === "retry") {
          setWaiting({ kind: "retry", ...piece, since: Date.now() });
          continue;
        }
        setWaiting(undefined);
        if (piece.type === "usage") used = { input: piece.input, output: piece.output, cached: piece.cached };
        else if (piece.type === "finish") truncated = piece.reason === "length";
        else if (piece.type === "text") reply += piece.text;
        else {
          const call = (calls[piece.index] ??= { name: "", arguments: "" });
          if (piece.name) call.name = piece.name;
          call.arguments += piece.arguments;
        }
        setLive({ id: 0, ...current() });
        if (reply || calls.length) keep();
      }
      if (used) {
        const spent = used;
        setUsage((u) => ({ input: u.input + spent.input, output: u.output + spent.output }));
        store.updateConversation(conversation.current!, { usage: spent });
      }
      void client.cost(costTag(conversationId)).then((usd) => conversation.current === conversationId && setCost(usd));
      settle({ ...current(), meta: `${model} · ${seconds()}${used ? ` · ${used.input} → ${used.output} tokens${used.cached ? ` (${used.cached} cached)` : ""}` : ""}` });
    } catch (error) {
      if (abort.signal.aborted) {
        if (reply || calls.length) settle({ ...current(), meta: `cancelled after ${seconds()}` });
        else {
          update({ ...question, excluded: true });
          push({ role: "info", text: `cancelled after ${seconds()}` });
        }
      } else {
        update({ ...question, excluded: true });
        if (reply || calls.length) settle({ ...current(), excluded: true, meta: "incomplete" });
        else if (savedId !== undefined) store.deleteTurns([savedId]);
        push({ role: "error", text: describe(error) });
      }
    } finally {
      setLive(undefined);
      setBusySince(undefined);
      setWaiting(undefined);
      controller.current = undefined;
    }
  }

  /** Takes the last prompt and everything after it out of the conversation, and gives it back. */
  function takeLast(): { text: string; files: Attachment[] } | undefined {
    const index = history.current.findLastIndex((t) => t.role === "user");
    const last = history.current[index];
    if (!last) return undefined;
    store.deleteTurns(history.current.slice(index).filter((t) => t.id > 0).map((t) => t.id));
    show(history.current.slice(0, index));
    return { text: last.text, files: last.files ?? [] };
  }

  return {
    turns,
    live,
    busySince,
    /** What a busy chat waits for before the reply's first piece. */
    waiting,
    usage,
    /** What the server priced this conversation at so far (undefined: unknown, or no price for the model). */
    cost,
    conversationId,
    send,
    takeLast,
    cancel: () => controller.current?.abort(),
    /** Whether a reply is coming now (before the next render shows it). */
    busyNow: () => controller.current !== undefined,
    info: (text: string) => push({ role: "info", text }),
    error: (text: string) => show([...history.current, { id: transientId.current--, role: "error", text }]),
    /** Keeps the conversation's model and settings with it, once it exists. */
    remember(change: { model?: string; settings?: Settings }) {
      if (conversation.current) store.updateConversation(conversation.current, change);
    },
    load(stored: StoredConversation) {
      open(stored.id);
      show(stored.turns);
      setUsage(stored.usage);
      setCost(undefined);
      void client.cost(costTag(stored.id)).then((usd) => conversation.current === stored.id && setCost(usd));
    },
    /** Starts a conversation from given messages (a /load'ed file); it is saved at once. */
    adopt(messages: Message[], model: string, settings: Settings) {
      open(store.createConversation(model, settings));
      show([]);
      setUsage({ input: 0, output: 0 });
      setCost(undefined);
      push(...messages.map((m): NewTurn => ({ role: m.role === "assistant" ? "assistant" : "user", text: m.content })));
    },
    reset() {
      open(undefined);
      show([]);
      setUsage({ input: 0, output: 0 });
      setCost(undefined);
    },
  };
}

export type Waiting =
  | { kind: "first-token" }
  | { kind: "retry"; attempt: number; of: number; waitMs: number; status: number; retryAfter?: number; since: number };

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const { status, type, retryAfter } = error as { status?: number; type?: string; retryAfter?: number };
  const label = status ? `${status} ${type}` : (type ?? "error");
  return `${label}: ${message}${retryAfter !== undefined ? ` · retry after ${retryAfter}s` : ""}`;
}
