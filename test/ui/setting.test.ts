import { describe, expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";
import { startCli, userDir } from "../lib/cli.ts";

const get = (env: Record<string, string>, path: string) => testApp(env).app.handle(new Request(`http://localhost${path}`));

describe("UI: where /ui is served", () => {
  test("on by default on a loopback address, with its script, and no key needed for the page", async () => {
    for (const HOST of ["127.0.0.1", "::1", "localhost"]) expect((await get({ HOST }, "/ui")).status).toBe(200);
    const page = await get({}, "/ui");
    expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
    expect(page.headers.get("content-security-policy")).toContain("connect-src 'self'");
    const script = await get({}, "/ui/app.js");
    expect(script.status).toBe(200);
    expect(script.headers.get("content-type")).toBe("text/javascript; charset=utf-8");
    // Nothing from elsewhere: no absolute URL to another host is fetched by the bundle's own code.
    expect(await script.text()).not.toMatch(/fetch\(\s*["'`]https?:/);
  });

  test("off on any other address unless UI=on; UI=off turns it off anywhere", async () => {
    expect((await get({ HOST: "0.0.0.0" }, "/ui")).status).toBe(404);
    expect((await get({ HOST: "0.0.0.0", UI: "on" }, "/ui")).status).toBe(200);
    expect((await get({ UI: "off" }, "/ui")).status).toBe(404);
    expect((await get({ UI: "off" }, "/ui/app.js")).status).toBe(404);
  });
});

test("serve's start-up line names the dashboard's address, and it answers there", async () => {
  const server = await startCli([], { env: { ...userDir().env, API_KEY: "sk-test-0123456789abcdef", MODELS_REFRESH_S: "0" } });
  try {
    expect(server.output()).toContain(`dashboard at ${server.url}/ui`);
    expect((await fetch(`${server.url}/ui`)).status).toBe(200);
  } finally {
    await server.stop();
  }
});
