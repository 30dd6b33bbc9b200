import type { Rng } from "./values.ts";

/** Valid request bodies of every dialect: the fuzz starts from these and breaks them. */

export type BodyKind = "alpha" | "beta_messages" | "beta_textgen" | "messages" | "count_tokens" | "responses" | "gemini";

const PNG = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const weatherSchema = { type: "object", properties: { city: { type: "string" } }, required: ["city"] };

export function seedBody(r: Rng, kind: BodyKind, model: string, stream: boolean): Record<string, unknown> {
  switch (kind) {
    case "alpha":
      return r.pick([
        () => ({ model, stream, messages: [{ role: "system", content: "Be brief." }, { role: "user", content: "Say hello" }], max_tokens: 50, temperature: 0.5 }),
        () => ({
          model, stream, tool_choice: "auto", stream_options: { include_usage: true },
          tools: [{ type: "function", function: { name: "get_weather", description: "Weather", parameters: weatherSchema } }],
          messages: [
            { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image_url", image_url: { url: PNG } }] },
            { role: "assistant", content: null, tool_calls: [{ id: "call_1", type: "function", function: { name: "get_weather", arguments: '{"city":"Oslo"}' } }] },
            { role: "tool", tool_call_id: "call_1", content: "sunny" },
          ],
        }),
      ])();
    case "beta_messages":
      return { anthropic_version: "bedrock-2023-05-31", ...messagesBody(r, model, stream) };
    case "messages":
      return messagesBody(r, model, stream);
    case "count_tokens": {
      const { stream: _, max_tokens: __, ...rest } = messagesBody(r, model, false);
      return rest;
    }
    case "beta_textgen":
      return { model, stream, inputText: "User: Say hello\nBot:", textGenerationConfig: { maxTokenCount: 50, temperature: 0.5, topP: 0.9, stopSequences: ["User:"] } };
    case "gemini":
      // The model and whether to stream are in the URL.
      return r.pick([
        () => ({ contents: [{ role: "user", parts: [{ text: "Say hello" }] }], generationConfig: { maxOutputTokens: 50, temperature: 0.5 } }),
        () => ({
          systemInstruction: { parts: [{ text: "Be brief." }] },
          tools: [{ functionDeclarations: [{ name: "get_weather", description: "Weather", parameters: weatherSchema }] }],
          toolConfig: { functionCallingConfig: { mode: "AUTO" } },
          contents: [
            { role: "user", parts: [{ text: "Weather?" }, { inlineData: { mimeType: "image/png", data: PNG.slice(PNG.indexOf(",") + 1) } }] },
            { role: "model", parts: [{ functionCall: { id: "call_1", name: "get_weather", args: { city: "Oslo" } }, thoughtSignature: "c2ln" }] },
            { role: "user", parts: [{ functionResponse: { id: "call_1", name: "get_weather", response: { result: "sunny" } } }] },
          ],
        }),
      ])();
    case "responses":
      return r.pick([
        () => ({ model, stream, input: "Say hello" }),
        () => ({
          model, stream, instructions: "Be brief.",
          tools: [{ type: "function", name: "get_weather", parameters: weatherSchema }],
          input: [
            { type: "message", role: "user", content: [{ type: "input_text", text: "Weather?" }] },
            { type: "function_call", call_id: "call_1", name: "get_weather", arguments: '{"city":"Oslo"}' },
            { type: "function_call_output", call_id: "call_1", output: "sunny" },
          ],
        }),
      ])();
  }
}

function messagesBody(r: Rng, model: string, stream: boolean): Record<string, unknown> {
  return r.pick([
    () => ({ model, stream, max_tokens: 50, system: "Be brief.", messages: [{ role: "user", content: "Say hello" }] }),
    () => ({
      model, stream, max_tokens: 50, top_k: 5, stop_sequences: ["\n\nHuman:"],
      tools: [{ name: "get_weather", description: "Weather", input_schema: weatherSchema }], tool_choice: { type: "auto" },
      messages: [
        { role: "user", content: [{ type: "text", text: "Weather?" }, { type: "image", source: { type: "base64", media_type: "image/png", data: PNG.split(",")[1] } }] },
        { role: "assistant", content: [{ type: "tool_use", id: "toolu_1", name: "get_weather", input: { city: "Oslo" } }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "sunny" }] },
      ],
    }),
  ])();
}

/** Bodies that are not JSON objects, or not JSON at all. */
export function brokenJson(r: Rng): { label: string; body: string | Uint8Array } {
  const cases: [string, () => string | Uint8Array][] = [
    ["empty", () => ""],
    ["whitespace", () => " \n\t "],
    ["truncated", () => '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi'],
    ["trailing garbage", () => '{"model":"gpt-4o-mini","messages":[]}}}xyz'],
    ["single quotes", () => "{'model':'gpt-4o-mini'}"],
    ["NaN", () => '{"model":"gpt-4o-mini","temperature":NaN,"messages":[{"role":"user","content":"hi"}]}'],
    ["big number", () => '{"model":"gpt-4o-mini","max_tokens":1e400,"messages":[{"role":"user","content":"hi"}]}'],
    ["BOM", () => '\ufeff{"model":"gpt-4o-mini","messages":[{"role":"user","content":"hi"}]}'],
    ["invalid utf-8", () => new Uint8Array([0x7b, 0x22, 0x6d, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0xc0, 0x80, 0x22, 0x7d])],
    ["NUL bytes", () => '{"model":"gpt-4o-mini\u0000","messages":[{"role":"user","content":"a\u0000b"}]}'],
    ["lone surrogate escape", () => '{"model":"\\ud800","messages":[{"role":"user","content":"\\udfff\\ud800"}]}'],
    ["array", () => '[{"model":"gpt-4o-mini"}]'],
    ["string", () => '"hello"'],
    ["number", () => "42"],
    ["null", () => "null"],
    ["true", () => "true"],
    ["duplicate keys", () => '{"model":"gpt-4o-mini","model":{"x":1},"messages":[{"role":"user","content":"hi"}],"messages":7}'],
    ["__proto__ key", () => '{"__proto__":{"stream":true,"model":"gpt-4o-mini"},"messages":[{"role":"user","content":"hi"}]}'],
    ["constructor key", () => '{"constructor":{"prototype":{"polluted":1}},"model":"mock","messages":[{"role":"user","content":"hi"}]}'],
    ["deep array 10k", () => `{"model":"mock","messages":[{"role":"user","content":${"[".repeat(10_000)}${"]".repeat(10_000)}}]}`],
    ["deep object 10k", () => `{"model":"mock","messages":[{"role":"user","content":"hi"}],"metadata":${'{"a":'.repeat(10_000)}1${"}".repeat(10_000)}}`],
    ["deep array 100k", () => "[".repeat(100_000) + "]".repeat(100_000)],
    ["deep unclosed", () => '{"a":'.repeat(50_000)],
    // Contract 25: deeper than 512 levels is a 400, never a converter's stack overflow (a 500).
    ["deep tool schema 1M", () => `{"model":"anthropic.claude-3-5-haiku-20241022-v1:0","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{"x":${"[".repeat(1_000_000)}${"]".repeat(1_000_000)}}}}}]}`],
    ["deep 513", () => `{"model":"mock","messages":[{"role":"user","content":"hi"}],"metadata":${"[".repeat(513)}${"]".repeat(513)}}`],
    ["comment", () => '{"model":"gpt-4o-mini" /* hi */}'],
    ["form-encoded", () => "model=gpt-4o-mini&messages=hi"],
    ["xml", () => "<?xml version='1.0'?><model>gpt</model>"],
  ];
  const [label, make] = r.pick(cases);
  return { label, body: make() };
}
