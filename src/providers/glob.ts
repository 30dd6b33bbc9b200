/** A glob as parley.toml writes them: `*` matches anything (nothing included), the rest itself. */
export function glob(pattern: string): RegExp {
  const source = pattern.split("*").map((part) => part.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*");
  return new RegExp(`^${source}$`);
}
