import { agentSession, type Turn } from "../lib/agent-session.ts";
import { testApp } from "../lib/app.ts";
import { FAKE_ANTHROPIC_KEY, startFakeAnthropic } from "../lib/fake-anthropic.ts";
import { startFakeBedrock } from "../lib/fake-bedrock.ts";
import { promptCache, type PromptCache } from "../lib/prompt-cache.ts";
import { EU, US, writeToml } from "../upstreams/fleet.ts";

/** The fakes' clock: a session's pauses pass on it at once. */
export const clock = { now: 1_000_000_000_000 };
const now = () => clock.now;

/**
 * Two Anthropic API keys and two Bedrock accounts, each a fake with its own prompt cache, and two
 * weighted 1:1 routes over them: `claude-*` to the Anthropic pair, `bedrock-*` to the Bedrock pair;
 * `ordered-*` to the Anthropic pair in order.
 */
export async function startCaches() {
  const [a1, a2, us, eu] = await Promise.all([startFakeAnthropic(), startFakeAnthropic(), startFakeBedrock(US), startFakeBedrock(EU)]);
  const caches = { a1: promptCache(now), a2: promptCache(now), us: promptCache(now), eu: promptCache(now) };
  a1.cache.reply = caches.a1.message;
  a2.cache.reply = caches.a2.message;
  us.cache.reply = caches.us.message;
  eu.cache.reply = caches.eu.message;
  const fakes = { a1, a2, us, eu };
  return {
    fakes,
    caches,
    reset() {
      for (const f of Object.values(fakes)) f.reset();
      for (const c of Object.values(caches)) c.reset();
    },
    stop: () => Object.values(fakes).forEach((f) => f.stop()),
  };
}

export type Caches = Awaited<ReturnType<typeof startCaches>>;

/** The file: the four upstreams, and routes whose session keys are `keys` (`affinity = "none"`, …). */
export function cachesToml({ fakes }: Caches, keys = ""): string {
  const anthropic = (name: string, url: string) => `[upstreams.${name}]\nkind = "anthropic"\napi_key = "${FAKE_ANTHROPIC_KEY}"\nbase_url = "${url}"\ndiscover = false\n`;
  const bedrock = (name: string, account: typeof US, url: string) =>
    `[upstreams.${name}]\nkind = "bedrock"\nregion = "${account.region}"\naccess_key_id = "${account.accessKeyId}"\nsecret_access_key = "${account.secretAccessKey}"\nendpoint_url = "${url}"\ndiscover = false\n`;
  return `${anthropic("key-one", fakes.a1.url)}
${anthropic("key-two", fakes.a2.url)}
${bedrock("account-us", US, fakes.us.url)}
${bedrock("account-eu", EU, fakes.eu.url)}
[[routes]]
name = "claude-pair"
match = "claude-*"
to = [{ upstream = "key-one", weight = 1 }, { upstream = "key-two", weight = 1 }]
${keys}

[[routes]]
name = "bedrock-pair"
match = "bedrock-*"
model = "claude-sonnet-4-5"
to = [{ upstream = "account-us", weight = 1 }, { upstream = "account-eu", weight = 1 }]
${keys}

[[routes]]
name = "claude-ordered"
match = "ordered-*"
model = "claude-sonnet-4-5"
to = ["key-one", "key-two"]
`;
}

/** parley in process over the fakes. */
export function cachesApp(caches: Caches, keys = "", env: Record<string, string> = {}) {
  const { file } = writeToml(cachesToml(caches, keys));
  return testApp({ PARLEY_UPSTREAMS: file, UPSTREAM_COOLDOWN_S: "0", RATE_LIMIT_RPM: "0", ...env });
}

/** What a session's turns read from one upstream's cache that was theirs alone: the best any routing can do. */
export function alone(turns: Turn[]): number {
  let at = 0;
  const single = promptCache(() => at);
  for (const turn of turns) {
    at += turn.pauseMs;
    single.usage(turn.body);
  }
  return single.totals.read;
}

/** The cache tokens a session reads in all, over the caches given. */
export const readOf = (caches: PromptCache[]) => caches.reduce((sum, c) => sum + c.totals.read, 0);

/**
 * Plays a session through parley: each turn after its pause (on the fakes' clock), as Claude Code
 * sends it, with its session header. Returns the upstream and `x-parley-session-target` of each turn.
 */
export async function play(json: ReturnType<typeof testApp>["json"], turns: Turn[], session: string, model?: string) {
  const seen: { upstream: string | null; target: string | null; status: number }[] = [];
  for (const turn of turns) {
    clock.now += turn.pauseMs;
    const body = model ? { ...turn.body, model } : turn.body;
    const response = await json("/v1/messages", body, { headers: { "x-claude-code-session-id": session, "anthropic-version": "2023-06-01" } });
    await response.arrayBuffer();
    seen.push({ upstream: response.headers.get("x-parley-upstream"), target: response.headers.get("x-parley-session-target"), status: response.status });
  }
  return seen;
}

export { agentSession };
