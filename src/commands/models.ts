import { defineCommand } from "citty";
import { loadConfig } from "../config.ts";
import { openDatabase } from "../lib/db.ts";
import { createLogger } from "../log.ts";
import { createDiscovery } from "../routing/discovery.ts";
import { createRouter } from "../routing/routes.ts";
import { missing } from "../providers/kinds.ts";
import { exitOnConfigError } from "./fail.ts";

export default defineCommand({
  meta: { name: "models", description: "List the models the configured upstreams serve: asked live, else the last list or the built-in one" },
  args: {
    json: { type: "boolean", description: "print JSON: [{id, provider, owned_by, source}]" },
    all: { type: "boolean", description: "every upstream's models as <upstream>/<id>, also those another upstream routes" },
  },
  run: ({ args }) =>
    exitOnConfigError(async () => {
      const { config } = loadConfig();
      const { upstreams, routes } = config.upstreams;
      const db = openDatabase(config.dataDir);
      const discovery = createDiscovery({ config, database: () => db, log: createLogger("silent"), upstreams: () => upstreams });
      await discovery.refresh();
      const router = createRouter({ upstreams, routes, modelAliases: config.modelAliases, modelRoutes: config.modelRoutes }, discovery);
      const route = (id: string) => {
        try {
          return router(id).targets[0]!.upstream;
        } catch {
          return undefined;
        }
      };
      const models = args.all
        ? upstreams.filter((u) => !missing(u)).flatMap((u) => {
            const found = discovery.of(u);
            return (found?.models ?? []).map((m) => ({ id: `${u.name}/${m.id}`, provider: u.name, owned_by: m.owned_by, source: found!.source }));
          })
        : discovery.list(route).map(({ id, provider, owned_by, source }) => ({ id, provider, owned_by, source }));
      db.close();
      if (args.json) return void process.stdout.write(`${JSON.stringify(models, null, 2)}\n`);
      const width = Math.max(5, ...models.map((m) => m.id.length));
      const upstreamWidth = Math.max(8, ...models.map((m) => m.provider.length));
      const lines = models.map((m) => `${m.id.padEnd(width)}  ${m.provider.padEnd(upstreamWidth)}  ${m.owned_by.padEnd(10)}  ${m.source}`);
      process.stdout.write(`${"MODEL".padEnd(width)}  ${"UPSTREAM".padEnd(upstreamWidth)}  OWNED BY    SOURCE\n${lines.join("\n")}\n`);
    }),
});
