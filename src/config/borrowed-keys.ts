/** Where a value came from (config.ts's Source), and a setting as loaded. */
type Source = "flag" | "env" | ".env" | "config file" | "default";
interface Entry {
  key: string;
  value: string | undefined;
  source: Source;
}

/** Settings that say where a call goes, and the keys sent there. */
const SENDS: [url: string, keys: string[]][] = [
  ["ALPHA_BASE_URL", ["ALPHA_API_KEY"]],
  ["BETA_ENDPOINT_URL", ["BETA_API_KEY", "BETA_ACCESS_KEY_ID", "BETA_SECRET_ACCESS_KEY", "BETA_SESSION_TOKEN"]],
  ["BETA_CONTROL_ENDPOINT_URL", ["BETA_API_KEY", "BETA_ACCESS_KEY_ID", "BETA_SECRET_ACCESS_KEY", "BETA_SESSION_TOKEN"]],
  ["OBJSTORE_ENDPOINT_URL", ["OBJSTORE_ACCESS_KEY_ID", "OBJSTORE_SECRET_ACCESS_KEY", "OBJSTORE_SESSION_TOKEN"]],
];

const from = (source: Source) => (source === "env" || source === "flag" ? "the environment" : "the user config file");
const elsewhere = (source: Source | undefined): source is Source => source === "env" || source === "flag" || source === "config file";

/**
 * The working directory's trusted files that send keys from elsewhere (the environment, the user
 * config file) to URLs they set themselves, one warning each naming both (contract 25): trusting a
 * folder is easy to do for the wrong one.
 */
export function borrowedKeys(entries: Entry[], file: { file: string; looked: ReadonlyMap<string, Source> } | undefined, cwd: string): string[] {
  const warnings: string[] = [];
  const byKey = new Map(entries.map((e) => [e.key, e]));
  for (const [url, keys] of SENDS) {
    if (byKey.get(url)?.source !== ".env") continue;
    const borrowed = keys.filter((k) => elsewhere(byKey.get(k)?.source) && byKey.get(k)?.value !== undefined);
    if (borrowed.length > 0) warnings.push(`${cwd}/.env sets ${url}, so ${borrowed.map((k) => `${k} (from ${from(byKey.get(k)!.source)})`).join(", ")} goes to ${byKey.get(url)!.value}`);
  }
  if (file) {
    const borrowed = [...file.looked].filter(([, source]) => elsewhere(source));
    if (borrowed.length > 0) warnings.push(`${file.file} puts ${borrowed.map(([name, source]) => `${name} (from ${from(source)})`).join(", ")} into the upstreams it declares`);
  }
  return warnings;
}
