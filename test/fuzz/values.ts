/** Seeded randomness and the nasty values the fuzz puts everywhere. */

export interface Rng {
  next(): number;
  int(n: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function rng(seed: number): Rng {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return { next, int, pick: (items) => items[int(items.length)]!, chance: (p) => next() < p };
}

/** Keys that reach Object.prototype when looked up on a plain object. */
export const PROTO_KEYS = ["__proto__", "constructor", "toString", "prototype", "hasOwnProperty", "valueOf", "__defineGetter__", "isPrototypeOf", "then"] as const;

/** Unpaired halves of a surrogate pair: JSON.stringify writes them as `"\ud800"` escapes. */
export const LONE_SURROGATES = ["\ud800", "\udc00x", "\udfff", "x\ud83dy", "\udbff\udbff", "a\ud800b\udc00"] as const;

/** Bytes that are no UTF-8: a surrogate encoded (CESU), 0xFF, an overlong NUL, a sequence cut short. */
export const INVALID_UTF8 = [[0xed, 0xa0, 0x80], [0xed, 0xb0, 0x80], [0xff], [0xfe, 0xff], [0xc0, 0x80], [0xe2, 0x82], [0xf4, 0x90, 0x80, 0x80]] as const;

export const ODD_STRINGS = [
  "", " ", "\u0000", "a\u0000b", ...LONE_SURROGATES, "\u202eevil\u202c", "مرحبا بالعالم", "👨‍👩‍👧‍👦🏳️‍🌈", "\ufeff", "\r\n\r\n",
  "%00", "%s%n%x", "${jndi:ldap://x}", "<script>alert(1)</script>", "' OR 1=1 --", "../../etc/passwd", "\u0085\u2028\u2029", "\u001b[31mred",
  "null", "undefined", "NaN", "-1", "1e309", "true", "[]", "{}", "\\", '"', "\t", "Ω≈ç√∫", "ｆｕｌｌｗｉｄｔｈ", "\u0301\u0301\u0301",
] as const;

/** A nested value `depth` levels deep, built without recursion. */
export function deep(depth: number, kind: "array" | "object" = "array"): unknown {
  let value: unknown = "bottom";
  for (let i = 0; i < depth; i++) value = kind === "array" ? [value] : { a: value };
  return value;
}

/** The same as JSON text, for bodies the fuzz sends raw. */
export const deepText = (depth: number, kind: "array" | "object" = "array") =>
  kind === "array" ? "[".repeat(depth) + "]".repeat(depth) : '{"a":'.repeat(depth) + "1" + "}".repeat(depth);

/** Puts `key: value` on an object as an own, enumerable property, even for `__proto__`. */
export function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** An object whose keys are prototype names. */
export function protoObject(r: Rng, value: () => unknown): Record<string, unknown> {
  const object: Record<string, unknown> = {};
  for (let i = 0, n = 1 + r.int(3); i < n; i++) setOwn(object, r.pick(PROTO_KEYS), value());
  return object;
}

export function oddString(r: Rng): string {
  switch (r.int(4)) {
    case 0:
      return r.pick(PROTO_KEYS);
    case 1:
      return r.pick(ODD_STRINGS) + r.pick(ODD_STRINGS);
    default:
      return r.pick(ODD_STRINGS);
  }
}

/** Any value of a wrong type, an odd string, a prototype key, or something huge or deep. */
export function nasty(r: Rng, level = 0): unknown {
  const roll = r.int(100);
  if (roll < 22) return oddString(r);
  if (roll < 34) return r.pick([0, -1, -0, 1.5, 1e308, -1e308, 2 ** 53 + 1, 4294967296, 1e-320]);
  if (roll < 40) return r.pick([true, false, null]);
  if (roll < 52 && level < 3) return Array.from({ length: r.int(4) }, () => nasty(r, level + 1));
  if (roll < 64 && level < 3) return protoObject(r, () => nasty(r, level + 1));
  if (roll < 70) return deep(r.pick([100, 1000, 10_000]), r.chance(0.5) ? "array" : "object");
  if (roll < 73) return huge(r);
  if (roll < 80) return {};
  if (roll < 86) return [];
  return "x".repeat(r.int(40));
}

/** Large, but bounded so that a few thousand cases finish in minutes: up to about 2 MB. */
export function huge(r: Rng): unknown {
  switch (r.int(4)) {
    case 0:
      return "A".repeat(1_000_000 + r.int(1_000_000));
    case 1:
      return "😀".repeat(200_000);
    case 2:
      return Array.from({ length: 100_000 }, (_, i) => i);
    default:
      return Object.fromEntries(Array.from({ length: 30_000 }, (_, i) => [`k${i}`, i]));
  }
}

/** Changes one place in `body`: a field set to a nasty value, a key renamed to a prototype name, a field dropped. */
export function mutate(r: Rng, body: Record<string, unknown>): string {
  const { node, path } = somewhere(r, body);
  const keys = Object.keys(node);
  const roll = r.int(12);
  if (roll >= 10) return `lone surrogates in every string: ${taint(r, body, () => r.pick(LONE_SURROGATES), roll === 11)}`;
  if (roll < 2 && keys.length) {
    const key = r.pick(keys);
    delete (node as Record<string, unknown>)[key];
    return `drop ${path}.${key}`;
  }
  if (roll < 4 && keys.length && !Array.isArray(node)) {
    const key = r.pick(keys);
    const proto = r.pick(PROTO_KEYS);
    const value = (node as Record<string, unknown>)[key];
    delete (node as Record<string, unknown>)[key];
    setOwn(node as Record<string, unknown>, proto, value);
    return `rename ${path}.${key} -> ${proto}`;
  }
  const key = keys.length && r.chance(0.7) ? r.pick(keys) : Array.isArray(node) ? String(node.length) : r.chance(0.5) ? r.pick(PROTO_KEYS) : oddString(r);
  const value = nasty(r);
  setOwn(node as Record<string, unknown>, key, value);
  return `set ${path}.${key} = ${describe(value)}`;
}

/**
 * Adds `extra()` to every string in `body` (values, and keys when `keys`), in place; returns how
 * many. Bounded, so a huge array is not walked whole.
 */
export function taint(r: Rng, body: Record<string, unknown>, extra: () => string, keys = false): number {
  let count = 0;
  const stack: object[] = [body];
  while (stack.length && count < 5000) {
    const node = stack.pop() as Record<string, unknown>;
    for (const key of Object.keys(node)) {
      const value = node[key];
      if (typeof value === "string") (node[key] = r.chance(0.5) ? value + extra() : extra() + value), count++;
      else if (typeof value === "object" && value !== null) stack.push(value);
      if (keys && !Array.isArray(node) && r.chance(0.3)) {
        delete node[key];
        setOwn(node, key + extra(), value);
        count++;
      }
    }
  }
  return count;
}

/** The same character in every string, as JSON text: raw bytes (no UTF-8) go in its place afterwards. */
const MARK = "\u{10fffe}";
const MARK_BYTES = new TextEncoder().encode(MARK);

/** `body` as JSON bytes with invalid UTF-8 (one kind, chosen once) inside every string value. */
export function rawInvalidUtf8(r: Rng, body: Record<string, unknown>): { bytes: Uint8Array; label: string } {
  const bad = r.pick(INVALID_UTF8);
  const n = taint(r, body, () => MARK);
  const text = new TextEncoder().encode(JSON.stringify(body));
  const out: number[] = [];
  for (let i = 0; i < text.length; i++) {
    if (text[i] === MARK_BYTES[0] && MARK_BYTES.every((b, j) => text[i + j] === b)) {
      out.push(...bad);
      i += MARK_BYTES.length - 1;
    } else out.push(text[i]!);
  }
  return { bytes: new Uint8Array(out), label: `raw bytes ${bad.map((b) => b.toString(16)).join(" ")} in ${n} strings` };
}

/** A random object or array inside `body` (or body itself), and how to get there. */
function somewhere(r: Rng, body: Record<string, unknown>): { node: object; path: string } {
  let node: object = body;
  let path = "body";
  while (r.chance(0.6)) {
    const children = Object.entries(node).filter(([, v]) => typeof v === "object" && v !== null);
    if (children.length === 0) break;
    const [key, child] = r.pick(children);
    node = child as object;
    path += `.${key}`;
  }
  return { node, path };
}

/** A short description of a value for failure reports. */
export function describe(value: unknown): string {
  if (typeof value === "string") return value.length > 40 ? `string(${value.length})` : JSON.stringify(value);
  if (Array.isArray(value)) return `array(${value.length})`;
  if (value && typeof value === "object") return `object{${Object.keys(value).slice(0, 3).join(",")}${Object.keys(value).length > 3 ? ",…" : ""}}`;
  return String(value);
}
