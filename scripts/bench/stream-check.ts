import { median } from "./measure.ts";

const CLAUDE = "anthropic.claude-3-5-haiku-20241022-v1:0";

interface Stream {
  name: string;
  url: string;
  body: string;
  headers: Record<string, string>;
  marker: string;
  /** Which direct call this one is compared with. */
  direct?: string;
  /** AWS event-stream frames (a direct Bedrock call), not SSE text. */
  frames?: true;
}

/**
 * Streams against the paced upstream (20 ms to the first token, 50 chunks 2 ms apart): the time to
 * the first token parley adds over a direct call, and that every chunk arrives (none lost or merged).
 * Endpoints parley answers with a 404 are left out.
 */
export async function streamCheck(upstream: string, parley: string, headers: Record<string, string>, anthropicHeaders: Record<string, string>, rounds: number) {
  const chat = JSON.stringify({ model: "gpt-4o-mini-paced", stream: true, messages: [{ role: "user", content: "Count" }] });
  const responses = JSON.stringify({ model: "gpt-4o-mini-paced", stream: true, input: "Count" });
  const messages = JSON.stringify({ model: CLAUDE, stream: true, max_tokens: 50, messages: [{ role: "user", content: "Count -paced" }] });
  const invoke = JSON.stringify({ anthropic_version: "bedrock-2023-05-31", max_tokens: 50, messages: [{ role: "user", content: "Count -paced" }] });
  const candidates: Stream[] = [
    { name: "direct", url: `${upstream}/v1/chat/completions`, body: chat, headers, marker: '"content":"tok' },
    { name: "passthrough", url: `${parley}/v1/chat/completions`, body: chat, headers, marker: '"content":"tok', direct: "direct" },
    { name: "converted", url: `${parley}/v1/chat/completions?target_format=beta_messages`, body: chat, headers, marker: '"text_delta","text":"tok', direct: "direct" },
    { name: "responses direct", url: `${upstream}/v1/responses`, body: responses, headers, marker: '"delta":"tok' },
    { name: "responses passthrough", url: `${parley}/v1/responses`, body: responses, headers, marker: '"delta":"tok', direct: "responses direct" },
    { name: "bedrock direct", url: `${upstream}/model/${encodeURIComponent(CLAUDE)}/invoke-with-response-stream`, body: invoke, headers, marker: '"text_delta","text":"tok', frames: true },
    { name: "messages -> bedrock", url: `${parley}/v1/messages`, body: messages, headers: anthropicHeaders, marker: '"text_delta","text":"tok', direct: "bedrock direct" },
  ];
  const streams: Stream[] = [];
  for (const s of candidates) {
    const status = await fetch(s.url, { method: "POST", body: s.body, headers: s.headers }).then(async (r) => (await r.arrayBuffer(), r.status));
    if (status !== 404) streams.push(s);
  }
  const ttft = new Map<string, number[]>(streams.map((s) => [s.name, []]));
  const chunks: Record<string, number> = {};
  for (let i = 0; i < rounds; i++) {
    for (const s of streams) {
      const { first, n } = await (s.frames ? framesOnce(s) : sseOnce(s));
      ttft.get(s.name)!.push(first);
      chunks[s.name] = n;
    }
  }
  const ttftMs = Object.fromEntries([...ttft].map(([k, v]) => [k, median(v)]));
  const compared = streams.filter((s) => s.direct).map((s) => ({
    name: s.name, direct: s.direct!, added_ms: ttftMs[s.name]! - ttftMs[s.direct!]!, chunks: chunks[s.name]!, direct_chunks: chunks[s.direct!]!,
  }));
  return { ttft_ms: ttftMs, chunks, compared };
}

async function sseOnce(s: Stream) {
  const started = performance.now();
  const response = await fetch(s.url, { method: "POST", body: s.body, headers: s.headers });
  let first = Number.NaN;
  let text = "";
  const decoder = new TextDecoder();
  for await (const part of response.body!) {
    text += decoder.decode(part, { stream: true });
    if (Number.isNaN(first) && text.includes(s.marker)) first = performance.now() - started;
  }
  return { first, n: text.split(s.marker).length - 1 };
}

/** A direct Bedrock stream: AWS event-stream frames, each a base64 chunk of the model's JSON. */
async function framesOnce(s: Stream) {
  const started = performance.now();
  const response = await fetch(s.url, { method: "POST", body: s.body, headers: s.headers });
  let first = Number.NaN;
  let n = 0;
  let buffer = Buffer.alloc(0);
  for await (const part of response.body!) {
    buffer = Buffer.concat([buffer, part]);
    while (buffer.length >= 4 && buffer.readUInt32BE(0) <= buffer.length) {
      const length = buffer.readUInt32BE(0);
      const frame = buffer.subarray(0, length);
      buffer = buffer.subarray(length);
      // Prelude (12 bytes) and headers, then the payload, then a 4-byte CRC.
      const payload = frame.subarray(12 + frame.readUInt32BE(4), length - 4).toString();
      const bytes = /"bytes":"([^"]+)"/.exec(payload)?.[1];
      if (!bytes || !Buffer.from(bytes, "base64").toString().includes(s.marker)) continue;
      n++;
      if (Number.isNaN(first)) first = performance.now() - started;
    }
  }
  return { first, n };
}
