import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { anthropicEvents, titanEvents } from "../lib/fake-bedrock.ts";
import { readSse, startGateway, TEST_KEY } from "../lib/gateway.ts";

const gateway = await startGateway();
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

const CLAUDE = "anthropic.claude-3-5-sonnet-20241022-v2:0";
const TITAN = "amazon.titan-text-express-v1";
const hello = [{ role: "user", content: "hi" }];
const post = (body: object, target?: string) => gateway.json(`/v1/chat/completions${target ? `?target_format=${target}` : ""}`, body);

async function until(check: () => boolean, ms = 2000) {
  const deadline = Date.now() + ms;
  while (!check() && Date.now() < deadline) await Bun.sleep(10);
  return check();
}

describe("SSE framing", () => {
  test("streams are text/event-stream with no-cache, for passthrough and converted replies", async () => {
    for (const [body, target] of [[{ model: "gpt-4o", stream: true, messages: hello }], [{ model: CLAUDE, stream: true, messages: hello }, "beta_messages"]] as const) {
      const response = await post(body, target);
      expect(response.headers.get("content-type")).toStartWith("text/event-stream");
      expect(response.headers.get("cache-control")).toBe("no-cache");
      await response.text();
    }
  });

  test("the passthrough forwards the upstream's bytes untouched", async () => {
    const response = await post({ model: "gpt-4o", stream: true, messages: hello });
    const text = await response.text();
    expect(text).toContain('"id":"chatcmpl-fake123"');
    expect(text.endsWith("data: [DONE]\n\n")).toBe(true);
  });

  test("usage comes before [DONE] only when stream_options.include_usage is set", async () => {
    const events = await readSse(await post({ model: CLAUDE, stream: true, stream_options: { include_usage: true }, messages: hello }));
    expect(events.at(-2)!.data).toMatchObject({ choices: [], usage: { prompt_tokens: 13, completion_tokens: 5, total_tokens: 18 } });
    const without = await readSse(await post({ model: CLAUDE, stream: true, messages: hello }));
    expect(without.some((e) => e.data.usage)).toBe(false);
  });

  test("every upstream chunk is forwarded as its own event, nothing merged", async () => {
    const texts = Array.from({ length: 40 }, (_, i) => `t${i} `);
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(texts) });
    const events = await readSse(await post({ model: CLAUDE, stream: true, messages: hello }, "beta_messages"));
    expect(events.filter((e) => e.data.delta?.type === "text_delta").map((e) => e.data.delta.text)).toEqual(texts);
    gateway.bedrock.next({ kind: "stream", events: titanEvents(texts) });
    const titan = await readSse(await post({ model: TITAN, stream: true, messages: hello }, "beta_textgen"));
    expect(titan.map((e) => e.data.outputText).filter(Boolean)).toEqual(texts);
  });

  test("the first event reaches the client before the upstream has finished", async () => {
    // The upstream waits 2 s before its second chunk: a gateway that held the stream back could
    // not answer sooner, and one that passes it on answers in milliseconds even on a busy machine.
    // (The cancel below waits for that gap to end.)
    const gapMs = 2000;
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c"], gapMs });
    const started = performance.now();
    const response = await post({ model: "gpt-4o", stream: true, messages: hello }, "beta_messages");
    const reader = response.body!.getReader();
    const { value } = await reader.read();
    expect(typeof value === "string" ? value : new TextDecoder().decode(value)).toContain("message_start");
    expect(performance.now() - started).toBeLessThan(gapMs);
    await reader.cancel();
  });
});

describe("an error after the stream started ends it in the reply's format", () => {
  test("Bedrock exception frame mid-stream -> alpha: data {error}, no [DONE]", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["one", "two"]), exceptionAfter: 3 });
    const events = await readSse(await post({ model: CLAUDE, stream: true, messages: hello }));
    expect(events.at(-1)!.data).toEqual({ error: { type: "service_unavailable_error", message: expect.any(String) } });
    expect(events.some((e) => e.data === "[DONE]")).toBe(false);
    expect(events.some((e) => e.data.choices?.[0]?.delta?.content === "one")).toBe(true);
  });

  test("Bedrock throttling mid-stream -> beta_messages: event: error", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["one"]), exceptionAfter: 2, exception: "throttlingException" });
    const events = await readSse(await post({ model: CLAUDE, stream: true, messages: hello }, "beta_messages"));
    expect(events.at(-1)).toEqual({ event: "error", data: { type: "error", error: { type: "rate_limit_error", message: expect.any(String) } } });
  });

  test("OpenAI error event mid-stream -> beta_textgen: data {error}", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["a", "b"], errorAfter: 2 });
    const events = await readSse(await post({ model: "gpt-4o", stream: true, messages: hello }, "beta_textgen"));
    expect(events.at(-1)!.data.error.type).toBe("service_unavailable_error");
    expect(events[0]!.data.outputText).toBe("a");
  });

  test("a connection cut mid-stream ends the stream with an error event", async () => {
    gateway.openai.next({ kind: "stream", chunks: ["a", "b", "c"], breakAfter: 3, gapMs: 50 });
    const events = await readSse(await post({ model: "gpt-4o", stream: true, messages: hello }, "beta_messages"));
    expect(events[0]!.event).toBe("message_start");
    expect(events.at(-1)!.event).toBe("error");
  });

  test("a stream that stops without a finish is reported, not passed off as complete", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(["a"]).slice(0, 3) });
    const events = await readSse(await post({ model: CLAUDE, stream: true, messages: hello }));
    expect(events.at(-1)!.data.error.message).toContain("ended before the reply was complete");
  });
});

describe("a client that disconnects cancels the upstream at once", () => {
  for (const [name, body, fake] of [
    ["OpenAI passthrough", { model: "gpt-4o", stream: true, messages: hello }, "openai"],
    ["OpenAI converted", { model: "gpt-4o", stream: true, messages: hello, system: "converted" }, "openai"],
    ["Bedrock", { model: CLAUDE, stream: true, messages: hello }, "bedrock"],
  ] as const) {
    test(name, async () => {
      const url = gateway.listen();
      if (fake === "openai") gateway.openai.next({ kind: "stream", chunks: Array.from({ length: 50 }, () => "x"), gapMs: 100 });
      else gateway.bedrock.next({ kind: "stream", events: anthropicEvents(Array.from({ length: 50 }, () => "x")), gapMs: 100 });
      const controller = new AbortController();
      const response = await fetch(`${url}/v1/chat/completions`, {
        method: "POST", signal: controller.signal,
        headers: { authorization: `Bearer ${TEST_KEY}`, "content-type": "application/json" }, body: JSON.stringify(body),
      });
      const reader = response.body!.getReader();
      await reader.read();
      controller.abort();
      const upstream = fake === "openai" ? gateway.openai : gateway.bedrock;
      // A gateway that let the upstream run would see its 50 chunks end after 5 s uncancelled.
      expect(await until(() => upstream.state.cancelled > 0, 4000)).toBe(true);
    });
  }
});

describe("official clients", () => {
  test("the openai client reads a passthrough and a converted stream", async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gateway.listen()}/v1` });
    for (const model of ["gpt-4o", CLAUDE, TITAN, "meta.llama3-1-70b-instruct-v1:0"]) {
      const stream = await client.chat.completions.create({ model, stream: true, stream_options: { include_usage: true }, messages: [{ role: "user", content: "hi" }] });
      let text = "";
      let usage: unknown;
      for await (const chunk of stream) {
        text += chunk.choices[0]?.delta?.content ?? "";
        usage ??= chunk.usage ?? undefined;
      }
      expect(text).toStartWith("Hello from");
      expect(usage).toMatchObject({ total_tokens: expect.any(Number) });
      const reply = await client.chat.completions.create({ model, messages: [{ role: "user", content: "hi" }] });
      expect(reply.choices[0]!.message.content).toStartWith("Hello from");
    }
  });

  test("the openai client sees a gateway error as an APIError with the right status", async () => {
    const client = new OpenAI({ apiKey: TEST_KEY, baseURL: `${gateway.listen()}/v1`, maxRetries: 0 });
    const error = await client.chat.completions.create({ model: "nope-model", messages: [{ role: "user", content: "hi" }] }).catch((e) => e);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
  });

  test("@anthropic-ai/sdk's stream parser accepts the beta_messages stream", async () => {
    const url = gateway.listen();
    const client = new Anthropic({
      apiKey: TEST_KEY,
      baseURL: url,
      fetch: (input, init) => fetch(String(input).replace("/v1/messages", "/v1/chat/completions?target_format=beta_messages"), init),
    });
    for (const model of [CLAUDE, "gpt-4o"]) {
      gateway.openai.next({ kind: "stream", chunks: ["Hello", " from", " OpenAI"], toolCalls: [{ id: "call_1", name: "get_weather", arguments: ['{"city":', '"Oslo"}'] }] });
      const stream = client.messages.stream({ model, max_tokens: 100, messages: [{ role: "user", content: "hi" }] });
      let text = "";
      stream.on("text", (delta) => (text += delta));
      const message = await stream.finalMessage();
      expect(text).toStartWith("Hello from");
      expect(message.usage.output_tokens).toBeGreaterThan(0);
      if (model === "gpt-4o") {
        expect(message.stop_reason).toBe("tool_use");
        expect(message.content.at(-1)).toMatchObject({ type: "tool_use", id: "call_1", name: "get_weather", input: { city: "Oslo" } });
      } else {
        expect(message.stop_reason).toBe("end_turn");
      }
    }
  });
});
