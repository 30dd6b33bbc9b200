import type { GatewayError } from "../errors.ts";
import type { Facts } from "../routing/when.ts";

/**
 * What a request's key may reach, as the loop asks it (contract 19): given only for a key with
 * restrictions or a budget, so an open key costs the loop nothing. The server makes it (keys live
 * above the core); the loop says where and when to ask.
 */
export interface Access {
  /** A 403 naming the model or the route when the key may not use it, else undefined. */
  refuse(model: string, route?: string): GatewayError | undefined;
  /** Whether the key may reach this upstream: targets (and fallbacks' targets) it may not are skipped. */
  reaches(upstream: string): boolean;
  /** The 403 when a route leaves no target the key may reach. */
  unreachable(model: string, upstreams: string[]): GatewayError;
  /**
   * Before the first call, once: holds what the call may cost against the key's budget (the model is
   * the first target's), or throws its 429.
   */
  reserve?(model: string, facts: Facts | undefined): Promise<void>;
}
