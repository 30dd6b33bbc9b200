import { openapi } from "@elysiajs/openapi";
import { Elysia } from "elysia";
import bundle from "swagger-ui-dist/swagger-ui-bundle.js" with { type: "file" };
import css from "swagger-ui-dist/swagger-ui.css" with { type: "file" };
import { VERSION } from "../../version.ts";

/** `/docs` with its UI assets served from inside the binary, so it renders offline. */
export function docsRoutes() {
  return new Elysia({ name: "parley/docs" })
    .get("/docs/assets/swagger-ui-bundle.js", asset(bundle, "text/javascript"), { detail: { hide: true } })
    .get("/docs/assets/swagger-ui.css", asset(css, "text/css"), { detail: { hide: true } })
    .use(
      openapi({
        path: "/docs",
        specPath: "/docs/json",
        provider: "swagger-ui",
        swagger: { cdn: "/docs/assets/swagger-ui-bundle.js", theme: "/docs/assets/swagger-ui.css", autoDarkMode: false },
        exclude: { paths: [/^\/docs/] },
        documentation: {
          info: { title: "parley", version: VERSION, description: "A local LLM gateway: OpenAI, Anthropic Messages and Titan formats over OpenAI and AWS Bedrock." },
          components: {
            securitySchemes: {
              bearer: { type: "http", scheme: "bearer" },
              apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
            },
          },
          security: [{ bearer: [] }, { apiKey: [] }],
        },
      }),
    );
}

function asset(path: string, type: string) {
  return () => new Response(Bun.file(path), { headers: { "content-type": `${type}; charset=utf-8`, "cache-control": "public, max-age=86400" } });
}
