import { Elysia } from "elysia";
import type { Config } from "../../config.ts";
import { configuredProviders } from "../../providers/registry.ts";
import { VERSION } from "../../version.ts";

const INPUT_FORMATS = ["alpha", "beta_messages", "beta_textgen"] as const;

/** Open health endpoints: no key needed, so load balancers and CI can poll them. */
export function healthRoutes(config: Config) {
  const services = Object.fromEntries(
    Object.entries(configuredProviders(config)).map(([name, ok]) => [name, ok ? "available" : "not_configured"]),
  );
  return new Elysia({ name: "parley/health" })
    .get("/health", () => ({ status: "healthy", timestamp: new Date().toISOString(), version: VERSION, services }), {
      detail: { summary: "Service health", tags: ["health"], security: [] },
    })
    .get(
      "/v1/chat/completions/health",
      () => ({
        status: "healthy",
        timestamp: new Date().toISOString(),
        version: VERSION,
        message: "Chat completions service is running",
        supported_input_formats: INPUT_FORMATS,
        model_routing: "enabled",
      }),
      { detail: { summary: "Chat completions health", tags: ["health"], security: [] } },
    );
}
