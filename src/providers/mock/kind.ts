import type { Kind } from "../kind.ts";

/** The built-in mock (contract 11): always there, no keys, never calls out. */
export const mockKind: Kind<Record<string, never>> = {
  keys: {},
  required: [],
  secrets: [],
  settings: () => ({}),
  missing: () => undefined,
  build: () => import("./provider.ts").then((m) => m.createMockProvider()),
  where: () => "built-in",
  patterns: [/^mock(\/|$)/],
  // `mock/tools` addressed as an upstream's model reaches the mock as `tools`: its scripts go by the full id.
  modelFor: (model) => (model === "mock" || model.startsWith("mock/") ? model : `mock/${model}`),
};
