import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import parsePrometheusTextFormat from "parse-prometheus-text-format";
import { recordsOf } from "../usage/lib.ts";
import { agentSession, cachesApp, play, readOf, startCaches } from "./fixture.ts";

const caches = await startCaches();
afterAll(() => caches.stop());
beforeEach(() => caches.reset());

const hashed = (session: string) => new Bun.CryptoHasher("sha256").update(session).digest("hex").slice(0, 16);

describe("a session's usage and its cache reads (contract 22)", () => {
  const app = cachesApp(caches);

  test("/v1/usage?by=session groups by the hashed session, with what the upstream read from its cache", async () => {
    const [one, two] = [agentSession(5, 41), agentSession(3, 42)];
    await play(app.json, one, "usage-session-one");
    const readByOne = readOf(Object.values(caches.caches));
    await play(app.json, two, "usage-session-two");
    const response = await app.call("/v1/usage?by=session");
    expect(response.status).toBe(200);
    const { by, data } = await response.json();
    expect(by).toBe("session");
    const group = (s: string) => data.find((row: { group: string }) => row.group === hashed(s));
    expect(group("usage-session-one")).toMatchObject({ requests: 5, cache_read_tokens: readByOne });
    expect(group("usage-session-two")).toMatchObject({ requests: 3 });
    const records = await recordsOf(app.config, () => app.call("/v1/usage"));
    expect(records.some((r) => JSON.stringify(r).includes("usage-session-"))).toBe(false);
  });

  test("/metrics counts cache reads and writes by upstream and route", async () => {
    const seen = await play(app.json, agentSession(4, 43), "metrics-session");
    const upstream = seen[0]!.upstream!;
    const text = await (await app.call("/metrics")).text();
    const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
    const value = (name: string) => Number(families.get(name)?.metrics.find((m) => m.labels?.upstream === upstream && m.labels?.route === "claude-pair")?.value);
    const cache = upstream === "key-one" ? caches.caches.a1 : caches.caches.a2;
    expect(value("parley_cache_read_tokens_total")).toBeGreaterThanOrEqual(cache.totals.read);
    expect(value("parley_cache_write_tokens_total")).toBeGreaterThanOrEqual(cache.totals.written);
    expect(cache.totals.read).toBeGreaterThan(0);
  });
});
