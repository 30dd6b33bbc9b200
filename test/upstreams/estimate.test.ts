/**
 * The token estimate (count_tokens without an upstream count, budgets' reservations, `when` input
 * sizes) stays linear in the text: a long run of letters once took 67 s per 100,000, with every
 * other request waiting on the event loop.
 */
import { afterAll, expect, test } from "bun:test";
import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import { inPieces } from "../../src/routing/estimate.ts";
import { startGateway } from "../lib/gateway.ts";

const gateway = await startGateway({ RATE_LIMIT_RPM: "0", API_KEYS: "capped=sk-capped-key-0123456789:chat@1000000tokens/day" });
afterAll(async () => {
  await gateway.app.close();
  await gateway.stop();
});

const letters = (n: number) => Array.from({ length: n }, (_, i) => "qwertyuiopasdfghjklzxcvbnm"[(i * 7919) % 26]).join("");

test("prose and code count exactly as the tokenizer counts them whole", () => {
  const prose = "The quick brown fox jumps over the lazy dog. ".repeat(400);
  const code = "export function add(a: number, b: number): number {\n  return a + b;\n}\n".repeat(200);
  for (const text of [prose, code, "", "short"]) expect(inPieces(text, countTokens)).toBe(countTokens(text));
});

test("a long run is counted in pieces: within 1% of the whole count, and no surrogate pair is cut", () => {
  const run = letters(4096);
  const whole = countTokens(run);
  expect(Math.abs(inPieces(run, countTokens) - whole) / whole).toBeLessThan(0.01);
  const pieces: string[] = [];
  inPieces("😀".repeat(300), (piece) => (pieces.push(piece), countTokens(piece)));
  expect(pieces.length).toBeGreaterThan(1);
  expect(pieces.join("")).toBe("😀".repeat(300));
  expect(pieces.every((piece) => piece.isWellFormed())).toBe(true);
});

test("count_tokens over 150,000 letters in a row answers in a moment (it took minutes)", async () => {
  const body = JSON.stringify({ model: "gpt-4o-mini", messages: [{ role: "user", content: "a".repeat(100_000) + letters(50_000) }] });
  const started = performance.now();
  const answer = await gateway.call("/v1/messages/count_tokens", { method: "POST", body, headers: { "content-type": "application/json", "anthropic-version": "2023-06-01" } });
  expect(answer.status).toBe(200);
  const { input_tokens } = (await answer.json()) as { input_tokens: number };
  // 100,000 a's are 12,500 tokens of eight; the letters about 27,000.
  expect(input_tokens).toBeGreaterThan(35_000);
  expect(input_tokens).toBeLessThan(45_000);
  expect(performance.now() - started).toBeLessThan(15_000);
});

test("a budgeted key's chat of 100,000 letters in a row is reserved for at once, and answered", async () => {
  const answer = await gateway.json("/v1/chat/completions", { model: "gpt-4o-mini", max_tokens: 10, messages: [{ role: "user", content: "b".repeat(100_000) }] }, { key: "sk-capped-key-0123456789" });
  expect(answer.status).toBe(200);
});
