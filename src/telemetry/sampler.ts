/** OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG, as the OpenTelemetry specification defines them. */
import type { SpanContext } from "./traceparent.ts";

export interface SamplerConfig {
  /** What decides for a trace that starts here. */
  root: "always_on" | "always_off" | "ratio";
  ratio: number;
  /** Follow a client's sampled flag when it sends a parent. */
  parentBased: boolean;
}

const NAMES = ["always_on", "always_off", "traceidratio", "parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio"];

export function parseSampler(name: string | undefined, arg: string | undefined, warnings: string[]): SamplerConfig {
  let n = name?.trim().toLowerCase() || "parentbased_always_on";
  if (!NAMES.includes(n)) {
    warnings.push(`OTEL_TRACES_SAMPLER=${n} is not supported; using parentbased_always_on`);
    n = "parentbased_always_on";
  }
  const parentBased = n.startsWith("parentbased_");
  const base = parentBased ? n.slice("parentbased_".length) : n;
  if (base !== "traceidratio") return { root: base as "always_on" | "always_off", ratio: 1, parentBased };
  let ratio = 1;
  if (arg?.trim()) {
    const r = Number(arg);
    if (Number.isFinite(r) && r >= 0 && r <= 1) ratio = r;
    else warnings.push(`OTEL_TRACES_SAMPLER_ARG=${arg} is not a ratio in [0, 1]; using 1`);
  }
  return { root: "ratio", ratio, parentBased };
}

// The low 52 bits of a trace id are random (W3C Trace Context level 2) and fit a double exactly,
// so the same trace id gets the same decision in every process that uses this ratio.
const SPACE = 2 ** 52;

export function sampled(config: SamplerConfig, traceId: string, parent: SpanContext | null): boolean {
  if (parent && config.parentBased) return (parent.flags & 1) === 1;
  switch (config.root) {
    case "always_on":
      return true;
    case "always_off":
      return false;
    case "ratio":
      return Number.parseInt(traceId.slice(19), 16) < config.ratio * SPACE;
  }
}
