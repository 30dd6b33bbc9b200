/**
 * A coding agent's session as Claude Code sends it to `/v1/messages`: a long system prompt and a
 * dozen tools, a breakpoint on the system prompt and one on the last block, and each turn adding the
 * model's tool call and the tool's result to a growing history. Turn sizes and the pauses between
 * turns come from a seeded generator, so a session is the same every time; a few pauses are longer
 * than a prompt cache lives (the user read the diff, went for coffee).
 */

type Json = Record<string, any>;

/** mulberry32: a small seeded generator. */
export function seeded(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const words = (random: () => number, tokens: number) => Array.from({ length: tokens }, () => `w${Math.floor(random() * 1e6).toString(36)}`).join(" ");

export interface Turn {
  /** Milliseconds since the previous turn. */
  pauseMs: number;
  body: Json;
}

/** The session's turns, each with its whole body; `longPauses`: the share of pauses longer than a cache lives. */
export function agentSession(turns: number, seed: number, model = "claude-sonnet-4-5", longPauses = 0.125): Turn[] {
  const random = seeded(seed);
  const system = [
    { type: "text", text: "You are Claude Code, Anthropic's official CLI for Claude." },
    { type: "text", text: words(random, 2400), cache_control: { type: "ephemeral" } },
  ];
  const tools = Array.from({ length: 12 }, (_, i) => ({ name: `tool_${i}`, description: words(random, 60), input_schema: { type: "object", properties: { arg: { type: "string" } } } }));
  const history: Json[] = [{ role: "user", content: [{ type: "text", text: words(random, 150) }] }];
  const out: Turn[] = [];
  for (let n = 0; n < turns; n++) {
    if (n > 0) {
      const id = `toolu_${seed}_${n}`;
      history.push({ role: "assistant", content: [{ type: "text", text: words(random, 40 + Math.floor(random() * 200)) }, { type: "tool_use", id, name: `tool_${n % 12}`, input: { arg: words(random, 8) } }] });
      history.push({ role: "user", content: [{ type: "tool_result", tool_use_id: id, content: words(random, 100 + Math.floor(random() * 1500)) }] });
    }
    // Claude Code marks the last block of the last message; earlier marks are dropped as it moves on.
    const messages = history.map((m, i) => (i === history.length - 1 ? { ...m, content: m.content.map((b: Json, j: number) => (j === m.content.length - 1 ? { ...b, cache_control: { type: "ephemeral" } } : b)) } : m));
    // Mostly seconds apart; one turn in eight after a pause longer than the cache lives.
    const pauseMs = n === 0 ? 0 : random() < longPauses ? 330_000 + random() * 300_000 : 3_000 + random() * 60_000;
    out.push({ pauseMs, body: { model, max_tokens: 1024, system, tools, messages } });
  }
  return out;
}
