import { Elysia } from "elysia";
import type { Config } from "../../config.ts";
import { listModels } from "../../providers/catalogue.ts";
import { configuredProviders } from "../../providers/registry.ts";
import { auth, type Guard } from "../auth.ts";

export function modelRoutes(config: Config, guard: Guard) {
  const list = { object: "list", data: listModels(config, configuredProviders(config)) };
  return new Elysia({ name: "parley/models" })
    .use(auth(guard))
    .get("/v1/models", () => list, { scope: "models", detail: { summary: "List models", tags: ["models"] } });
}
