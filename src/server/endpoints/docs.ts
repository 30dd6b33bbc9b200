import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import css from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { VERSION } from "../../version.ts";
import type { Endpoint, PlainEndpoint } from "../edge/endpoint.ts";

const INFO = { title: "parley", version: VERSION, description: "A local LLM gateway: OpenAI, Anthropic Messages and Titan formats over OpenAI and AWS Bedrock." };
const SECURITY = {
  components: {
    securitySchemes: {
      bearer: { type: "http", scheme: "bearer" },
      apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
    },
  },
  security: [{ bearer: [] }, { apiKey: [] }],
};

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <title>${INFO.title} ${INFO.version}</title>
  <link rel="stylesheet" href="/docs/assets/swagger-ui.css" />
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="/docs/assets/swagger-ui-bundle.js"></script>
  <script>window.onload = () => { window.ui = SwaggerUIBundle({ url: "/docs/json", dom_id: "#swagger-ui" }); };</script>
</body>
</html>`;

/**
 * `/docs`: Swagger UI with its assets served from inside the binary, so it renders offline, over
 * the OpenAPI document made from the endpoints' declarations (made on the first request for it).
 */
export function docs(endpoints: () => Endpoint[]): PlainEndpoint[] {
  let spec: unknown;
  const page = (path: string, answer: () => unknown): PlainEndpoint => ({ kind: "plain", method: "GET", path, errors: "parley", answer });
  return [
    page("/docs", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } })),
    page("/docs/json", () => (spec ??= openapiDocument(endpoints()))),
    page("/docs/assets/swagger-ui-bundle.js", asset(bundle, "text/javascript")),
    page("/docs/assets/swagger-ui.css", asset(css, "text/css")),
  ];
}

const ANSWER = { 200: { description: "The answer: JSON, or text/event-stream with \"stream\": true" } };

/** Every listed endpoint's operation: a model endpoint's with its answer described, a path's `:name` as a path parameter. */
function openapiDocument(endpoints: Endpoint[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const endpoint of endpoints) {
    if (endpoint.unlisted || !endpoint.openapi) continue;
    const path = endpoint.path.replace(/:(\w+)/g, "{$1}");
    const names = [...endpoint.path.matchAll(/:(\w+)/g)].map((m) => m[1]!);
    const parameters = names.length ? { parameters: names.map((name) => ({ name, in: "path", required: true, schema: { type: "string" } })) } : {};
    const operation = endpoint.kind === "plain" ? { ...parameters, ...endpoint.openapi } : { responses: ANSWER, ...parameters, ...endpoint.openapi };
    (paths[path] ??= {})[endpoint.method.toLowerCase()] = { ...operation, operationId: operationId(endpoint.method, endpoint.path) };
  }
  return { openapi: "3.1.0", info: INFO, paths, ...SECURITY, components: { schemas: {}, ...SECURITY.components } };
}

/** `getV1FilesByFile_id` for GET /v1/files/:file_id, `getIndex` for GET /: the ids the document has always had. */
function operationId(method: string, path: string): string {
  const words = path.split("/").filter(Boolean).map((part) => (part.startsWith(":") ? `By${capital(part.slice(1))}` : capital(part)));
  return `${method.toLowerCase()}${words.length ? words.join("") : "Index"}`;
}

const capital = (word: string) => word.charAt(0).toUpperCase() + word.slice(1);

function asset(path: string, type: string) {
  return () => new Response(Bun.file(path), { headers: { "content-type": `${type}; charset=utf-8`, "cache-control": "public, max-age=86400" } });
}
