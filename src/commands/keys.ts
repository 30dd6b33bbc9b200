import { defineCommand } from "citty";
import { exitOnConfigError, exitUsage } from "./fail.ts";
import { FIELD_ARGS, fieldsFromFlags, parseDuration } from "./keys-args.ts";
import { adminClient, SERVER_ARGS, talking } from "./keys-client.ts";
import { keyDetails, keysTable, type ListedKey } from "./keys-table.ts";

type Key = ListedKey & Record<string, unknown>;
const TARGET = { type: "positional", required: true, description: "the key's id or name" } as const;

const print = (text: string): void => void process.stdout.write(text);
const printJson = (value: unknown) => print(`${JSON.stringify(value, null, 2)}\n`);

/** Runs a command against the admin API; a configuration mistake or a failed call ends it with one line. */
const serverCommand = (url: string | undefined, run: (client: ReturnType<typeof adminClient>) => Promise<void>) =>
  exitOnConfigError(() => talking(() => run(adminClient(url))));

/** The new secret alone on stdout, so `KEY=$(parley keys create ci)` works; a word to a person on stderr. */
function printSecret(issued: Key & { key: string }, json: boolean | undefined, what: string) {
  if (json) return printJson(issued);
  print(`${issued.key}\n`);
  if (process.stderr.isTTY) process.stderr.write(`${what} key '${issued.name}' (${issued.id}): the secret above is shown this once.\n`);
}

const create = defineCommand({
  meta: { name: "create", description: "Make a key; prints its secret, shown this once" },
  args: { name: { type: "positional", required: true, description: "its name: unique, shown in usage records" }, ...FIELD_ARGS, ...SERVER_ARGS },
  run: ({ args }) => serverCommand(args.url, async (client) => {
    const body = { name: args.name, ...fieldsFromFlags(args, false) };
    printSecret(await client.send<Key & { key: string }>("POST", "/keys", body), args.json, "Created");
  }),
});

const list = defineCommand({
  meta: { name: "list", description: "The keys: runtime ones and, read-only, those set in the environment" },
  args: SERVER_ARGS,
  run: ({ args }) => serverCommand(args.url, async (client) => {
    const listed = await client.send<{ data: Key[] }>("GET", "/keys");
    if (args.json) return printJson(listed);
    print(keysTable(listed.data));
  }),
});

const show = defineCommand({
  meta: { name: "show", description: "One key: its limits, budget and what it spent this period" },
  args: { target: TARGET, ...SERVER_ARGS },
  run: ({ args }) => serverCommand(args.url, async (client) => {
    const key = await client.send<Key>("GET", `/keys/${await client.resolve(args.target)}`);
    if (args.json) return printJson(key);
    print(keyDetails(key));
  }),
});

const update = defineCommand({
  meta: { name: "update", description: "Change a key (none, all or never clears a limit: --budget none, --models all, --expires never)" },
  args: {
    target: TARGET,
    name: { type: "string", description: "a new name" },
    disable: { type: "boolean", description: "refuse it until --enable" },
    enable: { type: "boolean", description: "accept it again" },
    ...FIELD_ARGS,
    ...SERVER_ARGS,
  },
  run: ({ args }) => serverCommand(args.url, async (client) => {
    if (args.disable && args.enable) exitUsage("--disable and --enable together: pick one");
    const body = {
      ...fieldsFromFlags(args, true),
      ...(args.name !== undefined ? { name: args.name } : {}),
      ...(args.disable ? { disabled: true } : args.enable ? { disabled: false } : {}),
    };
    if (Object.keys(body).length === 0) exitUsage("nothing to change: give one of --name, --scopes, --models, --budget, --rpm, … (see parley keys update --help)");
    const key = await client.send<Key>("PATCH", `/keys/${await client.resolve(args.target)}`, body);
    if (args.json) return printJson(key);
    print(keyDetails(key));
  }),
});

const revoke = defineCommand({
  meta: { name: "revoke", description: "Stop a key at once, on every worker" },
  args: { target: TARGET, ...SERVER_ARGS },
  run: ({ args }) => serverCommand(args.url, async (client) => {
    const key = await client.send<Key>("DELETE", `/keys/${await client.resolve(args.target)}`);
    if (args.json) return printJson(key);
    print(`Revoked key '${key.name}' (${key.id}).\n`);
  }),
});

const rotate = defineCommand({
  meta: { name: "rotate", description: "Give a key a new secret (printed, shown this once); the old one stops at once unless --grace" },
  args: { target: TARGET, grace: { type: "string", description: "how long the old secret still works: 1h, 30m, 7d" }, ...SERVER_ARGS },
  run: ({ args }) => serverCommand(args.url, async (client) => {
    const grace = args.grace === undefined ? 0 : parseDuration(args.grace);
    if (grace === undefined) exitUsage(`--grace ${JSON.stringify(args.grace)}: use a duration (1h, 30m, 7d)`);
    const issued = await client.send<Key & { key: string }>("POST", `/keys/${await client.resolve(args.target)}/rotate`, { grace_s: grace });
    printSecret(issued, args.json, "Rotated");
  }),
});

/** `parley keys`: keys managed while the server runs, through its admin API (contract 19). */
export default defineCommand({
  meta: { name: "keys", description: "Make, list, change, rotate and revoke the keys of the running server" },
  subCommands: { create, list, show, update, revoke, rotate },
});
