/**
 * Every configured secret's value, masked by value (not by the name it travels under) wherever
 * parley writes text: logs, errors to clients, cassettes, `config show`, `parley upstreams`
 * (contract 25). Values are remembered as configurations are loaded, never forgotten: masking a
 * value that is no longer used costs nothing and leaks nothing.
 */

/** Shorter values are not masked: a two-letter password would mask every word it is part of. */
export const MIN_SECRET_LENGTH = 8;
export const MASK = "****";

const values = new Set<string>();
let pattern: RegExp | undefined;

export function rememberSecrets(list: Iterable<string | undefined>): void {
  for (const value of list) {
    if (value === undefined || value.length < MIN_SECRET_LENGTH) continue;
    // As a URL's query or path may carry it, too.
    for (const form of [value, encodeURIComponent(value)]) {
      if (values.has(form)) continue;
      values.add(form);
      pattern = undefined;
    }
  }
}

/** The text with every remembered secret replaced by `****`. */
export function maskSecrets(text: string): string {
  if (values.size === 0) return text;
  // Longest first: a secret that contains another is masked whole.
  pattern ??= new RegExp([...values].sort((a, b) => b.length - a.length).map(escape).join("|"), "g");
  return text.replace(pattern, MASK);
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
