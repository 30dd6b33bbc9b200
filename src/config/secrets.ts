import { rememberSecrets } from "../secrets.ts";
import type { Upstream } from "../providers/kind.ts";
import { KINDS } from "../providers/kinds.ts";
import type { KeyEntry } from "./keys.ts";

/** Header and query names whose values are plain words, not secrets, however long (documented in docs/security.md). */
export const PLAIN = new Set(["api-version", "anthropic-version", "user-agent", "anthropic-beta", "content-type", "accept"]);
/** An upstream's header or query value shorter than this is taken for a plain word. */
const MIN_VALUE = 8;

/**
 * Remembers, for masking by value, every secret a configuration holds: the values of secret
 * settings, every client key, and of every upstream its kind's secret keys, a password in any of its
 * URLs, and its header and query values of 8 characters or more (contract 25).
 */
export function rememberConfigured(entries: { key: string; value: string | undefined; secret: boolean }[], keys: KeyEntry[], upstreams: Upstream[]): void {
  const found: (string | undefined)[] = keys.map((k) => k.key);
  for (const { key, value, secret } of entries) {
    if (value === undefined) continue;
    // A URL's secret is its password (REDIS_URL): its host and port stay readable in logs.
    if (value.includes("://")) found.push(passwordIn(value));
    else if (secret) found.push(value);
    // `<access key id>:<secret>`: the secret alone is masked too.
    if (key === "INGRESS_AWS_CREDENTIALS") found.push(value.slice(value.indexOf(":") + 1));
  }
  for (const upstream of upstreams) found.push(...upstreamSecrets(upstream));
  rememberSecrets(found);
}

function upstreamSecrets(upstream: Upstream): (string | undefined)[] {
  const settings = (upstream.settings ?? {}) as Record<string, unknown>;
  const out: (string | undefined)[] = [];
  for (const key of KINDS[upstream.kind]?.secrets ?? []) out.push(stringOr(settings[camel(key)]));
  for (const value of Object.values(settings)) if (typeof value === "string" && value.includes("://")) out.push(passwordIn(value));
  const query = settings.query;
  const pairs = [...Object.entries(upstream.headers ?? {}), ...(query && typeof query === "object" ? Object.entries(query as Record<string, unknown>) : [])];
  for (const [name, value] of pairs) if (typeof value === "string" && value.length >= MIN_VALUE && !PLAIN.has(name.toLowerCase())) out.push(value);
  return out;
}

/** The password of `scheme://user:password@host…`; found without parsing when the URL does not parse (it may still hold one). */
export function passwordIn(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    if (parsed.password) return decodeURIComponent(parsed.password);
  } catch {}
  // Up to the last `@`: a password may hold `@` and `/` that no parser accepts.
  const userinfo = /^[a-z][\w+.-]*:\/\/(\S*)@/i.exec(url)?.[1];
  const colon = userinfo?.indexOf(":") ?? -1;
  return colon === -1 ? undefined : userinfo!.slice(colon + 1);
}

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
const stringOr = (value: unknown) => (typeof value === "string" ? value : undefined);
