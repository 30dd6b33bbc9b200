/** What a call is matched on (contract 16): upstream name and kind, method, path, and the body as canonical JSON. */
export interface Call {
  upstream: string;
  kind: string;
  method: string;
  path: string;
  /** The body as sent; `json` its parse, when it is JSON. */
  text: string;
  json: unknown;
  key: string;
}

export function callOf(upstream: string, kind: string, method: string, url: string, text: string): Call {
  const json = parse(text);
  const path = new URL(url).pathname;
  const body = json === undefined ? text : canonical(json);
  return { upstream, kind, method, path, text, json, key: `${upstream}\n${kind}\n${method}\n${path}\n${body}` };
}

function parse(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** JSON with every object's keys sorted: two bodies that differ only in key order are one. */
export function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

export interface Difference {
  /** Where, as a JSON path: `messages[2].content`. */
  path: string;
  sent: unknown;
  recorded: unknown;
}

/** Where two JSON values differ, in the order of `sent`; at most `limit` places. */
export function differences(sent: unknown, recorded: unknown, limit = 100, path = "", out: Difference[] = []): Difference[] {
  if (out.length >= limit) return out;
  if (Array.isArray(sent) && Array.isArray(recorded)) {
    for (let i = 0; i < Math.max(sent.length, recorded.length); i++) differences(sent[i], recorded[i], limit, `${path}[${i}]`, out);
    return out;
  }
  if (isObject(sent) && isObject(recorded)) {
    const keys = [...Object.keys(sent), ...Object.keys(recorded).filter((k) => !Object.hasOwn(sent, k))];
    for (const key of keys) differences(sent[key], recorded[key], limit, join(path, key), out);
    return out;
  }
  if (textOf(sent) !== textOf(recorded)) out.push({ path: path || "(the whole body)", sent, recorded });
  return out;
}

const textOf = (value: unknown) => (value === undefined ? undefined : canonical(value));

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === "object" && !Array.isArray(value);

const join = (path: string, key: string) => (/^[A-Za-z_$][\w$-]*$/.test(key) ? (path ? `${path}.${key}` : key) : `${path}[${JSON.stringify(key)}]`);
