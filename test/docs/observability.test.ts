/**
 * docs/observability.md stays true: every OTEL_* variable parley reads is in its table, the loss
 * counters it names are the ones /metrics writes, and its collector configurations are valid YAML
 * whose pipelines name only components they define.
 */
import { expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { otelLines } from "../../src/usage/metrics.ts";
import { codeBlocks, read, ROOT } from "./markdown.ts";

const page = read("docs/observability.md");

test("every OTEL_* variable parley reads is documented", () => {
  const source = ["config.ts", "sampler.ts"].map((f) => readFileSync(join(ROOT, "src/telemetry", f), "utf8")).join("\n");
  const read = new Set(source.match(/OTEL_[A-Z_]+[A-Z]/g));
  // Per-signal forms are built from their parts: `OTEL_${name}_EXPORTER`, `OTEL_EXPORTER_OTLP_${name}_ENDPOINT`.
  for (const name of ["OTEL_TRACES_EXPORTER", "OTEL_METRICS_EXPORTER", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", "OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TIMEOUT"]) read.add(name);
  read.delete("OTEL_EXPORTER_OTLP");
  const missing = [...read].filter((name) => !page.includes(`\`${name}\``));
  expect(missing).toEqual([]);
});

test("the loss counters are the ones /metrics writes", () => {
  const written = otelLines({ droppedSpans: 1, failedSpans: 2, exportedSpans: 3, failedMetricExports: 4 })
    .split("\n")
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.slice(0, line.lastIndexOf(" ")));
  for (const series of written) expect(page).toContain(`\`${series}\``);
});

test("the collector configurations are valid YAML, each pipeline made of components they define", () => {
  const blocks = codeBlocks(page, "yaml").map((b) => Bun.YAML.parse(b.code) as Record<string, any>);
  const collectors = blocks.filter((b) => b.service?.pipelines);
  expect(collectors.length).toBeGreaterThanOrEqual(2);
  for (const config of collectors) {
    for (const [name, pipeline] of Object.entries<Record<string, string[]>>(config.service.pipelines)) {
      expect(["traces", "metrics", "logs"]).toContain(name.split("/")[0]!);
      expect(pipeline.receivers!.length).toBeGreaterThan(0);
      expect(pipeline.exporters!.length).toBeGreaterThan(0);
      for (const kind of ["receivers", "processors", "exporters"] as const) {
        for (const component of pipeline[kind] ?? []) expect(Object.keys(config[kind] ?? {})).toContain(component);
      }
    }
    // parley speaks OTLP/HTTP: the collector must listen for it.
    expect(config.receivers.otlp.protocols.http).toBeDefined();
  }
  const scrape = blocks.find((b) => b.scrape_configs);
  expect(scrape?.scrape_configs[0]).toMatchObject({ metrics_path: "/metrics", authorization: { credentials: expect.any(String) } });
});
