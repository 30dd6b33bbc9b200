import { afterAll, expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";

/** Contract 25: an upstream reply over UPSTREAM_MAX_BYTES, or a stream event over 16 MiB, ends the call with a 502. */
const CHUNK = new Uint8Array(64 * 1024).fill(97);

/** Bytes without end, after `head`: what a broken or hostile upstream may send. */
function endless(head: string): ReadableStream<Uint8Array> {
  let started = false;
  return new ReadableStream({
    pull(controller) {
      if (!started) {
        started = true;
        return controller.enqueue(new TextEncoder().encode(head));
      }
      controller.enqueue(CHUNK);
    },
  });
}

const upstream = Bun.serve({
  port: 0,
  hostname: "127.0.0.1",
  fetch(request) {
    return request.json().then((body: { stream?: boolean }) => {
      if (body.stream) return new Response(endless("data: {\"id\":\""), { headers: { "content-type": "text/event-stream" } });
      return new Response(endless("{\"id\":\""), { headers: { "content-type": "application/json" } });
    });
  },
});
/** A whole reply, declared as 4,096 bytes. */
const declared = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(JSON.stringify({ pad: "x".repeat(4080) }), { headers: { "content-type": "application/json" } }) });
afterAll(() => {
  upstream.stop(true);
  declared.stop(true);
});

const env = { ALPHA_BASE_URL: `http://127.0.0.1:${upstream.port}/v1`, ALPHA_API_KEY: "sk-endless-upstream-0001", UPSTREAM_RETRIES: "0", UPSTREAM_MAX_BYTES: "1048576" };
const hi = [{ role: "user", content: "hi" }];

test("an endless JSON reply ends in a 502 naming UPSTREAM_MAX_BYTES, on a converted call and a passed-through one", async () => {
  const { json } = testApp(env);
  for (const [path, body] of [["/v1/messages", { model: "gpt-4o", max_tokens: 5, messages: hi }], ["/v1/chat/completions", { model: "gpt-4o", messages: hi }]] as const) {
    const response = await json(path, body);
    expect([path, response.status]).toEqual([path, 502]);
    expect(await response.text()).toContain("UPSTREAM_MAX_BYTES");
  }
});

test("a reply whose declared length is over the limit is refused before it is read", async () => {
  const { json } = testApp({ ...env, ALPHA_BASE_URL: `http://127.0.0.1:${declared.port}/v1`, UPSTREAM_MAX_BYTES: "1024" });
  const response = await json("/v1/chat/completions", { model: "gpt-4o", messages: hi });
  expect(response.status).toBe(502);
  expect(await response.text()).toContain("UPSTREAM_MAX_BYTES (1024 bytes)");
});

test("an endless stream line ends the stream with the dialect's error event naming the limit", async () => {
  const { json } = testApp(env);
  const response = await json("/v1/messages", { model: "gpt-4o", max_tokens: 5, stream: true, messages: hi });
  const text = await response.text();
  // Either the call fails before the answer starts, or the stream ends with an error event.
  expect(response.status === 502 || text.includes("event: error")).toBe(true);
  expect(text).toContain("16 MiB");
}, 60_000);
