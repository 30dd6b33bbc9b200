import { expect, test } from "bun:test";
import { anthropic } from "../../src/wire/anthropic/codec.ts";
import { loadTokenizer } from "../../src/routing/estimate.ts";
import { compile, conditions, type Facts, type When } from "../../src/routing/when.ts";

/**
 * The router tests a `when` as one compiled function; `parley routes explain` reads its conditions
 * one by one. Over every mix of the request's facts, both must say the same, or explain would
 * tell a user a route held when it was passed over.
 */
test("the router's test of a when and explain's conditions agree on every request", async () => {
  await loadTokenizer();
  const whens: When[] = [
    { stream: true }, { stream: false }, { tools: true }, { thinking: true, tools: false }, { images: true }, { images: false },
    { endpoint: "/v1/messages" }, { endpoint: "/v1/*" }, { key: "team-*" }, { key: "main" },
    { header: { "user-agent": "claude-cli/*" } }, { header: { "user-agent": "*cli*", "x-team": "blue" } },
    { input_tokens_over: 20 }, { input_tokens_over: 20, thinking: true, stream: true, header: { "x-team": "*" } },
  ];
  const long = "the quick brown fox ".repeat(10);
  const bodies = [false, true].flatMap((stream) => [false, true].flatMap((thinking) => [false, true].flatMap((tools) => [false, true].flatMap((image) => ["hi", long].map((text) => ({
    model: "m", max_tokens: 4096, stream, messages: [{ role: "user", content: image ? [{ type: "text", text }, { type: "image", source: { type: "base64", media_type: "image/png", data: "AA==" } }] : text }],
    ...(thinking ? { thinking: { type: "enabled", budget_tokens: 1024 } } : {}),
    ...(tools ? { tools: [{ name: "f", input_schema: { type: "object" } }] } : {}),
  }))))));
  const callers = [
    { endpoint: "/v1/messages", key: "main", headers: new Headers({ "user-agent": "claude-cli/2.0.0" }) },
    { endpoint: "/v1/chat/completions", key: "team-a", headers: new Headers({ "user-agent": "codex_cli_rs/0.40", "x-team": "blue" }) },
    {},
  ];
  let held = 0;
  let checked = 0;
  for (const body of bodies) {
    const request = anthropic.decodeRequest(body);
    for (const caller of callers) {
      for (const when of whens) {
        const router = compile(when)({ request, ...caller } as Facts);
        const explained = conditions(when).every((c) => c.holds({ request, ...caller } as Facts));
        expect({ when, body, caller: Object.keys(caller), router }).toEqual({ when, body, caller: Object.keys(caller), router: explained });
        if (router) held++;
        checked++;
      }
    }
  }
  // Both outcomes were seen plenty.
  expect(held).toBeGreaterThan(checked / 5);
  expect(held).toBeLessThan((checked * 4) / 5);
});
