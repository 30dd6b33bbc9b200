import type { Kind } from "../kind.ts";
import { known } from "../models.ts";

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
  // Its ids carry its name (`mock/tools`): addressed as `<upstream>/<model>`, the whole id goes to it.
  wholeIds: true,
  catalogue: known(["mock", "mock/tools", "mock/slow", "mock/error-429", "mock/error-503"].map((id) => [id, "parley", "2026-11-22"])),
  builtIn: true,
  local: true,
};
