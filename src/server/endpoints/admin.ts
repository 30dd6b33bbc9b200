import type { Config, Entry } from "../../config.ts";
import type { Discovery } from "../../routing/discovery.ts";
import type { Live } from "../../routing/live.ts";
import type { UsageService } from "../../usage/service.ts";
import type { ChatEndpoint, PlainEndpoint } from "../edge/endpoint.ts";
import type { Keys } from "../keys.ts";
import { adminEvents } from "./admin-events.ts";
import { adminKeys } from "./admin-keys.ts";
import { adminState } from "./admin-state.ts";

export interface AdminDeps {
  config: Config;
  keys: Keys;
  usage: UsageService;
  upstreams: Live;
  discovery: Discovery;
  reload: () => { ok: boolean; message: string } | undefined;
  settings: () => Entry[];
  decoders: readonly ChatEndpoint[];
}

/** The admin API under /admin/v1 (contract 19): keys and the audit log, the gateway's state, the live events. */
export function adminEndpoints(deps: AdminDeps): PlainEndpoint[] {
  const flush = async () => {
    deps.usage.settle();
    await deps.usage.recorder?.flush();
  };
  return [
    ...adminKeys(deps.keys),
    ...adminState({ ...deps, store: deps.usage.store, flush }),
    adminEvents(deps.usage.store),
  ];
}
