import { Elysia, type AnyElysia } from "elysia";
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import css from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { VERSION } from "../../version.ts";
import type { ChatEndpoint } from "../chat-edge.ts";

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
 * the OpenAPI document @elysiajs/openapi makes from the app's routes, with the chat endpoints'. The generator is loaded on
 * the first request for the document, so an idle server does not hold it (~2.5 MB).
 */
export function docsRoutes(app: () => AnyElysia, chats: ChatEndpoint[]) {
  let spec: Promise<unknown> | undefined;
  const hidden = { detail: { hide: true } };
  return new Elysia({ name: "parley/docs" })
    .get("/docs", () => new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8" } }), hidden)
    .get("/docs/json", () => (spec ??= openapiDocument(app(), chats)), hidden)
    .get("/docs/assets/swagger-ui-bundle.js", asset(bundle, "text/javascript"), hidden)
    .get("/docs/assets/swagger-ui.css", asset(css, "text/css"), hidden);
}

/** The Elysia routes' document, and the chat endpoints' operations (they are not Elysia routes). */
async function openapiDocument(app: AnyElysia, chats: ChatEndpoint[]) {
  const { toOpenAPISchema } = await import("@elysiajs/openapi/openapi");
  const { paths, components } = toOpenAPISchema(app, { paths: [/^\/docs/] });
  const operationId = (path: string) => `post${path.replace(/\W+(\w)/g, (_, c: string) => c.toUpperCase())}`;
  const answer = { 200: { description: "The answer: JSON, or text/event-stream with \"stream\": true" } };
  for (const chat of chats) (paths as Record<string, unknown>)[chat.path] = { post: { operationId: operationId(chat.path), responses: answer, ...chat.openapi } };
  return { openapi: "3.1.0", info: INFO, paths, ...SECURITY, components: { ...components, ...SECURITY.components } };
}

function asset(path: string, type: string) {
  return () => new Response(Bun.file(path), { headers: { "content-type": `${type}; charset=utf-8`, "cache-control": "public, max-age=86400" } });
}
