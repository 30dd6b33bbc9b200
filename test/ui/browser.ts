import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page } from "playwright-core";

export const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Debian's headless Chromium in a fresh profile, driven by playwright-core (no browser download exists here). */
export async function startBrowser(): Promise<{ context: BrowserContext; close: () => Promise<void> }> {
  const profile = mkdtempSync(join(tmpdir(), "parley-chromium-"));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: [
      ...(process.getuid?.() === 0 ? ["--no-sandbox"] : []),
      "--disable-gpu", "--disable-background-networking", "--disable-component-update", "--disable-sync", "--no-first-run",
    ],
  });
  // A busy machine (the whole suite, other work) slows the browser: wait for what a page shows with a generous deadline.
  context.setDefaultTimeout(90_000);
  return { context, close: async () => (await context.close(), rmSync(profile, { recursive: true, force: true })) };
}

export interface Watched {
  page: Page;
  /** Every URL the page asked for. */
  requests: string[];
  /** Console errors and uncaught exceptions, leaving out the failed loads the page handles (`expected`). */
  errors(): string[];
}

/** A new tab that records every request it makes and every error it logs. `expected` says which failed answers the page handles itself (a 404 of an endpoint this gateway lacks). */
export async function watch(context: BrowserContext, expected: (url: string, status: number) => boolean): Promise<Watched> {
  const page = await context.newPage();
  const requests: string[] = [];
  const logged: { text: string; url: string }[] = [];
  const failed = new Map<string, number>();
  page.on("request", (r) => requests.push(r.url()));
  page.on("response", (r) => r.status() >= 400 && failed.set(r.url(), r.status()));
  page.on("pageerror", (e) => logged.push({ text: `uncaught: ${e.message}`, url: "" }));
  page.on("console", (m) => m.type() === "error" && logged.push({ text: m.text(), url: m.location().url }));
  const errors = () =>
    logged
      .filter((e) => !(e.text.startsWith("Failed to load resource") && failed.has(e.url) && expected(e.url, failed.get(e.url)!)))
      .map((e) => `${e.text} (${e.url})`);
  return { page, requests, errors };
}

/** Whether the page is wider than its window (a horizontal scroll bar). */
export const overflows = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth > window.innerWidth);
