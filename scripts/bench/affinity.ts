/**
 * `bun scripts/bench/affinity.ts [--n 1000000]`: what session affinity (contract 22) costs a request,
 * in ns of CPU time, measured directly: the work the loop adds on a route of two weighted targets for a request
 * that names a session (read the session header, the place's hash, the rendezvous order, the Map
 * read, the reply's placement), and on a single-target route (one length check: nothing else).
 * With `--redis URL`, also the GETEX round trip a request makes when REDIS_URL is set.
 */
import { parseArgs } from "node:util";
import { connectRedis } from "../../src/lib/redis.ts";
import { createLogger } from "../../src/log.ts";
import { keepsSessions, localSessions, placeKey, redisSessions, sessionOf, sessionOrder, settle, type Sessions } from "../../src/routing/affinity.ts";
import type { Route } from "../../src/routing/routes.ts";
import type { Facts } from "../../src/routing/when.ts";

const { values } = parseArgs({ args: Bun.argv.slice(2), options: { n: { type: "string", default: "1000000" }, redis: { type: "string" } } });
const n = Number(values.n);
const pair: Route = { requested: "claude-sonnet-4-5", name: "pair", weighted: true, targets: [{ upstream: "key-one", model: "claude-sonnet-4-5", weight: 1 }, { upstream: "key-two", model: "claude-sonnet-4-5", weight: 1 }] };
const single: Route = { requested: "claude-sonnet-4-5", weighted: false, targets: [{ upstream: "key-one", model: "claude-sonnet-4-5" }] };
const cooling = () => false;
const headers = Array.from({ length: 1000 }, (_, i) => new Headers({ "x-claude-code-session-id": `0b6f3c1e-9d4b-4c52-a1b7-${String(i).padStart(12, "0")}` }));

async function request(sessions: Sessions, route: Route, i: number): Promise<number> {
  const facts: Facts = { headers: headers[i % headers.length] };
  if (!keepsSessions(route)) return 0;
  const session = sessionOf(facts)!;
  const place = placeKey(session, route);
  let on = sessions.on(place, 300);
  if (on instanceof Promise) on = await on;
  const affinity = { place, ttlS: 300, on };
  const first = sessionOrder(route, affinity, cooling)[0]!;
  settle(sessions, affinity, first.upstream);
  return 1;
}

async function measure(label: string, sessions: Sessions, route: Route, count: number) {
  for (let i = 0; i < Math.min(count, 10_000); i++) await request(sessions, route, i);
  // CPU time, not wall time: on a shared machine the wall clock measures the neighbours.
  const start = process.cpuUsage();
  for (let i = 0; i < count; i++) await request(sessions, route, i);
  const used = process.cpuUsage(start);
  console.log(`${label}: ${(((used.user + used.system) * 1000) / count).toFixed(0)} ns of CPU a request`);
}

await measure("single-target route", localSessions(), single, n);
await measure("two weighted targets, a session, per process", localSessions(), pair, n);
if (values.redis) {
  const redis = connectRedis(values.redis, createLogger("silent"), "-");
  await measure("two weighted targets, a session, REDIS_URL (GETEX round trip)", redisSessions(redis), pair, Math.min(n, 20_000));
  redis.close();
}
