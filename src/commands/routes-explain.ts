import { readFileSync } from "node:fs";
import { defineCommand } from "citty";
import { loadConfig } from "../config.ts";
import { closest } from "../lib/did-you-mean.ts";
import { GatewayError } from "../errors.ts";
import { isObject, type Json } from "../lib/read.ts";
import { loadTokenizer } from "../routing/estimate.ts";
import { explain } from "../routing/explain.ts";
import { createRouter } from "../routing/routes.ts";
import { missing } from "../providers/kinds.ts";
import type { ChatEndpoint } from "../server/chat-edge.ts";
import { chatCompletions } from "../server/routes/chat.ts";
import { messages } from "../server/routes/messages.ts";
import { completions } from "../server/routes/completions.ts";
import { responses } from "../server/routes/responses.ts";
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
 * the request decoded as the endpoint decodes it. Nothing is sent anywhere; models discovered from
 * the upstreams are not asked (their `models` lists are).
 */
export default defineCommand({
  meta: { name: "explain", description: "Show which route a request takes and why the earlier ones did not, then its targets in order (nothing is sent)" },
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
      // Only what the upstreams list in the file: discovery would ask every upstream.
      const known = {
        upstreamsOf: (id: string) => upstreams.filter((u) => u.models?.includes(id) && !missing(u)).map((u) => u.name),
        serves: (u: (typeof upstreams)[number], id: string) => (u.models ? u.models.includes(id) : undefined),
        ids: () => upstreams.flatMap((u) => u.models ?? []),
      };
      const router = createRouter({ upstreams, routes, modelAliases: config.modelAliases, modelRoutes: config.modelRoutes }, known);
      try {
        const decoded = DECODED[path];
        const input = decoded?.call?.(body, new Request(`http://localhost${path}`, { method: "POST", headers }), "").input;
        const request = input?.decodeRequest(body);
        if (router.countsTokens) await loadTokenizer();
        const facts = { request, endpoint: path, key: args.key, headers };
        const explaining = { router, routes, modelAliases: config.modelAliases, modelFallbacks: config.modelFallbacks, ...(upstreamsFile ? { file: upstreamsFile } : {}) };
        process.stdout.write(explain(explaining, requested, facts));
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
