/**
 * Every reply, stream event and error parley writes, checked against the vendors' published schemas
 * (test/schemas: OpenAI's OpenAPI spec, the Anthropic SDK's types). One test is one exchange; it
 * passes when every body or event in it conforms. Native passthrough replies are the upstream's
 * own bytes: they are checked to arrive unaltered, not validated as parley's.
 */
import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { anthropicEvents, anthropicReply, converseEvents, converseReply, thinkingEvents } from "../lib/fake-bedrock.ts";
import { readSse, startGateway } from "../lib/gateway.ts";
import { anthropicRef, eventRef, openaiRef, problems } from "./vendor.ts";

const gateway = await startGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

type Dialect = "chat" | "messages" | "responses";
const PATHS: Record<Dialect, string> = { chat: "/v1/chat/completions", messages: "/v1/messages", responses: "/v1/responses" };
const ANTHROPIC = { "anthropic-version": "2023-06-01" };

const GPT = "gpt-4o-mini";
const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0";
const CONVERSE = "meta.llama3-1-70b-instruct-v1:0";
const TITAN = "amazon.titan-text-express-v1";
const CALL = { id: "call_1", name: "get_weather", args: '{"city":"Paris"}' };
const SCHEMA = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

/** A request in the client's dialect, with the weather tool when `tools`. */
function body(dialect: Dialect, model: string, stream: boolean, tools = false): object {
  switch (dialect) {
    case "chat":
      return {
        model, stream, ...(stream ? { stream_options: { include_usage: true } } : {}), max_tokens: 50,
        messages: [{ role: "user", content: "Weather in Paris?" }],
        ...(tools ? { tools: [{ type: "function", function: { name: CALL.name, description: "Weather", parameters: SCHEMA } }] } : {}),
      };
    case "messages":
      return {
        model, stream, max_tokens: 50, messages: [{ role: "user", content: "Weather in Paris?" }],
        ...(tools ? { tools: [{ name: CALL.name, description: "Weather", input_schema: SCHEMA }] } : {}),
      };
    case "responses":
      return { model, stream, input: "Weather in Paris?", ...(tools ? { tools: [{ type: "function", name: CALL.name, description: "Weather", parameters: SCHEMA }] } : {}) };
  }
}

/** Scripts the fake upstream behind `model` to answer with the tool call. */
function scriptToolCall(model: string, stream: boolean) {
  if (model === GPT) {
    return gateway.openai.next(stream
      ? { kind: "stream", chunks: [], toolCalls: [{ id: CALL.id, name: CALL.name, arguments: ['{"city":', '"Paris"}'] }] }
      : { kind: "reply", toolCalls: [{ id: CALL.id, name: CALL.name, arguments: CALL.args }] });
  }
  if (model === CONVERSE) {
    return gateway.bedrock.next(stream
      ? { kind: "stream", events: converseEvents(["Checking."], { id: CALL.id, name: CALL.name, json: ['{"city":', '"Paris"}'] }) }
      : { kind: "json", body: converseReply([{ text: "Checking." }, { toolUse: { toolUseId: CALL.id, name: CALL.name, input: { city: "Paris" } } }], "tool_use") });
  }
  if (model === CLAUDE || model.startsWith("claude")) {
    return gateway.bedrock.next(stream
      ? { kind: "stream", events: anthropicEvents(["Checking."], { id: CALL.id, name: CALL.name, json: ['{"city":', '"Paris"}'] }) }
      : { kind: "json", body: anthropicReply([{ type: "text", text: "Checking." }, { type: "tool_use", id: CALL.id, name: CALL.name, input: { city: "Paris" } }], "tool_use") });
  }
}

/** What a body or event must conform to, by dialect; `[DONE]` and Anthropic's `ping` have no schema. */
function refFor(dialect: Dialect | "count", status: number, data: any, event?: string): string | undefined | "none" {
  const anthropicSide = dialect === "messages" || dialect === "count";
  if (status >= 400) return anthropicSide ? anthropicRef("ErrorResponse") : openaiRef("ErrorResponse");
  if (dialect === "count") return anthropicRef("MessageTokensCount");
  if (event === undefined && typeof data === "object" && !("__sse" in (data ?? {}))) {
    if (dialect === "chat") return openaiRef("CreateChatCompletionResponse");
    if (dialect === "messages") return anthropicRef("Message");
    return openaiRef("Response");
  }
  return "none";
}

/** Every problem the vendors' schemas find in one exchange's reply (status, body or each event). */
async function check(dialect: Dialect | "count", response: Response): Promise<string[]> {
  const type = response.headers.get("content-type") ?? "";
  if (!type.startsWith("text/event-stream")) {
    const data = await response.json();
    const ref = refFor(dialect, response.status, data)!;
    return problems(ref, data);
  }
  const found: string[] = [];
  for (const [i, { event, data }] of (await readSse(response)).entries()) {
    const at = (list: string[]) => list.map((p) => `event ${i} (${event ?? data?.type ?? "data"}): ${p}`);
    if (dialect === "chat") {
      if (data === "[DONE]") continue;
      found.push(...at(problems(data?.error ? openaiRef("ErrorResponse") : openaiRef("CreateChatCompletionStreamResponse"), data)));
      continue;
    }
    if (event !== data?.type) found.push(...at([`event name ${event} is not the data's type ${data?.type}`]));
    if (dialect === "messages" && data?.type === "ping") continue;
    const ref = eventRef(dialect === "messages" ? "anthropic" : "responses", data?.type);
    found.push(...at(ref ? problems(ref, data) : [`no ${dialect} event has type ${data?.type}`]));
  }
  return found;
}

const send = (dialect: Dialect, payload: object, headers: Record<string, string> = {}) =>
  gateway.json(PATHS[dialect], payload, { headers: dialect === "messages" ? { ...ANTHROPIC, ...headers } : headers });

/** Converted routes: the client's dialect is not the upstream's, so parley writes every byte. */
const CONVERTED: Record<Dialect, [label: string, model: string][]> = {
  chat: [["Bedrock Claude", CLAUDE], ["Bedrock Converse", CONVERSE], ["Bedrock Titan", TITAN], ["mock", "mock"], ["mock/tools", "mock/tools"]],
  messages: [["OpenAI", GPT], ["Bedrock Converse", CONVERSE], ["Bedrock Titan", TITAN], ["mock", "mock"], ["mock/tools", "mock/tools"]],
  responses: [["Bedrock Claude", CLAUDE], ["Bedrock Converse", CONVERSE], ["Bedrock Titan", TITAN], ["mock", "mock"], ["mock/tools", "mock/tools"]],
};
const TOOLS_UPSTREAMS = new Set([GPT, CLAUDE, CONVERSE, "mock/tools"]);

for (const dialect of Object.keys(PATHS) as Dialect[]) {
  describe(`${dialect}: replies and stream events`, () => {
    for (const [label, model] of CONVERTED[dialect]) {
      for (const stream of [false, true]) {
        const kind = stream ? "stream" : "JSON";
        test(`${dialect} client, ${label}: text ${kind}`, async () => {
          const response = await send(dialect, body(dialect, model, stream));
          expect(response.status).toBe(200);
          expect(await check(dialect, response)).toEqual([]);
        });
        if (!TOOLS_UPSTREAMS.has(model)) continue;
        test(`${dialect} client, ${label}: tool call ${kind}`, async () => {
          scriptToolCall(model, stream);
          const response = await send(dialect, body(dialect, model, stream, true));
          expect(response.status).toBe(200);
          expect(await check(dialect, response)).toEqual([]);
        });
      }
    }
  });

  describe(`${dialect}: errors`, () => {
    const model = dialect === "messages" ? GPT : CLAUDE;
    test(`${dialect} client: a wrong key is 401`, async () => {
      const response = await gateway.json(PATHS[dialect], body(dialect, model, false), { key: "sk-wrong", headers: dialect === "messages" ? ANTHROPIC : {} });
      expect(response.status).toBe(401);
      expect(await check(dialect, response)).toEqual([]);
    });
    test(`${dialect} client: an unknown model is 404`, async () => {
      const response = await send(dialect, body(dialect, "no-such-model", false));
      expect(response.status).toBe(404);
      expect(await check(dialect, response)).toEqual([]);
    });
    test(`${dialect} client: a body that is not valid is refused`, async () => {
      const response = await send(dialect, { model, messages: "not a list", input: 42 });
      expect(response.status).toBeOneOf([400, 422]);
      expect(await check(dialect, response)).toEqual([]);
    });
    test(`${dialect} client: an upstream's 429, converted`, async () => {
      if (model === GPT) gateway.openai.next({ kind: "error", status: 429, message: "slow down" });
      else gateway.bedrock.next({ kind: "error", status: 429, type: "ThrottlingException", message: "Too many requests" });
      const response = await send(dialect, body(dialect, model, false));
      expect(response.status).toBe(429);
      expect(await check(dialect, response)).toEqual([]);
    });
    test(`${dialect} client: mock/error-429 fails as an upstream would`, async () => {
      const response = await send(dialect, body(dialect, "mock/error-429", false));
      expect(response.status).toBe(429);
      expect(await check(dialect, response)).toEqual([]);
    });
    test(`${dialect} client: a converted stream that breaks ends with the dialect's error event`, async () => {
      if (model === GPT) gateway.openai.next({ kind: "stream", breakAfter: 4, gapMs: 5 });
      else gateway.bedrock.next({ kind: "stream", events: anthropicEvents(), breakAfter: 4, gapMs: 5 });
      const response = await send(dialect, body(dialect, model, true));
      expect(response.status).toBe(200);
      const problemsFound = await check(dialect, response);
      expect(problemsFound).toEqual([]);
    });
  });
}

describe("a reply cut at max_tokens, converted", () => {
  for (const dialect of Object.keys(PATHS) as Dialect[]) {
    const model = dialect === "messages" ? GPT : CLAUDE;
    for (const stream of [false, true]) {
      test(`${dialect} client: cut at max_tokens, ${stream ? "stream" : "JSON"}`, async () => {
        if (model === GPT) gateway.openai.next(stream ? { kind: "stream", finish: "length" } : { kind: "reply", finish: "length" });
        else if (stream) gateway.bedrock.next({ kind: "stream", events: anthropicEvents().map((e) => (e.type === "message_delta" ? { ...e, delta: { stop_reason: "max_tokens", stop_sequence: null } } : e)) });
        else gateway.bedrock.next({ kind: "json", body: anthropicReply(undefined, "max_tokens") });
        const response = await send(dialect, body(dialect, model, stream));
        expect(response.status).toBe(200);
        expect(await check(dialect, response)).toEqual([]);
      });
    }
  }
});

describe("extended thinking, converted", () => {
  for (const dialect of ["chat", "responses"] as const) {
    test(`${dialect} client, Bedrock Claude: a thinking stream`, async () => {
      gateway.bedrock.next({ kind: "stream", events: thinkingEvents() });
      const response = await send(dialect, body(dialect, CLAUDE, true));
      expect(response.status).toBe(200);
      expect(await check(dialect, response)).toEqual([]);
    });
  }
});

describe("native passthrough: the upstream's own bytes, and parley's error when they break", () => {
  test("chat client, OpenAI: JSON and stream arrive as the upstream sent them", async () => {
    const response = await send("chat", body("chat", GPT, false, true));
    expect(await response.json()).toMatchObject({ id: "chatcmpl-fake123", choices: [{ message: { content: "Hello from OpenAI" } }] });
    const events = await readSse(await send("chat", body("chat", GPT, true)));
    expect(events.at(-1)!.data).toBe("[DONE]");
    expect(events.slice(0, -1).every((e) => e.data.id === "chatcmpl-fake123")).toBe(true);
  });

  test("messages client, Bedrock Claude: a tool_use block comes back as Bedrock wrote it (model renamed only)", async () => {
    scriptToolCall("claude-sonnet-4-5", false);
    const reply = await (await send("messages", body("messages", "claude-sonnet-4-5", false, true))).json();
    expect(reply).toEqual({ ...anthropicReply([{ type: "text", text: "Checking." }, { type: "tool_use", id: CALL.id, name: CALL.name, input: { city: "Paris" } }], "tool_use"), model: "claude-sonnet-4-5" });
    scriptToolCall("claude-sonnet-4-5", true);
    const events = await readSse(await send("messages", body("messages", "claude-sonnet-4-5", true, true)));
    const started = events.find((e) => e.data.content_block?.type === "tool_use")!.data.content_block;
    expect(started).toEqual({ type: "tool_use", id: CALL.id, name: CALL.name, input: {} });
  });

  test("responses client, OpenAI: JSON and stream byte for byte", async () => {
    scriptToolCall(GPT, false);
    expect(await (await send("responses", body("responses", GPT, false, true))).text()).toBe(gateway.openai.sent[0]!);
    scriptToolCall(GPT, true);
    expect(await (await send("responses", body("responses", GPT, true, true))).text()).toBe(gateway.openai.sent[1]!);
  });

  test("chat client, OpenAI: a stream that breaks ends with parley's error chunk", async () => {
    gateway.openai.next({ kind: "stream", breakAfter: 4, gapMs: 5 });
    const response = await send("chat", body("chat", GPT, true));
    expect(await check("chat", response)).toEqual([]);
  });

  test("messages client, Bedrock Claude: a stream that breaks ends with parley's error event", async () => {
    gateway.bedrock.next({ kind: "stream", events: anthropicEvents(), breakAfter: 4, gapMs: 5 });
    const events = await readSse(await send("messages", body("messages", "claude-sonnet-4-5", true)));
    const last = events.at(-1)!;
    expect(last.event).toBe("error");
    expect(problems(anthropicRef("ErrorResponse"), last.data)).toEqual([]);
  });

  test("responses client, OpenAI: a stream that breaks ends with parley's error event", async () => {
    gateway.openai.next({ kind: "stream", breakAfter: 4, gapMs: 5 });
    const events = await readSse(await send("responses", body("responses", GPT, true)));
    const last = events.at(-1)!;
    expect(last.event).toBe("error");
    expect(problems(openaiRef("ResponseErrorEvent"), last.data)).toEqual([]);
  });
});

describe("count_tokens", () => {
  for (const [label, model] of [["Bedrock Claude", "claude-sonnet-4-5"], ["OpenAI", GPT], ["mock", "mock"]] as const) {
    test(`count_tokens, ${label}`, async () => {
      const response = await gateway.json("/v1/messages/count_tokens", { model, messages: [{ role: "user", content: "Hello there" }] }, { headers: ANTHROPIC });
      expect(response.status).toBe(200);
      expect(await check("count", response)).toEqual([]);
    });
  }
  test("count_tokens: a body without messages is refused in Anthropic's envelope", async () => {
    const response = await gateway.json("/v1/messages/count_tokens", { model: GPT }, { headers: ANTHROPIC });
    expect(response.status).toBeOneOf([400, 422]);
    expect(await check("count", response)).toEqual([]);
  });
  test("count_tokens: an unknown model is 404 in Anthropic's envelope", async () => {
    const response = await gateway.json("/v1/messages/count_tokens", { model: "no-such-model", messages: [{ role: "user", content: "Hi" }] }, { headers: ANTHROPIC });
    expect(response.status).toBe(404);
    expect(await check("count", response)).toEqual([]);
  });
});

describe("models", () => {
  const get = (path: string, headers: Record<string, string> = {}) => gateway.call(path, { headers });
  test("OpenAI's list", async () => {
    expect(problems(openaiRef("ListModelsResponse"), await (await get("/v1/models")).json())).toEqual([]);
  });
  test("OpenAI's model object", async () => {
    expect(problems(openaiRef("Model"), await (await get(`/v1/models/${GPT}`)).json())).toEqual([]);
  });
  test("OpenAI's 404 for an unknown model", async () => {
    const response = await get("/v1/models/no-such-model");
    expect(response.status).toBe(404);
    expect(problems(openaiRef("ErrorResponse"), await response.json())).toEqual([]);
  });
  test("Anthropic's list", async () => {
    expect(problems(anthropicRef("ModelInfoPage"), await (await get("/v1/models?limit=5", ANTHROPIC)).json())).toEqual([]);
  });
  test("Anthropic's model object", async () => {
    expect(problems(anthropicRef("ModelInfo"), await (await get("/v1/models/claude-sonnet-4-5-20250929", ANTHROPIC)).json())).toEqual([]);
  });
  test("Anthropic's 404 for an unknown model", async () => {
    const response = await get("/v1/models/no-such-model", ANTHROPIC);
    expect(response.status).toBe(404);
    expect(problems(anthropicRef("ErrorResponse"), await response.json())).toEqual([]);
  });
});

describe("what the fixed fields say", () => {
  test("Responses: function_call_arguments.done names the function; usage counts the tokens written to the cache", async () => {
    const cached = { input_tokens: 10, cache_creation_input_tokens: 200, cache_read_input_tokens: 1000, output_tokens: 5 };
    gateway.bedrock.next({ kind: "json", body: { ...anthropicReply(), usage: cached } });
    const reply = await (await send("responses", body("responses", CLAUDE, false))).json();
    expect(reply.usage.input_tokens_details.cache_write_tokens).toBe(200);

    const events = anthropicEvents(["Checking."], { id: CALL.id, name: CALL.name, json: ['{"city":', '"Paris"}'] });
    events[0] = { ...events[0], message: { ...events[0]!.message, usage: { ...cached, output_tokens: 1 } } };
    gateway.bedrock.next({ kind: "stream", events });
    const streamed = (await readSse(await send("responses", body("responses", CLAUDE, true, true)))).map((e) => e.data);
    expect(streamed.find((e) => e.type === "response.function_call_arguments.done")).toMatchObject({ name: CALL.name, arguments: CALL.args });
    expect(streamed.at(-1).response.usage.input_tokens_details.cache_write_tokens).toBe(200);
  });

  test("Messages: a converted tool_use block says the model called it directly", async () => {
    scriptToolCall(GPT, false);
    const reply = await (await send("messages", body("messages", GPT, false, true))).json();
    expect(reply.content.find((b: any) => b.type === "tool_use")).toEqual({ type: "tool_use", id: CALL.id, name: CALL.name, input: { city: "Paris" }, caller: { type: "direct" } });
  });

  test("Anthropic's model objects say each model is active", async () => {
    const page = await (await gateway.call("/v1/models", { headers: ANTHROPIC })).json();
    expect(page.data.length).toBeGreaterThan(0);
    expect(page.data.every((m: any) => m.lifecycle === "active")).toBe(true);
  });
});
