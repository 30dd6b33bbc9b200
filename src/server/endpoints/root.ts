import { VERSION } from "../../version.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

/** Clients (Claude Code) probe the base URL with HEAD / before they start: it answers 200, without a key. */
export const root: PlainEndpoint[] = [
  { kind: "plain", method: "HEAD", path: "/", errors: "parley", answer: () => new Response(null, { status: 200 }) },
  {
    kind: "plain", method: "GET", path: "/", errors: "parley",
    answer: () => ({ name: "parley", version: VERSION, status: "ok" }),
    openapi: { summary: "Liveness probe for clients", tags: ["health"] },
  },
];
