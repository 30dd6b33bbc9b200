// `parley serve` reads the OTEL_* variables at start-up (each worker) and flushes what is pending
// when it stops: spans and metrics whose timers never fired reach the collector.
import { expect, test } from "bun:test";
import { startCli, userDir } from "../lib/cli.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { TEST_KEY } from "../lib/gateway.ts";
import { startOtlpReceiver } from "../lib/otlp-receiver.ts";

for (const workers of [1, 2]) {
  test(`serve${workers > 1 ? ` --workers ${workers}` : ""}: spans and metrics are flushed on SIGTERM; a bad variable is a warning`, async () => {
    await using receiver = await startOtlpReceiver();
    const upstream = await startFakeOpenAI();
    const user = userDir();
    const env = {
      ...user.env, API_KEY: TEST_KEY, ALPHA_API_KEY: "sk-up", ALPHA_BASE_URL: upstream.url,
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_SERVICE_NAME: "gateway-a",
      // Nothing goes out on a timer: only the flush at shutdown can deliver.
      OTEL_BSP_SCHEDULE_DELAY: "600000", OTEL_METRIC_EXPORT_INTERVAL: "600000", OTEL_TRACES_SAMPLER: "no_such_sampler",
    };
    const server = await startCli(workers > 1 ? ["--workers", String(workers)] : [], { cwd: user.dir, env });
    try {
      for (let i = 0; i < 2 * workers; i++) {
        const response = await fetch(`${server.url}/v1/chat/completions`, { method: "POST", headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content: "hi" }] }) });
        expect(response.status).toBe(200);
      }
      expect(receiver.requests).toHaveLength(0);
    } finally {
      await server.stop();
      upstream.stop();
    }
    expect(receiver.spans.filter((s) => s.kind === 2)).toHaveLength(2 * workers);
    expect(receiver.spans.every((s) => s.resource["service.name"] === "gateway-a")).toBe(true);
    expect(receiver.metricExports.length).toBeGreaterThan(0);
    expect(server.output()).toContain("OTEL_TRACES_SAMPLER");
  });
}
