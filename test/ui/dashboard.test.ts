import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";
import { overflows, startBrowser, watch, type Watched } from "./browser.ts";

/**
 * The dashboard in a real browser (headless Chromium) against a gateway on the fake upstreams:
 * what a person signing in would see and do. `UPDATE_SCREENSHOTS=1` writes the pages' pictures to
 * docs/images/ (docs/dashboard.md shows them); otherwise they go to a temporary folder.
 */
const VIEWER = "sk-viewer-0123456789abcdef";
const PAGES = ["live", "usage", "upstreams", "routes", "keys", "settings"] as const;
const SHOTS = process.env.UPDATE_SCREENSHOTS ? join(import.meta.dir, "../../docs/images") : mkdtempSync(join(tmpdir(), "parley-shots-"));
mkdirSync(SHOTS, { recursive: true });

let browser: Awaited<ReturnType<typeof startBrowser>>;
let context: BrowserContext;
const BROWSER_TEST_MS = 240_000;
beforeAll(async () => {
  browser = await startBrowser();
  context = browser.context;
  // The first request for the script bundles ui/ (from source): once per process, before any page waits on it.
  const warm = await gateway();
  expect((await fetch(`${warm.url}/ui/app.js`)).status).toBe(200);
  await warm.stop();
}, BROWSER_TEST_MS);
afterAll(() => browser?.close());

async function gateway() {
  const gateway = await startGateway({ API_KEYS: `viewer=${VIEWER}:usage` });
  const url = gateway.listen();
  const admin = (await fetch(`${url}/admin/v1/upstreams`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).status !== 404;
  const chat = (model: string) =>
    fetch(`${url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model, messages: [{ role: "user", content: "hi" }] }) });
  const usage = async (query: string) => ((await (await fetch(`${url}/v1/usage?${query}`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).json()) as { data: Record<string, any>[] }).data;
  // The page handles these failed answers itself: the admin API missing from this gateway, a key without a scope, a wrong key.
  const expected = (at: string, status: number) =>
    (!admin && status === 404 && at.includes("/admin/v1/")) || (status === 403 && at.includes("/admin/v1/")) || (status === 401 && at.includes("/v1/usage")) ||
    (status === 422 && at.includes("/admin/v1/keys"));
  const adminApi = async (path: string, init: RequestInit = {}) => {
    const response = await fetch(`${url}/admin/v1/${path}`, { ...init, headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" } });
    return { status: response.status, body: (await response.json()) as Record<string, any> };
  };
  return { gateway, url, admin, chat, usage, adminApi, expected, stop: () => gateway.stop() };
}

async function signIn(tab: Watched, url: string, key = TEST_KEY) {
  await tab.page.goto(`${url}/ui`);
  await tab.page.getByLabel("API key").fill(key);
  await tab.page.getByRole("button", { name: "Sign in" }).click();
  await tab.page.getByRole("navigation", { name: "Pages" }).waitFor();
}

async function open(page: Page, name: (typeof PAGES)[number]) {
  await page.getByRole("link", { name: name[0]!.toUpperCase() + name.slice(1) }).click();
  await page.getByRole("heading", { level: 1, name: new RegExp(`^${name}$`, "i") }).waitFor();
}

/** Nothing but the gateway itself (and the page's own blob: for a CSV). */
function onlyTheGateway(tab: Watched, url: string) {
  const elsewhere = tab.requests.filter((r) => !r.startsWith(`${url}/`) && !r.startsWith("blob:") && !r.startsWith("data:"));
  expect(elsewhere).toEqual([]);
  expect(tab.requests.length).toBeGreaterThan(2);
}

/** The first table's rows as text, cell by cell. */
const tableRows = (page: Page) => page.locator(".scroll table").first().locator("tbody tr").evaluateAll((rows) => rows.map((r) => [...r.querySelectorAll("td")].map((td) => td.textContent ?? "")));
const digits = (text: string) => Number(text.replace(/[^\d.]/g, ""));

describe("the dashboard", () => {
  test("refuses a wrong key, keeps the right one in the tab only, and an empty gateway's pages say what to do", async () => {
    const g = await gateway();
    const tab = await watch(context, g.expected);
    try {
      await tab.page.goto(`${g.url}/ui`);
      await tab.page.getByLabel("API key").fill("sk-wrong-0000000000");
      await tab.page.getByRole("button", { name: "Sign in" }).click();
      await expect(tab.page.getByRole("alert").textContent()).resolves.toContain("does not know this key");
      await signIn(tab, g.url);
      expect(await tab.page.evaluate(() => [sessionStorage.getItem("parley.key"), document.cookie, location.href])).toEqual([TEST_KEY, "", `${g.url}/ui`]);

      await open(tab.page, "live");
      await tab.page.getByText(g.admin ? "Waiting for requests" : "does not serve live events").waitFor();
      await open(tab.page, "usage");
      await tab.page.getByText("No usage in the last 24h").waitFor();
      await open(tab.page, "upstreams");
      await (g.admin ? tab.page.getByRole("cell", { name: /alpha/ }).first() : tab.page.getByText("does not serve upstreams")).waitFor();
      await open(tab.page, "routes");
      await tab.page.getByText(g.admin ? "No [[routes]] yet" : "does not serve routes").waitFor();
      await open(tab.page, "keys");
      await (g.admin ? tab.page.getByRole("button", { name: "Create key" }) : tab.page.getByText("does not serve keys")).waitFor();
      await open(tab.page, "settings");
      await (g.admin ? tab.page.locator("main table, main .empty").first() : tab.page.getByText("does not serve the configuration")).waitFor();

      // A reload keeps the tab signed in; signing out forgets the key.
      await tab.page.reload();
      await tab.page.getByRole("navigation", { name: "Pages" }).waitFor();
      await tab.page.getByRole("button", { name: "Sign out" }).click();
      await tab.page.getByLabel("API key").waitFor();
      expect(await tab.page.evaluate(() => sessionStorage.length)).toBe(0);
      onlyTheGateway(tab, g.url);
      expect(tab.errors()).toEqual([]);
    } finally {
      await tab.page.close();
      await g.stop();
    }
  }, BROWSER_TEST_MS);

  test("with traffic: live rows arrive, the plots are drawn and the tables agree with /v1/usage", async () => {
    const g = await gateway();
    for (const model of ["gpt-4o", "gpt-4o", "gpt-4o", "gpt-4o-mini"]) expect((await g.chat(model)).status).toBe(200);
    const tab = await watch(context, g.expected);
    try {
      await signIn(tab, g.url);
      await open(tab.page, "live");
      if (g.admin) {
        await tab.page.getByText("Waiting for requests").waitFor();
        expect((await g.chat("gpt-4o-mini")).status).toBe(200);
        await tab.page.getByRole("cell", { name: "gpt-4o-mini" }).first().waitFor({ timeout: 30_000 });
        await tab.page.getByLabel("Filter").fill("no-such-model");
        expect(await tab.page.locator("tbody tr").count()).toBe(0);
        await tab.page.getByLabel("Filter").fill("");
      } else {
        await tab.page.getByText("does not serve live events").waitFor();
        expect((await g.chat("gpt-4o-mini")).status).toBe(200);
      }
      await tab.page.screenshot({ path: join(SHOTS, "dashboard-live.png") });
      if (g.admin) {
        // 600 requests finished at once (written in one go, as another worker would): the page lists the newest 500 and says so.
        const db = new Database(join(g.gateway.config.dataDir, "parley.db"));
        const insert = db.query("INSERT INTO usage (id, time, endpoint, key_label, model, provider, status, outcome, latency_ms, attempts) VALUES (?, ?, '/v1/chat/completions', 'burst', 'gpt-4o-burst', 'alpha', 200, 'ok', 3, 1)");
        db.transaction(() => {
          for (let i = 0; i < 600; i++) insert.run(`burst-${i}`, Date.now());
        })();
        db.close();
        await tab.page.getByText("100 more requests finished than this page lists: it shows the newest 500 each half second.").waitFor();
        expect(await tab.page.locator("tbody tr").count()).toBe(500);
        expect(await tab.page.getByRole("cell", { name: "gpt-4o-burst" }).count()).toBe(500);
      }

      await open(tab.page, "usage");
      await tab.page.locator(".scroll table").first().waitFor();
      const expectedRows = await g.usage("since=24h&by=model");
      expect(expectedRows.map((r) => r.group).sort()).toEqual(["gpt-4o", "gpt-4o-mini"]);
      const shown = await tableRows(tab.page);
      expect(shown.map((cells) => cells[0])).toEqual(expectedRows.map((r) => r.group));
      expect(shown.map((cells) => digits(cells[1]!))).toEqual(expectedRows.map((r) => r.requests));
      expect(shown.map((cells) => digits(cells[2]!))).toEqual(expectedRows.map((r) => r.input_tokens));
      expect(shown.map((cells) => digits(cells[3]!))).toEqual(expectedRows.map((r) => r.output_tokens));
      const bucketed = await g.usage("since=24h&by=model&bucket=hour");
      expect(bucketed.every((r) => typeof r.start === "number" && typeof r.errors === "number")).toBe(true);
      // Four plots (cost, requests, error rate, cache share), each a drawn canvas; the first's legend names the groups.
      await tab.page.getByRole("img", { name: "error rate" }).locator("canvas").waitFor();
      expect(await tab.page.locator(".plot canvas").count()).toBeGreaterThanOrEqual(4);
      await expect(tab.page.locator(".plot").first().textContent()).resolves.toContain("gpt-4o-mini");
      await tab.page.screenshot({ path: join(SHOTS, "dashboard-usage.png"), fullPage: true });
      const download = tab.page.waitForEvent("download");
      await tab.page.getByRole("button", { name: "Export CSV" }).click();
      const csv = await Bun.file(await (await download).path()).text();
      expect(csv.split("\n")[0]).toBe("bucket_start,group,requests,input_tokens,output_tokens,cache_read_tokens,cache_write_tokens,cost_usd");
      expect(csv).toContain(",gpt-4o-mini,");

      if (g.admin) {
        await open(tab.page, "upstreams");
        await tab.page.getByRole("button", { name: "Test alpha" }).click();
        await tab.page.getByRole("status").filter({ hasText: "ok in" }).waitFor({ timeout: 30_000 });
        await tab.page.screenshot({ path: join(SHOTS, "dashboard-upstreams.png"), fullPage: true });
        await open(tab.page, "routes");
        await tab.page.getByLabel("Model").fill("gpt-4o");
        await tab.page.getByRole("button", { name: "Explain" }).click();
        await expect(tab.page.getByLabel("Explanation").textContent()).resolves.toContain("alpha");
        await tab.page.screenshot({ path: join(SHOTS, "dashboard-routes.png"), fullPage: true });
      }
      for (const name of g.admin ? (["settings"] as const) : (["upstreams", "routes", "keys", "settings"] as const)) {
        await open(tab.page, name);
        await tab.page.locator("main table, main .note, main .empty").first().waitFor();
        await tab.page.screenshot({ path: join(SHOTS, `dashboard-${name}.png`), fullPage: name !== "settings" });
      }
      onlyTheGateway(tab, g.url);
      expect(tab.errors()).toEqual([]);
    } finally {
      await tab.page.close();
      await g.stop();
    }
  }, BROWSER_TEST_MS);

  test("a key is created (its secret shown once), edited, rotated and revoked from the Keys page", async () => {
    const g = await gateway();
    const tab = await watch(context, g.expected);
    try {
      await signIn(tab, g.url);
      await open(tab.page, "keys");
      if (!g.admin) {
        await tab.page.getByText("does not serve keys").waitFor();
        return;
      }
      await tab.page.getByLabel("New key's name").fill("laptop");
      await tab.page.getByRole("button", { name: "Create key" }).click();
      const secret = (await tab.page.getByTestId("secret").textContent())!;
      expect(secret).toMatch(/^pk-[A-Za-z0-9]{40}$/);
      // The new secret works at once.
      expect((await fetch(`${g.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(200);
      await tab.page.getByRole("button", { name: "Done" }).click();
      expect(await tab.page.getByTestId("secret").count()).toBe(0);

      // Edited: a budget and a rate limit, as the API then reads them.
      await tab.page.getByRole("button", { name: "Edit laptop" }).click();
      const form = tab.page.getByRole("form", { name: "Edit laptop" });
      await form.getByLabel("Budget", { exact: true }).fill("5");
      await form.getByLabel("Requests per minute").fill("60");
      await form.getByRole("button", { name: "Save" }).click();
      await tab.page.getByRole("cell", { name: "$5.00 / day" }).waitFor();
      await tab.page.getByRole("cell", { name: "$0.00", exact: true }).waitFor();
      const listed = (await (await fetch(`${g.url}/admin/v1/keys`, { headers: { authorization: `Bearer ${TEST_KEY}` } })).json()) as { data: Record<string, any>[] };
      expect(listed.data.find((k) => k.name === "laptop")).toMatchObject({ budget: { usd: 5, period: "day" }, rpm: 60 });

      // Rotated: the new secret is shown once and works; the old one stops.
      await tab.page.getByRole("button", { name: "Rotate laptop" }).click();
      const rotated = (await tab.page.getByTestId("secret").textContent())!;
      expect(rotated).not.toBe(secret);
      expect((await fetch(`${g.url}/v1/models`, { headers: { authorization: `Bearer ${rotated}` } })).status).toBe(200);
      expect((await fetch(`${g.url}/v1/models`, { headers: { authorization: `Bearer ${secret}` } })).status).toBe(401);
      await tab.page.getByRole("button", { name: "Done" }).click();
      tab.page.once("dialog", (d) => void d.accept());
      await tab.page.getByRole("button", { name: "Revoke laptop" }).click();
      await tab.page.getByRole("button", { name: "Revoke laptop" }).waitFor({ state: "detached" });
      expect((await fetch(`${g.url}/v1/models`, { headers: { authorization: `Bearer ${rotated}` } })).status).toBe(401);
      onlyTheGateway(tab, g.url);
      expect(tab.errors()).toEqual([]);
    } finally {
      await tab.page.close();
      await g.stop();
    }
  }, BROWSER_TEST_MS);

  test("every field of a key is set and cleared from the Keys page; a refused value shows the API's message and changes nothing", async () => {
    const g = await gateway();
    if (!g.admin) return void (await g.stop());
    const tab = await watch(context, g.expected);
    const { page } = tab;
    try {
      await signIn(tab, g.url);
      await open(page, "keys");
      // Created with some fields (POST), as the API then reads them.
      const create = page.getByRole("form", { name: "New key" });
      await create.getByLabel("New key's name").fill("ci");
      await create.getByLabel(/^Upstreams /).fill("alpha");
      await create.getByLabel("Tokens per minute").fill("5000");
      await create.getByLabel("Metadata").fill("team=web");
      await create.getByRole("button", { name: "Create key" }).click();
      await page.getByRole("button", { name: "Done" }).click();
      const id = ((await g.adminApi("keys")).body.data as Record<string, any>[]).find((k) => k.name === "ci")!.id as string;
      const read = async () => (await g.adminApi(`keys/${id}`)).body;
      expect(await read()).toMatchObject({ upstreams: ["alpha"], tpm: 5000, metadata: { team: "web" }, routes: null, expires_at: null, disabled: false });

      // Edited (PATCH): every field set, each as the API reads it; the expiry typed in the browser's zone.
      const expiry = "2030-01-31T10:30";
      const expiresAt = await page.evaluate((at) => new Date(at).getTime() / 1000, expiry);
      await page.getByRole("button", { name: "Edit ci" }).click();
      let form = page.getByRole("form", { name: "Edit ci" });
      await form.getByLabel("Name", { exact: true }).fill("ci-bot");
      await form.getByLabel(/^Models /).fill("gpt-4o*, claude-*");
      await form.getByLabel(/^Routes /).fill("coding, cheap");
      await form.getByLabel(/^Upstreams /).fill("alpha, beta-*");
      await form.getByLabel("Budget", { exact: true }).fill("200000");
      await form.getByLabel("Budget unit").selectOption("tokens");
      await form.getByLabel("Budget period").selectOption("week");
      await form.getByLabel("Requests per minute").fill("60");
      await form.getByLabel("Tokens per minute").fill("20000");
      await form.getByLabel("Expires", { exact: true }).fill(expiry);
      await form.getByLabel("Metadata").fill("team=web\nowner = ana\nnote=a=b, c");
      await form.getByLabel("Disabled").check();
      // Every control has a label, and the keyboard reaches the next one with a visible focus.
      expect(await form.locator("input, select, textarea, button").evaluateAll((els) => els.filter((e) => !(e as HTMLInputElement).labels?.length && !e.getAttribute("aria-label") && !e.textContent?.trim()).length)).toBe(0);
      await page.keyboard.press("Tab");
      expect(await page.evaluate(() => [document.activeElement?.id, getComputedStyle(document.activeElement!).outlineStyle])).toEqual(["edit-metadata", "solid"]);
      await form.getByRole("button", { name: "Save" }).click();
      await form.waitFor({ state: "detached" });
      const set = { name: "ci-bot", models: ["gpt-4o*", "claude-*"], routes: ["coding", "cheap"], upstreams: ["alpha", "beta-*"], budget: { tokens: 200000, period: "week" }, rpm: 60, tpm: 20000, expires_at: expiresAt, disabled: true, metadata: { team: "web", owner: "ana", note: "a=b, c" } };
      expect(await read()).toMatchObject(set);
      // The table says it is disabled, until when it runs, and its rates.
      const row = page.getByRole("row").filter({ hasText: "ci-bot" });
      await row.getByText("disabled", { exact: true }).waitFor();
      expect(await row.locator("td").allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining("2030"), "60 rpm20,000 tpm"]));
      expect(await row.locator("td").nth(1).textContent()).toBe("chat, modelsmodels: gpt-4o*, claude-*routes: coding, cheapupstreams: alpha, beta-*");

      // Opened again, the form holds what was set (the picture in docs/dashboard.md).
      await page.getByRole("button", { name: "Edit ci-bot" }).click();
      form = page.getByRole("form", { name: "Edit ci-bot" });
      expect(await form.getByLabel("Expires", { exact: true }).inputValue()).toBe(expiry);
      expect(await form.getByLabel("Metadata").inputValue()).toBe("team=web\nowner=ana\nnote=a=b, c");
      await page.screenshot({ path: join(SHOTS, "dashboard-keys.png"), fullPage: true });

      // Refused by the API (a metadata key over 64 characters): its message in the page, nothing changed.
      const long = "k".repeat(65);
      const refused = await g.adminApi(`keys/${id}`, { method: "PATCH", body: JSON.stringify({ metadata: { [long]: "v" } }) });
      expect(refused.status).toBe(422);
      const before = await read();
      await form.getByLabel("Metadata").fill(`${long}=v`);
      await form.getByLabel("Tokens per minute").fill("1");
      await form.getByRole("button", { name: "Save" }).click();
      const message = `Save: ${refused.body.error.message} ${refused.body.error.details}`;
      await page.getByRole("alert").filter({ hasText: message }).waitFor();
      expect(await page.getByRole("alert").textContent()).toBe(message);
      // What the form cannot send: a metadata line without '=', an expiry in the past (as `parley keys` refuses it).
      await form.getByLabel("Metadata").fill("team web");
      await form.getByRole("button", { name: "Save" }).click();
      await page.getByRole("alert").filter({ hasText: "'team web' has no '='" }).waitFor();
      await form.getByLabel("Metadata").fill("team=web");
      await form.getByLabel("Expires", { exact: true }).fill("2020-01-01T00:00");
      await form.getByRole("button", { name: "Save" }).click();
      await page.getByRole("alert").filter({ hasText: "Expires: a time in the future" }).waitFor();
      expect(await read()).toEqual(before);

      // Each cleared from the page: empty lists, no budget, rates or expiry, no metadata, enabled.
      for (const label of [/^Models /, /^Routes /, /^Upstreams /, "Requests per minute", "Tokens per minute", "Metadata"]) await form.getByLabel(label).fill("");
      await form.getByLabel("Budget", { exact: true }).fill("");
      await form.getByRole("button", { name: "Expires never" }).click();
      await form.getByLabel("Disabled").uncheck();
      await form.getByRole("button", { name: "Save" }).click();
      await form.waitFor({ state: "detached" });
      expect(await page.getByRole("alert").count()).toBe(0);
      expect(await read()).toMatchObject({ name: "ci-bot", models: null, routes: null, upstreams: null, budget: null, rpm: null, tpm: null, expires_at: null, disabled: false, metadata: {} });
      await row.getByRole("cell", { name: "never" }).waitFor();
      expect(await row.getByText("disabled", { exact: true }).count()).toBe(0);
      onlyTheGateway(tab, g.url);
      expect(tab.errors()).toEqual([]);
    } finally {
      await page.close();
      await g.stop();
    }
  }, BROWSER_TEST_MS);

  test("a key with only the usage scope reads, and may not act", async () => {
    const g = await gateway();
    const tab = await watch(context, g.expected);
    try {
      await signIn(tab, g.url, VIEWER);
      await open(tab.page, "keys");
      // Without the admin API a key's scopes cannot be told apart: the page says what is missing instead.
      await tab.page.getByText(g.admin ? "Keys are for admin keys only" : "does not serve keys").waitFor();
      if (g.admin) await tab.page.getByText("read-only").waitFor();
      await open(tab.page, "upstreams");
      await tab.page.locator("main table, main .note").first().waitFor();
      expect(await tab.page.getByRole("button", { name: /^Test / }).count()).toBe(0);
      expect(tab.errors()).toEqual([]);
    } finally {
      await tab.page.close();
      await g.stop();
    }
  }, BROWSER_TEST_MS);

  test("every page fits 390x844 without a horizontal scroll bar, in the system's dark scheme", async () => {
    const g = await gateway();
    expect((await g.chat("gpt-4o")).status).toBe(200);
    // A key with every field set: the Keys table's widest row.
    const fields = { models: ["gpt-4o*", "claude-*"], routes: ["coding"], upstreams: ["alpha", "beta-*"], budget: { usd: 12.5, period: "month" }, rpm: 600, tpm: 200000, expires_at: 1_900_000_000, disabled: true, metadata: { team: "web" } };
    if (g.admin) expect((await g.adminApi("keys", { method: "POST", body: JSON.stringify({ name: "ci-for-the-phone", ...fields }) })).status).toBe(201);
    const tab = await watch(context, g.expected);
    try {
      await tab.page.setViewportSize({ width: 390, height: 844 });
      await tab.page.emulateMedia({ colorScheme: "dark" });
      await signIn(tab, g.url);
      expect(await tab.page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe("rgb(13, 17, 23)");
      for (const name of PAGES) {
        await open(tab.page, name);
        await tab.page.locator("main table, main .note, main .empty").first().waitFor();
        expect({ name, overflows: await overflows(tab.page) }).toEqual({ name, overflows: false });
        if (name === "usage") await tab.page.screenshot({ path: join(SHOTS, "dashboard-usage-phone.png"), fullPage: true });
      }
      if (g.admin) {
        // The edit form, filled, fits too.
        await open(tab.page, "keys");
        await tab.page.getByRole("button", { name: "Edit ci-for-the-phone" }).click();
        await tab.page.getByRole("form", { name: "Edit ci-for-the-phone" }).waitFor();
        expect(await overflows(tab.page)).toBe(false);
      }
      expect(tab.errors()).toEqual([]);
    } finally {
      await tab.page.close();
      await g.stop();
    }
  }, BROWSER_TEST_MS);
});
