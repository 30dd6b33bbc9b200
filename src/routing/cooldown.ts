/** Retryable failures in a row after which an upstream cools down. */
const STRIKES = 3;

/**
 * Contract 13: an upstream whose calls end in a retryable error three times in a row is skipped
 * for `seconds`; one success ends it. After the wait, one more failure cools it again at once.
 * Per process: each worker of a supervisor keeps its own.
 */
export function createCooldowns(seconds: number, now = () => Date.now()) {
  const strikes = new Map<string, number>();
  const until = new Map<string, number>();
  return {
    failed(name: string): void {
      const count = (strikes.get(name) ?? 0) + 1;
      strikes.set(name, count);
      if (count >= STRIKES && seconds > 0) until.set(name, now() + seconds * 1000);
    },
    succeeded(name: string): void {
      if (strikes.size === 0) return;
      strikes.delete(name);
      until.delete(name);
    },
    /** Forgets an upstream's failures (its settings changed: the old ones say nothing of the new). */
    forget(name: string): void {
      strikes.delete(name);
      until.delete(name);
    },
    /** When this process's cooldown of the upstream ends (Unix ms), if it is cooling. */
    until(name: string): number | undefined {
      const end = until.get(name);
      return end !== undefined && now() < end ? end : undefined;
    },
    cooling(name: string): boolean {
      if (until.size === 0) return false;
      const end = until.get(name);
      if (end === undefined) return false;
      if (now() < end) return true;
      until.delete(name);
      return false;
    },
  };
}

export type Cooldowns = ReturnType<typeof createCooldowns>;
