// The baseline: the same loop with no telemetry at all.
import { drive } from "./drive.ts";

await drive(() => ({ request() {}, shutdown: async () => {} }));
