import { heapStats } from "bun:jsc";
import { expect, test } from "bun:test";
import { TEST_KEY, testApp } from "../lib/app.ts";

/** Contract 25: memory for a body is at most a small constant times its size, however it is chunked. */
test("a body sent one byte at a time is not kept as one object per byte", async () => {
  const { app } = testApp();
  const text = JSON.stringify({ model: "mock", messages: [{ role: "user", content: "x".repeat(200_000) }] });
  const bytes = new TextEncoder().encode(text);
  let at = 0;
  let heldAtEnd = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at === bytes.length) {
        // Every byte has been handed over: what the reader holds now is what it keeps.
        Bun.gc(true);
        heldAtEnd = heapStats().objectTypeCounts.Uint8Array ?? 0;
        return controller.close();
      }
      controller.enqueue(bytes.slice(at, ++at));
    },
  });
  const response = await app.handle(new Request("http://localhost/v1/chat/completions", { method: "POST", body, headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" } }));
  expect(response.status).toBe(200);
  // One array per chunk would be 200,000 of them.
  expect(heldAtEnd).toBeLessThan(10_000);
});
