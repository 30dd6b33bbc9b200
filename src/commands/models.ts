import { defineCommand } from "citty";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../db.ts";
import { createLogger } from "../log.ts";
import { createDiscovery } from "../providers/discovery.ts";
import { configuredProviders, modelListers } from "../providers/registry.ts";
import { createRouter } from "../providers/routes.ts";
import { exitOnConfigError } from "./fail.ts";

export default defineCommand({
  meta: { name: "models", description: "List the models the configured providers serve: asked live, else the last list or the built-in one" },
  args: { json: { type: "boolean", description: "print JSON: [{id, provider, owned_by, source}]" } },
  run: ({ args }) =>
    exitOnConfigError(async () => {
      const { config } = loadConfig();
      const db = openDatabase(config.dataDir);
      const discovery = createDiscovery({ config, database: () => db, log: createLogger("silent"), listers: modelListers(config) });
      await discovery.refresh();
      const router = createRouter(config, discovery);
      const route = (id: string) => {
        try {
          return router(id).provider;
        } catch {
          return undefined;
        }
      };
      const models = discovery.list(configuredProviders(config), route).map(({ id, provider, owned_by, source }) => ({ id, provider, owned_by, source }));
      db.close();
      if (args.json) return void process.stdout.write(`${JSON.stringify(models, null, 2)}\n`);
      const width = Math.max(5, ...models.map((m) => m.id.length));
      const lines = models.map((m) => `${m.id.padEnd(width)}  ${m.provider.padEnd(8)}  ${m.owned_by.padEnd(10)}  ${m.source}`);
      process.stdout.write(`${"MODEL".padEnd(width)}  PROVIDER  OWNED BY    SOURCE\n${lines.join("\n")}\n`);
    }),
});
