import { useRef, useState } from "react";
import type { Client, Message, Settings } from "./client.ts";
import type { Turn } from "./transcript.ts";

/** The conversation: finished turns, the reply streaming in, and sending or cancelling one. */
export function useChat(client: Client) {
  const [turns, setTurns] = useState<Turn[]>([]);
  const [live, setLive] = useState<Turn | undefined>();
  const [busySince, setBusySince] = useState<number | undefined>();
  const history = useRef<Turn[]>([]);
  const controller = useRef<AbortController | undefined>(undefined);
  const nextId = useRef(1);

  const push = (...added: Omit<Turn, "id">[]) => {
    history.current = [...history.current, ...added.map((t) => ({ ...t, id: nextId.current++ }))];
    setTurns(history.current);
  };

  async function send(text: string, model: string, settings: Settings) {
    const messages: Message[] = [
      ...history.current.flatMap((t) => (t.role === "user" || t.role === "assistant" ? [{ role: t.role, content: t.text }] : [])),
      { role: "user", content: text },
    ];
    push({ role: "user", text });
    const abort = new AbortController();
    controller.current = abort;
    const started = performance.now();
    setBusySince(Date.now());
    const id = nextId.current++;
    let reply = "";
    let usage = "";
    setLive({ id, role: "assistant", text: "" });
    const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)}s`;
    try {
      for await (const piece of client.chat(model, messages, settings, abort.signal)) {
        if (piece.type === "usage") usage = ` · ${piece.input} → ${piece.output} tokens`;
        else setLive({ id, role: "assistant", text: (reply += piece.text) });
      }
      push({ role: "assistant", text: reply, meta: `${model} · ${seconds()}${usage}` });
    } catch (error) {
      if (abort.signal.aborted) {
        push({ role: "assistant", text: reply, meta: `cancelled after ${seconds()}` });
      } else {
        const message = error instanceof Error ? error.message : String(error);
        const status = (error as { status?: number }).status;
        const type = (error as { type?: string }).type;
        const label = status ? `${status} ${type}` : (type ?? "error");
        push(...(reply ? [{ role: "assistant" as const, text: reply, meta: "incomplete" }] : []), { role: "error", text: `${label}: ${message}` });
      }
    } finally {
      setLive(undefined);
      setBusySince(undefined);
      controller.current = undefined;
    }
  }

  return {
    turns,
    live,
    busySince,
    send,
    cancel: () => controller.current?.abort(),
    info: (text: string) => push({ role: "info", text }),
    error: (text: string) => push({ role: "error", text }),
    clear() {
      history.current = [];
      setTurns([]);
    },
  };
}
