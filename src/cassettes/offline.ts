import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { KINDS } from "../providers/kinds.ts";
import type { Declared } from "../routing/upstreams.ts";
import type { Configured } from "./har.ts";

/** Stands in for a key in replay, where no call goes out: never sent anywhere. */
export const REPLAY_KEY = "parley-replay-no-key";

/**
 * Replay needs no credentials: an upstream without a key gets a stand-in (every kind that takes
 * keys takes an `apiKey`, a bearer token that spares Bedrock its SigV4 credential chain), so it
 * counts as configured and its provider builds. What the calls are matched on (region, URL,
 * models) must still be set as it was when they were recorded.
 *
 * Replay changes nothing about which upstreams are configured: when the cassettes say which were
 * (`recorded`), only those get a stand-in, and /health names their credentials as it did while
 * recording. The spec's `alpha`, which the variables always declare, is not turned on in replay
 * when no key had configured it while recording: the same id routes to the same upstream.
 */
export function offline(declared: Declared, recorded?: Configured): Declared {
  return {
    ...declared,
    upstreams: declared.upstreams.map((u) => {
      const settings = u.settings as { apiKey?: string };
      if (KINDS[u.kind].local || settings.apiKey) return u;
      if (!recorded) return { ...u, settings: { ...settings, apiKey: REPLAY_KEY } };
      if (!Object.hasOwn(recorded, u.name)) return u;
      const { credentials } = recorded[u.name]!;
      return { ...u, settings: { ...settings, apiKey: REPLAY_KEY }, ...(credentials !== undefined ? { shownCredentials: credentials } : {}) };
    }),
  };
}

/**
 * The upstreams the cassettes in `dir` were recorded with (all cassettes together); undefined when
 * none says (cassettes recorded before parley wrote it down, or none yet): every upstream then gets
 * a stand-in. Read once, at start.
 */
export function recordedUpstreams(dir: string): Configured | undefined {
  let files: string[];
  try {
    files = readdirSync(dir).filter((f) => f.endsWith(".har"));
  } catch {
    return undefined;
  }
  let found: Configured | undefined;
  for (const file of files) {
    try {
      const said = JSON.parse(readFileSync(join(dir, file), "utf8"))?.log?._upstreams;
      if (said && typeof said === "object" && !Array.isArray(said)) found = { ...said, ...found };
    } catch {
      // A broken cassette says so when a request opens it (cassette.ts).
    }
  }
  return found;
}
