import { Elysia } from "elysia";
import { VERSION } from "../../version.ts";

/** Clients (Claude Code) probe the base URL with HEAD / before they start: it answers 200, without a key. */
export function rootRoutes() {
  return new Elysia({ name: "parley/root" })
    .head("/", () => new Response(null, { status: 200 }), { detail: { hide: true } })
    .get("/", () => ({ name: "parley", version: VERSION, status: "ok" }), { detail: { summary: "Liveness probe for clients", tags: ["health"] } });
}
