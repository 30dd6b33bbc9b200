import { median } from "./measure.ts";

/**
 * Streams against the paced upstream (20 ms to the first token, 50 chunks 2 ms apart): the time to
 * the first token parley adds over a direct call, and that every chunk arrives (none lost or merged).
 */
export async function streamCheck(upstream: string, parley: string, headers: Record<string, string>, rounds: number) {
  const body = JSON.stringify({ model: "gpt-4o-mini-paced", stream: true, messages: [{ role: "user", content: "Count" }] });
  const streams = [
    { name: "direct", url: `${upstream}/v1/chat/completions`, marker: '"content":"tok' },
    { name: "passthrough", url: `${parley}/v1/chat/completions`, marker: '"content":"tok' },
    { name: "converted", url: `${parley}/v1/chat/completions?target_format=beta_messages`, marker: '"text_delta","text":"tok' },
  ];
  const ttft: Record<string, number[]> = { direct: [], passthrough: [], converted: [] };
  const chunks: Record<string, number> = {};
  for (let i = 0; i < rounds; i++) {
    for (const s of streams) {
      const started = performance.now();
      const response = await fetch(s.url, { method: "POST", body, headers });
      let first = Number.NaN;
      let text = "";
      const decoder = new TextDecoder();
      for await (const part of response.body!) {
        text += decoder.decode(part, { stream: true });
        if (Number.isNaN(first) && text.includes(s.marker)) first = performance.now() - started;
      }
      ttft[s.name]!.push(first);
      chunks[s.name] = text.split(s.marker).length - 1;
    }
  }
  return { ttft_ms: Object.fromEntries(Object.entries(ttft).map(([k, v]) => [k, median(v)])), chunks };
}
