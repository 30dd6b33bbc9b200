import { useEffect } from "react";
import type { Attachment } from "./types.ts";
import { useLatestState } from "./use-latest.ts";

export interface Outgoing {
  text: string;
  files: Attachment[];
}

/**
 * Messages sent while a reply streams wait here, in order, and go one per turn as each turn ends;
 * the last can be taken back to edit or drop.
 */
export function useOutbox(busy: boolean, isBusy: () => boolean, send: (message: Outgoing) => void) {
  const [queue, setQueue, current] = useLatestState<Outgoing[]>([]);
  useEffect(() => {
    if (busy || isBusy() || current().length === 0) return;
    const [next, ...rest] = current();
    setQueue(rest);
    send(next!);
  }, [busy, queue]);
  return {
    queue,
    add: (message: Outgoing) => setQueue((q) => [...q, message]),
    takeLast(): Outgoing | undefined {
      const last = current().at(-1);
      if (last) setQueue((q) => q.slice(0, -1));
      return last;
    },
  };
}
