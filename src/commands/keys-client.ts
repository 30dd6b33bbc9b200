import { loadConfig } from "../config.ts";
import { localServerUrl } from "./chat-once.ts";
import { exitUsage } from "./fail.ts";

/** The flags every `parley keys` command takes to reach the server. */
export const SERVER_ARGS = {
  url: { type: "string", description: "the running parley's address (default: from HOST and PORT, http://127.0.0.1:8000)" },
  json: { type: "boolean", description: "print the server's JSON instead of text" },
} as const;

/** The server answered with an error, or did not answer: one line for the user, exit code 1. */
export class AdminFailed extends Error {}

const TIMEOUT_MS = 30_000;

/**
 * The admin API of the running server (contract 19), with PARLEY_ADMIN_KEY, else API_KEY from the
 * configuration. The configuration is read only when --url or the key is not given otherwise.
 */
export function adminClient(url: string | undefined) {
  const adminKey = process.env.PARLEY_ADMIN_KEY;
  const config = url === undefined || !adminKey ? loadConfig().config : undefined;
  const key = adminKey || config?.apiKey;
  if (!key) exitUsage("no admin key: set PARLEY_ADMIN_KEY (or API_KEY) to a key with the admin scope");
  const base = (url ?? localServerUrl(config!)).replace(/\/+$/, "");

  async function send<T>(method: string, path: string, body?: unknown): Promise<T> {
    let response: Response;
    try {
      response = await fetch(`${base}/admin/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      const cause = (error as { code?: string }).code ?? (error as Error).name;
      throw new AdminFailed(`no parley server answers at ${base} (${cause}): start one with \`parley serve\`, or pass --url`);
    }
    const text = await response.text();
    const parsed = parseJson(text);
    if (response.ok && parsed !== undefined) return parsed as T;
    const error = (parsed as { error?: { message?: unknown; details?: unknown } } | undefined)?.error;
    const message = typeof error?.message === "string" ? error.message + (typeof error.details === "string" ? ` (${error.details})` : "") : text.slice(0, 200).replace(/\s+/g, " ") || response.statusText;
    throw new AdminFailed(`${response.status} from ${base}: ${message}`);
  }

  return {
    base,
    send,
    /** A key's id, from its id or its name (the server's list names both). */
    async resolve(idOrName: string): Promise<string> {
      const { data } = await send<{ data: { id: string | null; name: string; source?: string; revoked_at?: number | null }[] }>("GET", "/keys");
      // A live key's name wins over a revoked key's of the same name.
      const found = data.find((key) => key.id === idOrName) ?? data.find((key) => key.name === idOrName && !key.revoked_at) ?? data.find((key) => key.name === idOrName);
      if (!found) throw new AdminFailed(`no key named or with the id '${idOrName}' at ${base} (parley keys list shows them)`);
      if (found.source === "env" || !found.id) throw new AdminFailed(`'${found.name}' is set in the environment (API_KEY or API_KEYS): change it there`);
      return found.id;
    },
  };
}

/** Runs a command against the server; an AdminFailed ends it with one line on stderr and exit code 1. */
export async function talking(run: () => Promise<void>): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!(error instanceof AdminFailed)) throw error;
    process.stderr.write(`parley: ${error.message}\n`);
    process.exit(1);
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
