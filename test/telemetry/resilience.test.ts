// A slow, failing or dead collector never delays a request: the span calls stay synchronous and
// cheap, the queue is bounded, and every loss is counted.
import { expect, test } from "bun:test";
import { ATTR, type Telemetry, createTelemetry } from "../../src/telemetry/index.ts";
import { deadEndpoint, startOtlpReceiver } from "../lib/otlp-receiver.ts";

/** The span calls one request makes (a SERVER span and two upstream attempts), timed. */
function request(telemetry: Telemetry): number {
  const t0 = performance.now();
  const server = telemetry.startServer("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", { [ATTR.operation]: "chat", [ATTR.requestModel]: "m" });
  for (let i = 0; i < 2; i++) {
    const client = server.child({ [ATTR.provider]: "openai", [ATTR.upstream]: "alpha" });
    client.usage({ input: { total: 10, cacheRead: 0, cacheWrite: 0 }, output: 5 });
    client.end();
  }
  server.firstToken();
  server.end();
  return performance.now() - t0;
}

const median = (xs: number[]) => xs.sort((a, b) => a - b)[xs.length >> 1]!;

test("a full queue drops spans and counts them", async () => {
  await using receiver = await startOtlpReceiver();
  const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_BSP_MAX_QUEUE_SIZE: "10", OTEL_BSP_SCHEDULE_DELAY: "60000" }, "1");
  for (let i = 0; i < 25; i++) telemetry.startServer(null, { [ATTR.operation]: "chat" }).end();
  expect(telemetry.stats().droppedSpans).toBe(15);
  await telemetry.shutdown();
  expect(receiver.spans).toHaveLength(10);
  expect(telemetry.stats()).toEqual({ droppedSpans: 15, failedSpans: 0, exportedSpans: 10, failedMetricExports: 0 });
});

test("shutdown flushes what is pending, spans and metrics, before their timers", async () => {
  await using receiver = await startOtlpReceiver();
  const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "600000", OTEL_METRIC_EXPORT_INTERVAL: "600000", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2" }, "1");
  request(telemetry);
  request(telemetry);
  expect(receiver.requests).toHaveLength(0);
  await telemetry.shutdown();
  expect(receiver.spans).toHaveLength(6);
  expect(receiver.metricExports).toHaveLength(1);
  expect(telemetry.stats().exportedSpans).toBe(6);
});

test("shutdown against a slow collector takes one export deadline, not one per batch", async () => {
  await using receiver = await startOtlpReceiver();
  receiver.setMode("slow");
  const deadline = 400;
  const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: `${receiver.url}/v1/traces`, OTEL_BSP_SCHEDULE_DELAY: "600000", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "2", OTEL_BSP_EXPORT_TIMEOUT: String(deadline) }, "1");
  for (let i = 0; i < 10; i++) telemetry.startServer(null, { [ATTR.operation]: "chat" }).end();
  const t0 = performance.now();
  await telemetry.shutdown();
  // Five batches one after another would take five deadlines.
  expect(performance.now() - t0).toBeLessThan(4 * deadline);
  expect(receiver.requests).toHaveLength(5);
  expect(telemetry.stats()).toMatchObject({ failedSpans: 10, exportedSpans: 0 });
});

test("a collector that answers 503 costs the request nothing; its losses are counted", async () => {
  await using receiver = await startOtlpReceiver();
  receiver.setMode("fail");
  const { telemetry } = createTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "5", OTEL_METRIC_EXPORT_INTERVAL: "5" }, "1");
  request(telemetry);
  await receiver.waitFor(() => telemetry.stats().failedSpans === 3 && telemetry.stats().failedMetricExports > 0);
  await telemetry.shutdown();
});

for (const collector of ["slow", "dead"] as const) {
  test(`a ${collector} collector: the span calls return at once, exports time out, losses are counted`, async () => {
    await using receiver = await startOtlpReceiver();
    const endpoint = collector === "dead" ? await deadEndpoint() : receiver.url;
    if (collector === "slow") receiver.setMode("slow");
    const env = { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "2", OTEL_BSP_EXPORT_TIMEOUT: "150", OTEL_BSP_MAX_QUEUE_SIZE: "50", OTEL_METRIC_EXPORT_INTERVAL: "5", OTEL_METRIC_EXPORT_TIMEOUT: "150" };
    const { telemetry } = createTelemetry(env, "1");

    // The same calls against a collector that answers, as the baseline.
    await using healthy = await startOtlpReceiver();
    const { telemetry: baseline } = createTelemetry({ ...env, OTEL_EXPORTER_OTLP_ENDPOINT: healthy.url }, "1");

    const times: number[] = [];
    const base: number[] = [];
    const until = performance.now() + 400; // long enough for several exports to hang and time out
    while (performance.now() < until) {
      times.push(request(telemetry));
      base.push(request(baseline));
      await Bun.sleep(1);
    }
    if (collector === "slow") await receiver.waitFor(() => receiver.requests.length > 0);
    // The calls are synchronous: a request that waited on the collector would take the export's
    // 150 ms deadline. Medians, as a busy machine may preempt any one call.
    expect(median(times)).toBeLessThan(Math.max(1, 5 * median(base)));
    expect(median(times)).toBeLessThan(15);
    // A refused connection fails at once; a slow one holds the queue until it fills and drops.
    await receiver.waitFor(() => telemetry.stats().failedSpans > 0 && telemetry.stats().failedMetricExports > 0 && (collector === "dead" || telemetry.stats().droppedSpans > 0));

    const t0 = performance.now();
    await telemetry.shutdown(); // bounded by the export deadline, never hangs on the collector
    expect(performance.now() - t0).toBeLessThan(10_000);
    const s = telemetry.stats();
    expect(s.exportedSpans).toBe(0);
    expect(s.failedSpans + s.droppedSpans).toBe(times.length * 3);
    await baseline.shutdown();
  });
}
