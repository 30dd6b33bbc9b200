/** A glob as parley.toml and MODEL_ROUTES write them: `*` matches any characters (none included), the rest itself. */
export function glob(pattern: string): RegExp {
  const source = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${source}$`, "s");
}

/**
 * A glob as a test. Most are an exact value, a prefix (`claude-haiku-*`) or a suffix: those are
 * compared as strings, a few times cheaper than a RegExp, since routes are tried on every request.
 */
export function matcher(pattern: string): (value: string) => boolean {
  const star = pattern.indexOf("*");
  if (star === -1) return (value) => value === pattern;
  if (star === pattern.length - 1) {
    const prefix = pattern.slice(0, -1);
    return (value) => value.startsWith(prefix);
  }
  if (star === 0 && !pattern.includes("*", 1)) {
    const suffix = pattern.slice(1);
    return (value) => value.endsWith(suffix);
  }
  const regex = glob(pattern);
  return (value) => regex.test(value);
}
