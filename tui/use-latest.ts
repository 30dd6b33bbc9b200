import { useCallback, useRef, useState } from "react";

/**
 * State whose latest value can be read at once. Keys typed quickly reach the input handler
 * several times before React re-renders, so handlers read `get()` rather than the rendered value.
 */
export function useLatestState<T>(initial: T): [T, (next: T | ((previous: T) => T)) => void, () => T] {
  const [value, setValue] = useState(initial);
  const latest = useRef(value);
  const set = useCallback((next: T | ((previous: T) => T)) => {
    latest.current = typeof next === "function" ? (next as (previous: T) => T)(latest.current) : next;
    setValue(latest.current);
  }, []);
  return [value, set, useCallback(() => latest.current, [])];
}
