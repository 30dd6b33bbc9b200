import { readFileSync } from "node:fs";
import { defineCommand } from "citty";
import { loadConfig } from "../config.ts";
import { closest } from "../lib/did-you-mean.ts";
import { GatewayError } from "../errors.ts";
import { isObject, type Json } from "../lib/read.ts";
import { loadTokenizer } from "../routing/estimate.ts";
import { explain } from "../routing/explain.ts";
import { createRouter } from "../routing/routes.ts";
import { openDatabase } from "../lib/db.ts";
import { createLogger } from "../log.ts";
import { createDiscovery } from "../routing/discovery.ts";
import type { ChatEndpoint } from "../server/edge/endpoint.ts";
import { chatCompletions } from "../server/endpoints/chat.ts";
import { messages } from "../server/endpoints/messages.ts";
import { completions } from "../server/endpoints/completions.ts";
import { responses } from "../server/endpoints/responses.ts";
import { exitOnConfigError, exitUsage } from "./fail.ts";

/** The endpoints whose requests are decoded into a chat; /v1/embeddings is routed on its model and caller alone. */
const DECODED: Record<string, ChatEndpoint> = Object.fromEntries([chatCompletions, messages, responses, completions].map((e) => [e.path, e]));

/** The smallest body each endpoint takes, when no --body is given. */
const MINIMAL: Record<string, Json> = {
  "/v1/chat/completions": { messages: [{ role: "user", content: "hi" }] },
  "/v1/messages": { max_tokens: 1024, messages: [{ role: "user", content: "hi" }] },
  "/v1/responses": { input: "hi" },
  "/v1/completions": { prompt: "hi" },
  "/v1/embeddings": { input: "hi" },
};
const ENDPOINTS = Object.keys(MINIMAL);

/**
 * Which route a request would take, and why each route before it did not (each condition, yes or
 * no, with what the request has), then the targets in order: the router `serve` uses decides, on
 * the request decoded as the endpoint decodes it. No request is sent anywhere; the upstreams are
 * asked for their models as serve asks them, so that an id goes where serve sends it.
 */
export default defineCommand({
  meta: { name: "explain", description: "Show which route a request takes and why the earlier ones did not, then its targets in order (no chat is sent; the upstreams are asked for their models as serve asks them)" },
  args: {
    model: { type: "string", alias: "m", description: "the model id the client asks for (default: the body's, else DEFAULT_ALPHA_MODEL)" },
    body: { type: "string", description: "a file holding the request body as JSON (- reads stdin); default: a one-line \"hi\"" },
    endpoint: { type: "string", default: "/v1/chat/completions", description: `the endpoint it is sent to: ${ENDPOINTS.join(", ")}` },
    key: { type: "string", default: "main", description: "the API key's label (main for API_KEY, an API_KEYS entry's name)" },
    header: { type: "string", description: "a request header as name=value (or name: value); repeat for more" },
    upstreams: { type: "string", description: "the upstreams file (default: the one serve would read)" },
  },
  run: ({ args, rawArgs }) =>
    exitOnConfigError(async () => {
      const path = ENDPOINTS.includes(args.endpoint) ? args.endpoint : unknownEndpoint(args.endpoint);
      const headers = new Headers();
      for (const header of repeated(rawArgs, "--header")) {
        const match = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(header);
        if (!match) exitUsage(`--header ${JSON.stringify(header)}: write name=value, e.g. --header user-agent=claude-cli/2.0.0`);
        try {
          headers.append(match[1]!, match[2]!);
        } catch {
          exitUsage(`--header ${JSON.stringify(header)}: not a valid header`);
        }
      }
      const { config, upstreamsFile } = loadConfig(args.upstreams === undefined ? {} : { flags: { PARLEY_UPSTREAMS: args.upstreams } });
      const body = args.body === undefined ? { ...MINIMAL[path] } : readBody(args.body);
      if (args.model !== undefined) body.model = args.model;
      const requested = typeof body.model === "string" ? body.model : config.defaultModel;
      if (!requested) exitUsage("no model: give --model, or a body with a model (or set DEFAULT_ALPHA_MODEL)");

      const { upstreams, routes } = config.upstreams;
      // What the upstreams list, asked as serve asks them (MODELS_REFRESH_S=0: their `models` only), so that the router decides as serve's does.
      const db = openDatabase(config.dataDir);
      const known = createDiscovery({ config, database: () => db, log: createLogger("silent"), upstreams: () => upstreams });
      if (config.modelsRefreshS > 0) await known.refresh();
      const router = createRouter({ upstreams, routes, modelAliases: config.modelAliases, modelRoutes: config.modelRoutes }, known);
      try {
        const decoded = DECODED[path];
        const input = decoded?.call?.(body, new Request(`http://localhost${path}`, { method: "POST", headers }), "").input;
        const request = input?.decodeRequest(body);
        if (router.countsTokens) await loadTokenizer();
        const facts = { request, endpoint: path, key: args.key, headers };
        const explaining = { router, routes, modelAliases: config.modelAliases, modelFallbacks: config.modelFallbacks, ...(upstreamsFile ? { file: upstreamsFile } : {}) };
        process.stdout.write(explain(explaining, requested, facts));
        db.close();
      } catch (error) {
        if (!(error instanceof GatewayError)) throw error;
        process.stderr.write(`parley: ${error.message}\n`);
        process.exit(1);
      }
    }),
});

function unknownEndpoint(path: string): never {
  const near = closest(path, ENDPOINTS);
  return exitUsage(`--endpoint ${path}: not an endpoint that routes by model${near ? `; did you mean ${near}?` : ""} (${ENDPOINTS.join(", ")})`);
}

/** Every value of a flag given more than once (citty keeps the last). */
function repeated(argv: string[], flag: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i]!;
    if (token === "--") break;
    if (token === flag && i + 1 < argv.length) values.push(argv[++i]!);
    else if (token.startsWith(`${flag}=`)) values.push(token.slice(flag.length + 1));
  }
  return values;
}

function readBody(path: string): Json {
  let text: string;
  try {
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (error) {
    return exitUsage(`--body ${path}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : (error as Error).message}`);
  }
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (error) {
    return exitUsage(`--body ${path}: not JSON (${(error as Error).message})`);
  }
  if (!isObject(body)) return exitUsage(`--body ${path}: the body must be a JSON object`);
  return body;
}
