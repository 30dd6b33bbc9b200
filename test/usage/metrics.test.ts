import { afterAll, describe, expect, test } from "bun:test";
import parsePrometheusTextFormat, { type MetricFamily } from "parse-prometheus-text-format";
import { Counter } from "../../src/usage/metrics.ts";
import { testApp } from "../lib/app.ts";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";
import { withinOneWindow } from "../lib/redis.ts";

const SCRAPER = "sk-scraper-key-00000001";
const gateway = await startGateway({ RATE_LIMIT_RPM: "0", UPSTREAM_RETRIES: "1", API_KEYS: `scraper=${SCRAPER}:metrics,sk-chat-only-000000001:chat` });
afterAll(() => gateway.stop());

async function scrape(key = SCRAPER): Promise<Map<string, MetricFamily>> {
  const response = await gateway.call("/metrics", { key });
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return new Map(parsePrometheusTextFormat(await response.text()).map((family) => [family.name, family]));
}

const sample = (families: Map<string, MetricFamily>, name: string, labels: Record<string, string>) =>
  families.get(name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));

describe("GET /metrics (Prometheus text)", () => {
  test("needs a key with the metrics scope", async () => {
    expect((await gateway.call("/metrics", { key: null })).status).toBe(401);
    expect((await gateway.call("/metrics", { key: "sk-chat-only-000000001" })).status).toBe(403);
    expect((await gateway.call("/metrics", { key: TEST_KEY })).status).toBe(200);
  });

  test("counts requests, tokens, retries, latency and upstream first byte, parsed by a Prometheus parser", async () => {
    const ask = (body: object) => gateway.json("/v1/chat/completions", body);
    expect((await ask({ model: "gpt-4o-mini", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    await (await ask({ model: "gpt-4o-mini", stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] })).text();
    gateway.openai.next({ kind: "error", status: 503, message: "down" });
    expect((await ask({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] })).status).toBe(200);
    expect((await ask({ model: "mock/error-503", messages: [{ role: "user", content: "hi" }] })).status).toBe(503);

    const families = await scrape();
    expect(families.get("parley_requests_total")!.type).toBe("COUNTER");
    expect(sample(families, "parley_requests_total", { endpoint: "/v1/chat/completions", status: "200", provider: "alpha", model: "gpt-4o-mini" })!.value).toBe("2");
    expect(sample(families, "parley_requests_total", { status: "503", provider: "mock", model: "mock/error-503" })!.value).toBe("1");
    expect(sample(families, "parley_tokens_total", { provider: "alpha", model: "gpt-4o-mini", type: "input" })!.value).toBe("22");
    expect(sample(families, "parley_tokens_total", { provider: "alpha", model: "gpt-4o-mini", type: "output" })!.value).toBe("14");
    expect(sample(families, "parley_upstream_retries_total", { provider: "alpha" })!.value).toBe("1");
    expect(sample(families, "parley_upstream_retries_total", { provider: "mock" })!.value).toBe("1");
    expect(Number(sample(families, "parley_cost_usd_total", { model: "gpt-4o-mini" })!.value)).toBeCloseTo(2 * 5.85e-6, 12);

    // This parser keeps a histogram's buckets (merged over label sets) but not a labelled _sum or
    // _count: one endpoint here, so the buckets are its own; _count is read from the text.
    const added = families.get("parley_added_latency_seconds")!;
    expect(added.type).toBe("HISTOGRAM");
    const buckets = added.metrics[0]!.buckets!;
    expect(buckets["+Inf"]).toBe("4");
    const counts = Object.entries(buckets).sort(([a], [b]) => Number(a) - Number(b)).map(([, n]) => Number(n));
    expect(counts).toEqual([...counts].sort((a, b) => a - b));
    expect(families.get("parley_upstream_first_byte_seconds")!.type).toBe("HISTOGRAM");
    const text = await (await gateway.call("/metrics", { key: SCRAPER })).text();
    expect(text).toContain('parley_added_latency_seconds_count{endpoint="/v1/chat/completions"} 4\n');
    expect(text).toContain('parley_upstream_first_byte_seconds_count{provider="alpha"} 3\n');
    expect(text).toMatch(/parley_upstream_first_byte_seconds_bucket\{provider="alpha",le="\+Inf"\} 3\n/);
  });

  test("streams in flight go up while a stream is sent and down when it ends", async () => {
    const response = await gateway.json("/v1/chat/completions", { model: "mock/slow", stream: true, messages: [{ role: "user", content: "a b c d e f" }] });
    const reader = response.body!.getReader();
    await reader.read();
    expect(sample(await scrape(), "parley_streams_in_flight", { endpoint: "/v1/chat/completions" })!.value).toBe("1");
    while (!(await reader.read()).done);
    expect(sample(await scrape(), "parley_streams_in_flight", { endpoint: "/v1/chat/completions" })!.value).toBe("0");
    expect((await scrape()).get("parley_streams_in_flight")!.type).toBe("GAUGE");
  });

  test("rate-limit rejections are counted", async () => {
    const { call } = testApp({ RATE_LIMIT_RPM: "1", API_KEYS: `${SCRAPER}:metrics` });
    await withinOneWindow(5); // both requests in one minute's count
    expect((await call("/v1/models")).status).toBe(200);
    expect((await call("/v1/models")).status).toBe(429);
    const text = await (await call("/metrics", { key: SCRAPER })).text();
    const families = new Map(parsePrometheusTextFormat(text).map((f) => [f.name, f]));
    expect(sample(families, "parley_rate_limited_total", { reason: "rate_limit" })!.value).toBe("1");
  });

  test("METRICS=off: no /metrics", async () => {
    const { call } = testApp({ METRICS: "off" });
    expect((await call("/metrics")).status).toBe(404);
  });

  test("label values are escaped, and a metric keeps at most 1000 label sets", () => {
    const counter = new Counter("c_total", "help", ["model"]);
    counter.inc(['we"ird\\model\nx']);
    for (let i = 0; i < 1100; i++) counter.inc([`m${i}`]);
    const lines: string[] = [];
    counter.render(lines);
    const family = parsePrometheusTextFormat(`# TYPE c_total counter\n${lines.join("\n")}\n`)[0]!;
    expect(family.metrics[0]!.labels!.model).toBe('we"ird\\model\nx');
    expect(family.metrics.length).toBe(1001);
    expect(family.metrics.at(-1)).toEqual({ value: "101", labels: { model: "_other" } });
  });
});
