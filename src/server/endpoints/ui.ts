import type { PlainEndpoint } from "../edge/endpoint.ts";
import { uiAssets, type UiAssets } from "./ui-assets.ts";

// The page may talk to the gateway that served it and nothing else; uPlot sizes its canvas with inline styles.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8" />
  <meta name="viewport" content="width=device-width, initial-scale=1" />
  <meta name="color-scheme" content="light dark" />
  <title>parley dashboard</title>
  <link rel="icon" href="data:," />
  <link rel="stylesheet" href="/ui/app.css" />
</head>
<body>
  <div id="root"></div>
  <script type="module" src="/ui/app.js"></script>
</body>
</html>`;

/**
 * `/ui`: the dashboard (contract 20), a single-page app that reads the admin API and /v1/usage with
 * the key it is signed in with. The page and its assets are open (they hold no data); every call
 * they make carries the key.
 */
// Once per process: every app a process makes (tests make many; a reload makes one) shares the bundle.
let assets: Promise<UiAssets> | undefined;
const load = () => (assets ??= uiAssets().catch((error) => ((assets = undefined), Promise.reject(error))));

export function ui(): PlainEndpoint[] {
  const reply = (body: string, type: string) => new Response(body, { headers: { "content-type": `${type}; charset=utf-8`, "content-security-policy": CSP, "cache-control": "no-cache", "x-content-type-options": "nosniff" } });
  const page = (path: string, answer: () => unknown): PlainEndpoint => ({ kind: "plain", method: "GET", path, errors: "parley", unlisted: true, answer });
  return [
    page("/ui", () => reply(PAGE, "text/html")),
    page("/ui/", () => reply(PAGE, "text/html")),
    page("/ui/app.js", async () => reply((await load()).js, "text/javascript")),
    page("/ui/app.css", async () => reply((await load()).css, "text/css")),
  ];
}
