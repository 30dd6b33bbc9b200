/**
 * Preloaded into the profiled server (`bun --preload`): samples JSC's heap size every 100 ms and, at
 * exit, writes its peak, the heap's object count and its commonest object types to HEAP_STATS_FILE.
 */
import { writeFileSync } from "node:fs";
import { heapSize, heapStats } from "bun:jsc";

const file = process.env.HEAP_STATS_FILE!;
let peakHeap = 0;
// heapSize() is cheap; heapStats() walks every object type, so it is taken once, at exit.
setInterval(() => (peakHeap = Math.max(peakHeap, heapSize())), 100).unref();
process.on("exit", () => {
  const stats = heapStats();
  const types = Object.entries(stats.objectTypeCounts).sort((a, b) => b[1] - a[1]).slice(0, 12);
  writeFileSync(file, JSON.stringify({ peakHeap, heapSize: stats.heapSize, objectCount: stats.objectCount, types }));
});
