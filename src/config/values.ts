/** How a setting's value is checked and read: the rules the settings table uses, and the error a bad value is. */

export class ConfigError extends Error {}

/** A value's rule: what is wrong with a value (the allowed values), or undefined when it is fine. */
export type Check = ((value: string) => string | undefined) & { allowed: string };

export const BOOLEANS: Record<string, boolean> = { true: true, "1": true, yes: true, on: true, false: false, "0": false, no: false, off: false };

export const rule = (allowed: string, ok: (value: string) => boolean): Check =>
  Object.assign((v: string) => (ok(v) ? undefined : allowed), { allowed });
export const int = (min: number, max = Number.MAX_SAFE_INTEGER) =>
  rule(max === Number.MAX_SAFE_INTEGER ? `an integer, ${min} or more` : `an integer from ${min} to ${max}`, (v) => /^\d+$/.test(v) && Number(v) >= min && Number(v) <= max);
export const oneOf = (values: readonly string[]) => rule(`one of ${values.join(", ")}`, (v) => values.includes(v.toLowerCase()));
export const url = rule("an http:// or https:// URL", (v) => /^https?:\/\/[^\s/]+/.test(v) && URL.canParse(v));
export const noSpace = rule("a non-empty value without spaces", (v) => v.length > 0 && !/\s/.test(v));
export const region = rule("an AWS region such as us-east-1", (v) => /^[a-z]{2}(-[a-z]+)+-\d+$/.test(v));
export const boolean = oneOf(Object.keys(BOOLEANS));
export const pairs = (sep: string, valid: (left: string, right: string) => boolean, shape: string) =>
  rule(shape, (v) =>
    splitList(v).every((item) => {
      const at = item.indexOf(sep);
      return at > 0 && valid(item.slice(0, at), item.slice(at + 1));
    }));

export function splitList(value: string): string[] {
  return value.split(",").map((s) => s.trim()).filter(Boolean);
}

export function splitOnce(item: string, sep: string): [string, string] {
  const at = item.indexOf(sep);
  return [item.slice(0, at).trim(), item.slice(at + 1).trim()];
}

/** Enough of a secret to tell two apart, never enough to use. */
export function mask(value: string): string {
  return value.length >= 16 ? `****${value.slice(-4)}` : "****";
}
