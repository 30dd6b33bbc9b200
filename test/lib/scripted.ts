/** What every fake upstream shares: scripts for the next requests, a record of what it received. */
export function scripted<Script, Received>() {
  const received: Received[] = [];
  const queue: Script[] = [];
  const state = { cancelled: 0 };
  return {
    take: () => queue.shift(),
    controls: {
      received,
      state,
      /** Scripts for the next requests, in order; without one a request gets the default reply. */
      next(...scripts: Script[]) {
        queue.push(...scripts);
      },
      last: () => received.at(-1)!,
      reset() {
        received.length = 0;
        queue.length = 0;
        state.cancelled = 0;
      },
    },
  };
}

/** An upstream that falls silent in the middle of its reply (a stream's pull that never ends), until the caller hangs up. */
export function stall(request: Request): Promise<void> {
  return new Promise((resolve) => request.signal.addEventListener("abort", () => resolve()));
}
