import { defineCommand } from "citty";

const SUB_COMMANDS = {
  check: () => import("./upstreams-check.ts").then((m) => m.default),
  test: () => import("./upstreams-test.ts").then((m) => m.default),
};

/** `parley upstreams`: the table; `check` and `test` load only their own code. */
export default defineCommand({
  meta: { name: "upstreams", description: "List the upstreams parley can call: kind, URL or region, status and model count (check and test them with the sub-commands)" },
  args: {
    json: { type: "boolean", description: "print JSON: [{name, kind, where, status, missing, models, models_source, models_note}]" },
  },
  subCommands: SUB_COMMANDS,
  run: async ({ args, rawArgs }) => {
    // citty runs a command's own `run` after the sub-command it ran.
    if (rawArgs.some((arg) => Object.hasOwn(SUB_COMMANDS, arg))) return;
    const { listUpstreams } = await import("./upstreams-list.ts");
    await listUpstreams({ json: !!args.json });
  },
});
