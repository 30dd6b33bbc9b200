// parley's own encoder (src/telemetry), OTLP/HTTP protobuf, or JSON with OTLP_JSON=1.
import { ATTR, createTelemetry } from "../../../src/telemetry/index.ts";
import { drive } from "./drive.ts";

await drive((url) => {
  const { telemetry } = createTelemetry(
    {
      OTEL_EXPORTER_OTLP_ENDPOINT: process.env.OTEL_OFF ? undefined : url,
      OTEL_EXPORTER_OTLP_PROTOCOL: process.env.OTLP_JSON ? "http/json" : "http/protobuf",
      OTEL_BSP_SCHEDULE_DELAY: "200",
      OTEL_METRIC_EXPORT_INTERVAL: "1000",
    },
    "bench",
  );
  return {
    request() {
      const server = telemetry.startServer("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", {
        [ATTR.operation]: "chat",
        [ATTR.requestModel]: "gpt-4o",
        [ATTR.route]: "default",
        [ATTR.key]: "main",
        [ATTR.session]: "s-1",
      });
      for (const upstream of ["alpha", "beta"]) {
        const client = server.child({ [ATTR.provider]: "openai", [ATTR.requestModel]: "gpt-4o", [ATTR.upstream]: upstream, [ATTR.serverAddress]: "127.0.0.1", [ATTR.serverPort]: 8080, [ATTR.maxTokens]: 256, [ATTR.temperature]: 0.7 });
        if (!client.traceparent && !process.env.OTEL_OFF) throw new Error("no traceparent");
        client.firstToken();
        client.set(ATTR.responseModel, "gpt-4o-2024-08-06").set(ATTR.responseId, "chatcmpl-1").set(ATTR.finishReasons, ["stop"]);
        client.usage({ input: { total: 1200, cacheRead: 1000, cacheWrite: 0 }, output: 42 });
        client.end();
      }
      server.firstToken();
      server.set(ATTR.responseModel, "gpt-4o-2024-08-06").set(ATTR.provider, "openai").set(ATTR.upstream, "beta").set(ATTR.costUsd, 0.0012);
      server.end();
    },
    shutdown: () => telemetry.shutdown(),
  };
});
