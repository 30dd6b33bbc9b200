import type { Json } from "../../lib/read.ts";
import type { ChatRequest } from "../../ir.ts";

/** The shortest prompt Claude caches (Sonnet, Opus: 1024 tokens); shorter ones are not worth a breakpoint. */
const MIN_TOKENS = 1024;
/** Characters per token, as an estimate that errs long: a request just under is left as it is. */
const CHARS_PER_TOKEN = 4;
const EPHEMERAL = { type: "ephemeral" };

/** Whether the client marked anything to cache (then nothing is added: contract 22). */
export const hasCacheMarks = (request: ChatRequest): boolean =>
  request.systemCache !== undefined || request.messages.some((m) => m.content.some((p) => (p.type === "text" || p.type === "tool_result") && p.cache !== undefined));

/**
 * Automatic breakpoints on a long request converted to Anthropic (contract 22): on the last tool,
 * the system prompt and the last user turn, so that an agent's next turn reads its prefix from the
 * cache at a tenth of the price (this turn writes it at 1.25x). Only for a client whose dialect
 * cannot mark them (`autoCache`), that marked nothing, and whose input is about 1024 tokens or more.
 */
export function addBreakpoints(body: Json, request: ChatRequest): void {
  if (!request.autoCache || hasCacheMarks(request) || !longEnough(body)) return;
  const tools = body.tools as Json[] | undefined;
  const lastTool = tools?.at(-1);
  if (lastTool) tools![tools!.length - 1] = { ...lastTool, cache_control: EPHEMERAL };
  if (typeof body.system === "string") body.system = [{ type: "text", text: body.system, cache_control: EPHEMERAL }];
  const messages = body.messages as { role: string; content: Json[] }[];
  const lastUser = messages.findLast((m) => m.role === "user");
  const block = lastUser?.content.at(-1);
  if (block && block.type !== "thinking" && block.type !== "redacted_thinking") lastUser!.content[lastUser!.content.length - 1] = { ...block, cache_control: EPHEMERAL };
}

/** The body's text, counted up to the threshold and no further. */
function longEnough(body: Json): boolean {
  const enough = MIN_TOKENS * CHARS_PER_TOKEN;
  let chars = typeof body.system === "string" ? body.system.length : 0;
  if (chars >= enough) return true;
  for (const tool of (body.tools as Json[] | undefined) ?? []) {
    chars += JSON.stringify(tool).length;
    if (chars >= enough) return true;
  }
  for (const message of body.messages as { content: Json[] }[]) {
    for (const block of message.content) {
      chars += typeof block.text === "string" ? block.text.length : typeof block.content === "string" ? block.content.length : block.type === "tool_use" ? JSON.stringify(block.input).length : 0;
      if (chars >= enough) return true;
    }
  }
  return false;
}
