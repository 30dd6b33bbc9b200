import { expect, test } from "bun:test";
import type { HarEntry } from "../../src/cassettes/har.ts";
import { callOf } from "../../src/cassettes/match.ts";
import { miss } from "../../src/cassettes/miss.ts";

const URL = "http://127.0.0.1:1/v1/chat/completions";
const body = (content: string) => JSON.stringify({ model: "gpt-4o", messages: [{ role: "user", content }] });
const entry = (content: string) => ({ _upstream: "alpha", _kind: "openai", request: { method: "POST", url: URL, postData: { mimeType: "application/json", text: body(content) } } }) as unknown as HarEntry;

test("a miss names the recording nearest the call: of those as far apart, the one whose prompt was edited", () => {
  const entries = [entry("Tell me a joke"), entry("What is 2+2?"), entry("Name a colour")];
  const error = miss("cassettes/default.har", entries, callOf("alpha", "openai", "POST", URL, body("What is 2+3?")));
  expect(error.status).toBe(404);
  expect(error.message).toContain('differs at messages[0].content (sent "What is 2+3?", recorded "What is 2+2?")');
});
