// Contract 24: a slow or dead collector changes no reply and delays no request; its losses are
// counted in /metrics. Bounded against the exporter's own deadline, not the wall clock alone.
import { expect, test } from "bun:test";
import { startGateway } from "../lib/gateway.ts";
import { deadEndpoint, startOtlpReceiver } from "../lib/otlp-receiver.ts";

const hello = [{ role: "user", content: "hi" }];
const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
// The export deadline: a request that waited for one export would take at least this long.
const DEADLINE_MS = 6000;

/** A few requests of each kind, what a client would see of each (ids and timings left out). */
async function session(gateway: Awaited<ReturnType<typeof startGateway>>) {
  const seen: unknown[] = [];
  const times: number[] = [];
  for (let i = 0; i < 8; i++) {
    for (const body of [{ model: "gpt-4o", messages: hello }, { model: "gpt-4o", messages: hello, stream: true }, { model: CLAUDE, messages: hello, stream: true }]) {
      const t0 = performance.now();
      const response = await gateway.json("/v1/chat/completions", body);
      const text = (await response.text()).replace(/"(id|created)":\s*("[^"]*"|\d+)/g, "");
      times.push(performance.now() - t0);
      seen.push([response.status, response.headers.get("content-type"), response.headers.get("x-parley-attempts"), text]);
    }
  }
  return { seen, slowest: Math.max(...times) };
}

for (const collector of ["slow", "dead"] as const) {
  test(`a ${collector} collector: the same replies as with OpenTelemetry off, none waits for an export, losses in /metrics`, async () => {
    await using receiver = await startOtlpReceiver();
    if (collector === "slow") receiver.setMode("slow");
    const endpoint = collector === "dead" ? await deadEndpoint() : receiver.url;
    const off = await startGateway();
    const on = await startGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: "1", OTEL_BSP_MAX_QUEUE_SIZE: "16",
      OTEL_BSP_EXPORT_TIMEOUT: String(DEADLINE_MS), OTEL_EXPORTER_OTLP_TIMEOUT: String(DEADLINE_MS),
      OTEL_METRIC_EXPORT_INTERVAL: "5", OTEL_METRIC_EXPORT_TIMEOUT: String(DEADLINE_MS),
    });
    try {
      const expected = await session(off);
      const got = await session(on);
      expect(got.seen).toEqual(expected.seen);
      if (collector === "slow") expect(receiver.requests.length).toBeGreaterThan(0); // an export was held while the requests ran
      // Every request was answered well inside one export deadline.
      expect(got.slowest).toBeLessThan(DEADLINE_MS / 3);
      // A slow collector holds one batch; the rest overflow the queue. A dead one refuses each batch at once.
      const counted = async () => {
        const text = await (await on.call("/metrics")).text();
        const number = (reason: string) => Number(new RegExp(`^parley_otel_dropped_spans_total\\{reason="${reason}"\\} (\\d+)$`, "m").exec(text)?.[1]);
        return number("queue_full") + number("export_failed");
      };
      const deadline = Date.now() + 20_000;
      while ((await counted()) === 0 && Date.now() < deadline) await Bun.sleep(20);
      expect(await counted()).toBeGreaterThan(0);
    } finally {
      receiver.setMode("ok");
      await Promise.all([off.stop(), on.stop(), on.app.close()]);
    }
  });
}
