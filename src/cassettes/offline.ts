import { KINDS } from "../providers/kinds.ts";
import type { Declared } from "../routing/upstreams.ts";

/** Stands in for a key in replay, where no call goes out: never sent anywhere. */
export const REPLAY_KEY = "parley-replay-no-key";

/**
 * Replay needs no credentials: an upstream without a key gets a stand-in (every kind that takes
 * keys takes an `apiKey`, a bearer token that spares Bedrock its SigV4 credential chain), so it
 * counts as configured and its provider builds. What the calls are matched on (region, URL,
 * models) must still be set as it was when they were recorded.
 */
export function offline(declared: Declared): Declared {
  return {
    ...declared,
    upstreams: declared.upstreams.map((u) => {
      const settings = u.settings as { apiKey?: string };
      return KINDS[u.kind].local || settings.apiKey ? u : { ...u, settings: { ...settings, apiKey: REPLAY_KEY } };
    }),
  };
}
