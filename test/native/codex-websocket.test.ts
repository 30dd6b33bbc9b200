/**
 * Codex first tries the Responses API over a WebSocket (`GET /v1/responses`, `Upgrade: websocket`):
 * parley answers 426 so it falls back to POST at once (contract 26); a 404 or 405 cost it seven
 * attempts, a 400 made it exit. Keyed, as every /v1 route is.
 */
import { afterAll, expect, test } from "bun:test";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0" });
afterAll(() => gateway.stop());

test("a WebSocket upgrade on /v1/responses is a 426 in OpenAI's error shape, over a real socket too", async () => {
  const upgrade = { connection: "Upgrade", upgrade: "websocket", "sec-websocket-version": "13", "sec-websocket-key": "dGhlIHNhbXBsZSBub25jZQ==" };
  const response = await fetch(`${gateway.listen()}/v1/responses`, { headers: { ...upgrade, authorization: `Bearer ${TEST_KEY}` } });
  expect(response.status).toBe(426);
  expect((await response.json()).error.message).toContain("POST /v1/responses");
  expect(response.headers.get("x-request-id")).toBeTruthy();
});

test("a plain GET is a 405 pointing at POST", async () => {
  const response = await gateway.call("/v1/responses");
  expect(response.status).toBe(405);
});
