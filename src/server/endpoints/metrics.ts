import type { Telemetry } from "../../telemetry/index.ts";
import { otelLines, type Metrics } from "../../usage/metrics.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

/**
 * Prometheus text at /metrics, for keys with the `metrics` scope (API_KEY has it; give a scraper
 * its own `API_KEYS` entry). Not "open on loopback": behind a reverse proxy on the same machine
 * every request arrives from loopback, so that would open it to the world.
 */
export function metrics(metrics: Metrics, settle: () => void, telemetry?: Telemetry): PlainEndpoint {
  return {
    kind: "plain", method: "GET", path: "/metrics", scope: "metrics", errors: "parley",
    answer({ headers }) {
      headers["content-type"] = "text/plain; version=0.0.4; charset=utf-8";
      // Completions answered but not yet counted (they are counted after their answer is written).
      settle();
      // What OpenTelemetry's export lost, when it is on.
      return telemetry?.enabled ? metrics.render() + otelLines(telemetry.stats()) : metrics.render();
    },
    openapi: { summary: "Prometheus metrics", tags: ["usage"] },
  };
}
