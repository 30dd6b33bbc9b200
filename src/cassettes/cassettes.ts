import { AsyncLocalStorage } from "node:async_hooks";
import { join } from "node:path";
import { GatewayError } from "../errors.ts";
import type { Logger } from "../log.ts";
import type { Upstream, UpstreamFetch } from "../providers/kind.ts";
import { KINDS, missing } from "../providers/kinds.ts";
import type { Declared } from "../routing/upstreams.ts";
import { openCassette, type Cassette } from "./cassette.ts";
import type { Configured } from "./har.ts";
import { callOf } from "./match.ts";
import { miss } from "./miss.ts";
import { record } from "./record.ts";
import { replay } from "./replay.ts";

export type CassetteMode = "record" | "replay" | "auto";

export interface CassetteSettings {
  dir: string;
  mode: CassetteMode;
  /** `recorded`: replayed streams keep their recorded gaps; `fast`: none. */
  pace: "fast" | "recorded";
}

/** The request header that names a request's cassette. */
export const CASSETTE_HEADER = "x-parley-cassette";
const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * Contract 16, at the upstream boundary: every upstream that calls out (not the mock) gets a fetch that records its
 * calls into `DIR/<cassette>.har`, or answers them from there. The cassette is the request's
 * `x-parley-cassette` header, carried to the fetch by an AsyncLocalStorage that only `within` sets:
 * without --cassettes nothing here runs.
 */
export function createCassettes({ dir, mode, pace }: CassetteSettings, log: Logger) {
  const names = new AsyncLocalStorage<string | null>();
  /** The upstreams configured now, as a recording writes them down. */
  let configured: Configured = {};
  const open = new Map<string, Promise<Cassette>>();
  const cassette = (name: string): Promise<Cassette> => {
    let found = open.get(name);
    if (!found) {
      open.set(name, (found = openCassette(join(dir, `${name}.har`))));
      found.catch(() => open.delete(name));
    }
    return found;
  };

  const fetchFor = (upstream: Upstream): UpstreamFetch => async (url, init) => {
    const name = names.getStore() ?? "default";
    if (!NAME.test(name)) {
      throw new GatewayError(400, "invalid_request_error", `${CASSETTE_HEADER} must be a name of letters, digits, '.', '_' and '-' (no path separators), up to 100 characters.`);
    }
    const file = await cassette(name);
    const body = typeof init.body === "string" ? init.body : "";
    const call = callOf(upstream.name, upstream.kind, init.method ?? "GET", url, body);
    if (mode !== "record") {
      const entry = file.next(call, mode === "replay");
      if (entry) return replay(entry, pace === "recorded", init.signal);
      if (mode === "replay") throw miss(file.file, file.entries, call);
    }
    return record({ upstream: upstream.name, kind: upstream.kind, url, init, body }, (entry) => {
      file.add(call, entry, mode === "record", configured).catch((error) => log.error(error.message));
    });
  };

  return {
    /** The upstreams with their calls going through the cassettes; those of a kind that never calls out (the mock) stay as they are. */
    upstreams(declared: Declared): Declared {
      // Written down only by a recording: replay reads it (offline.ts).
      if (mode !== "replay") configured = configuredOf(declared);
      return { ...declared, upstreams: declared.upstreams.map((u) => (KINDS[u.kind].local ? u : { ...u, fetch: fetchFor(u) })) };
    },
    /** Runs a request's handler with its cassette known to the upstream calls it makes. */
    within: <T>(request: Request, handle: (request: Request) => T): T => names.run(request.headers.get(CASSETTE_HEADER), () => handle(request)),
    /** Done when every recording so far is on disk. */
    async flush(): Promise<void> {
      for (const found of open.values()) await (await found.catch(() => undefined))?.saved();
    },
  };
}

export type Cassettes = ReturnType<typeof createCassettes>;

/** The upstreams that call out and are configured, with what proves parley to each (as /health says it). */
function configuredOf(declared: Declared): Configured {
  const out: Configured = {};
  for (const u of declared.upstreams) {
    const kind = KINDS[u.kind];
    if (kind.local || missing(u)) continue;
    out[u.name] = u.shownCredentials !== undefined ? { credentials: u.shownCredentials } : kind.credentials ? { credentials: kind.credentials(u.settings) } : {};
  }
  return out;
}
