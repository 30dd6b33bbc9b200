/** The README's endpoint table names every route the app serves. */
import { expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";
import { read } from "./markdown.ts";

test("every route is in the README's endpoint table", async () => {
  const { app } = testApp({ METRICS: "on" });
  const readme = read("README.md");
  const table = readme.slice(readme.indexOf("## Endpoints"), readme.indexOf("\n## ", readme.indexOf("## Endpoints") + 1));
  const written = (route: { method: string; path: string }) =>
    `\`${route.method} ${route.path.replace(/\/:[a-z_]+/g, "/{id}").replace(/\/\*$/, "/{id}")}\``;
  const missing = app.routes
    .filter((route) => !route.path.startsWith("/docs/assets/"))
    .map(written)
    .filter((entry) => !table.includes(entry));
  expect(missing).toEqual([]);
  await app.close();
});
