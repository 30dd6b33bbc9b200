import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { expectAnthropicSequence } from "../lib/anthropic-sequence.ts";
import { readSse, startGateway, type SseMessage } from "../lib/gateway.ts";

const gateway = await startGateway();
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

type Input = "alpha" | "beta_messages" | "beta_textgen";
type Output = Input;

const INPUTS: Record<Input, (model: string, stream: boolean) => object> = {
  alpha: (model, stream) => ({
    model, max_tokens: 50, stream, ...(stream ? { stream_options: { include_usage: true } } : {}),
    messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }],
  }),
  beta_messages: (model, stream) => ({
    anthropic_version: "bedrock-2023-05-31", model, max_tokens: 50, stream, system: "Be brief.",
    messages: [{ role: "user", content: [{ type: "text", text: "Say hello" }] }],
  }),
  beta_textgen: (model, stream) => ({ model, stream, inputText: "Be brief.\n\nUser: Say hello\nBot:", textGenerationConfig: { maxTokenCount: 50 } }),
};

const UPSTREAMS = {
  openai: { model: "gpt-4o-mini", text: "Hello from OpenAI", usage: [11, 7] },
  "bedrock-anthropic": { model: "anthropic.claude-3-5-haiku-20241022-v1:0", text: "Hello from Claude", usage: [13, 5] },
  "bedrock-titan": { model: "amazon.titan-text-express-v1", text: "Hello from Titan", usage: [9, 4] },
  "bedrock-converse": { model: "meta.llama3-1-70b-instruct-v1:0", text: "Hello from Converse", usage: [15, 6] },
} as const;
type Upstream = keyof typeof UPSTREAMS;

const STOP: Record<Output, string> = { alpha: "stop", beta_messages: "end_turn", beta_textgen: "FINISH" };

interface Seen {
  text: string;
  finish: string;
  usage?: [number, number];
  model?: string;
}

function readJson(output: Output, body: any): Seen {
  switch (output) {
    case "alpha":
      return { text: body.choices[0].message.content, finish: body.choices[0].finish_reason, usage: [body.usage.prompt_tokens, body.usage.completion_tokens], model: body.model };
    case "beta_messages":
      expect(body.type).toBe("message");
      expect(body.id).toStartWith("msg_");
      return { text: body.content.map((b: any) => b.text).join(""), finish: body.stop_reason, usage: [body.usage.input_tokens, body.usage.output_tokens], model: body.model };
    case "beta_textgen":
      return { text: body.results[0].outputText, finish: body.results[0].completionReason, usage: [body.inputTextTokenCount, body.results[0].tokenCount] };
  }
}

function readStream(output: Output, events: SseMessage[]): Seen {
  switch (output) {
    case "alpha": {
      expect(events.at(-1)!.data).toBe("[DONE]");
      const chunks = events.slice(0, -1).map((e) => e.data);
      expect(chunks[0].choices[0].delta).toEqual({ role: "assistant", content: "" });
      for (const c of chunks) expect(c.object).toBe("chat.completion.chunk");
      const finishes = chunks.flatMap((c) => c.choices.map((ch: any) => ch.finish_reason)).filter(Boolean);
      const usage = chunks.find((c) => c.usage)?.usage;
      return {
        text: chunks.map((c) => c.choices[0]?.delta?.content ?? "").join(""),
        finish: finishes.at(-1),
        usage: usage ? [usage.prompt_tokens, usage.completion_tokens] : undefined,
        model: chunks[0].model,
      };
    }
    case "beta_messages": {
      expectAnthropicSequence(events);
      const start = events[0]!.data.message;
      const delta = events.find((e) => e.event === "message_delta")!.data;
      return {
        text: events.filter((e) => e.data.delta?.type === "text_delta").map((e) => e.data.delta.text).join(""),
        finish: delta.delta.stop_reason,
        usage: [delta.usage.input_tokens ?? start.usage.input_tokens, delta.usage.output_tokens],
        model: start.model,
      };
    }
    case "beta_textgen": {
      const chunks = events.map((e) => e.data);
      const last = chunks.at(-1)!;
      for (const c of chunks.slice(0, -1)) expect(c.completionReason).toBeNull();
      return { text: chunks.map((c) => c.outputText).join(""), finish: last.completionReason, usage: [last.inputTextTokenCount, last.totalOutputTextTokenCount] };
    }
  }
}

function expectUpstreamRequest(upstream: Upstream, stream: boolean, input: Input, output: Output) {
  const { model } = UPSTREAMS[upstream];
  if (upstream === "openai") {
    expect(gateway.bedrock.received).toHaveLength(0);
    const sent = gateway.openai.last();
    expect(sent.headers.get("authorization")).toBe("Bearer sk-upstream-openai-key");
    expect(sent.body.model).toBe(model);
    expect(sent.body.messages).toEqual([{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }]);
    expect(sent.body.max_tokens).toBe(50);
    expect(!!sent.body.stream).toBe(stream);
    if (input === "alpha" && output === "alpha") expect(sent.raw).toBe(JSON.stringify(INPUTS.alpha(model, stream)));
    return;
  }
  expect(gateway.openai.received).toHaveLength(0);
  const sent = gateway.bedrock.last();
  expect(sent.modelId).toBe(model);
  expect(sent.headers.get("authorization")).toStartWith("AWS4-HMAC-SHA256 Credential=AKIAFAKEFAKEFAKE/");
  if (upstream === "bedrock-converse") {
    expect(sent.action).toBe(stream ? "converse-stream" : "converse");
    expect(sent.body).toMatchObject({ system: [{ text: "Be brief." }], messages: [{ role: "user", content: [{ text: "Say hello" }] }], inferenceConfig: { maxTokens: 50 } });
    return;
  }
  expect(sent.action).toBe(stream ? "invoke-with-response-stream" : "invoke");
  if (upstream === "bedrock-anthropic") {
    expect(sent.body).toEqual({
      anthropic_version: "bedrock-2023-05-31", max_tokens: 50, system: "Be brief.",
      messages: [{ role: "user", content: [{ type: "text", text: "Say hello" }] }],
    });
  } else {
    expect(sent.body).toEqual({ inputText: "Be brief.\n\nUser: Say hello\nBot:", textGenerationConfig: { maxTokenCount: 50 } });
  }
}

describe("every input format x upstream x reply format, streamed and not", () => {
  for (const input of Object.keys(INPUTS) as Input[]) {
    for (const upstream of Object.keys(UPSTREAMS) as Upstream[]) {
      for (const output of Object.keys(STOP) as Output[]) {
        for (const stream of [false, true]) {
          test(`${input} -> ${upstream} -> ${output}${stream ? " (stream)" : ""}`, async () => {
            const { model, text, usage } = UPSTREAMS[upstream];
            const query = output === "alpha" ? "" : `?target_format=${output}`;
            const response = await gateway.json(`/v1/chat/completions${query}`, INPUTS[input](model, stream));
            expect(response.status).toBe(200);
            expect(response.headers.get("content-type")).toStartWith(stream ? "text/event-stream" : "application/json");
            const seen = stream ? readStream(output, await readSse(response)) : readJson(output, await response.json());
            expect(seen.text).toBe(text);
            expect(seen.finish).toBe(STOP[output]);
            const usageVisible = !(stream && output === "alpha" && input !== "alpha");
            if (usageVisible) expect(seen.usage).toEqual([...usage]);
            else expect(seen.usage).toBeUndefined();
            if (seen.model !== undefined) expect(seen.model).toBe(model);
            expectUpstreamRequest(upstream, stream, input, output);
          });
        }
      }
    }
  }
});
