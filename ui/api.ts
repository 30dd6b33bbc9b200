/** Calls to the gateway that served the page, with the signed-in key; never anywhere else. */

const STORE = "parley.key";

export const session = {
  key: () => sessionStorage.getItem(STORE),
  set: (key: string) => sessionStorage.setItem(STORE, key),
  clear: () => sessionStorage.removeItem(STORE),
};

export type Answer<T> = { ok: true; data: T } | { ok: false; status: number; message: string };

export async function call<T>(path: string, init: RequestInit = {}, key = session.key()): Promise<Answer<T>> {
  const headers = new Headers(init.headers);
  if (key) headers.set("authorization", `Bearer ${key}`);
  if (init.body) headers.set("content-type", "application/json");
  let response: Response;
  try {
    response = await fetch(path, { ...init, headers, cache: "no-store" });
  } catch {
    return { ok: false, status: 0, message: "The gateway does not answer." };
  }
  const body = await response.json().catch(() => null);
  if (response.ok) return { ok: true, data: body as T };
  const message = body?.error?.message ?? (typeof body?.message === "string" ? body.message : `${response.status} ${response.statusText}`);
  // A refused field's rule is in `details` (a 422 says "Invalid value for 'rpm'." and, there, what it takes).
  const details = typeof body?.error?.details === "string" ? ` ${body.error.details}` : "";
  return { ok: false, status: response.status, message: message + details };
}

/** What the signed-in key may see: `admin` acts, `usage` reads. */
export type Role = "admin" | "usage";

/** Checks a key: /v1/usage answers any key with `usage` (admin keys have every scope); /admin/v1/keys answers only `admin`. */
export async function signIn(key: string): Promise<{ role: Role } | { error: string }> {
  const usage = await call("/v1/usage?since=1h", {}, key);
  if (!usage.ok && usage.status === 401) return { error: "The gateway does not know this key." };
  if (!usage.ok && usage.status !== 403) return { error: usage.message };
  const keys = await call("/admin/v1/keys", {}, key);
  // A gateway without the admin API yet (404) still lets a key with every scope in.
  if (keys.ok || (keys.status === 404 && usage.ok)) return { role: "admin" };
  if (usage.ok) return { role: "usage" };
  return { error: "This key has neither the admin nor the usage scope." };
}

/** Reads a server-sent event stream with the key in a header (EventSource cannot send one). */
export async function events(path: string, onEvent: (name: string, data: string) => void, signal: AbortSignal): Promise<Answer<null>> {
  let response: Response;
  try {
    response = await fetch(path, { headers: { authorization: `Bearer ${session.key()}` }, signal, cache: "no-store" });
  } catch (error) {
    return { ok: false, status: 0, message: signal.aborted ? "stopped" : "The gateway does not answer." };
  }
  if (!response.ok || !response.body) {
    const body = await response.json().catch(() => null);
    return { ok: false, status: response.status, message: body?.error?.message ?? `${response.status}` };
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        let name = "message";
        const data: string[] = [];
        for (const line of block.split("\n")) {
          if (line.startsWith("event:")) name = line.slice(6).trim();
          else if (line.startsWith("data:")) data.push(line.slice(5).trimStart());
        }
        if (data.length) onEvent(name, data.join("\n"));
      }
    }
  } catch {
    // Aborted by the page, or the gateway went away: the caller decides what to show.
  }
  return { ok: true, data: null };
}
