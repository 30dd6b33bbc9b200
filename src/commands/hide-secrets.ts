import { maskSecrets } from "../secrets.ts";
import type { Upstream } from "../providers/kind.ts";
import { KINDS } from "../providers/kinds.ts";

/**
 * Text about an upstream with its secrets masked: the values of its kind's secret keys, of its
 * headers, and a password in its URL (`https://user:secret@host`). For what the CLI prints,
 * including an upstream's own error message, which may quote what it was sent.
 */
export function hideSecrets(upstream: Upstream, text: string): string {
  const settings = upstream.settings as Record<string, unknown>;
  const values = [...KINDS[upstream.kind].secrets.map((key) => settings[camel(key)]), ...Object.values(upstream.headers)];
  let hidden = text;
  for (const value of values) if (typeof value === "string" && value.length >= 4) hidden = hidden.replaceAll(value, "****");
  const password = passwordOf(KINDS[upstream.kind].where(upstream.settings));
  return maskSecrets(password ? hidden.replaceAll(`:${password}@`, ":****@") : hidden);
}

const camel = (key: string) => key.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());

function passwordOf(where: string): string | undefined {
  if (!where.includes("@")) return undefined;
  try {
    // A URL, or a region then a URL (a Bedrock upstream with endpoint_url).
    return new URL(where.split(" ").at(-1)!).password || undefined;
  } catch {
    return undefined;
  }
}
