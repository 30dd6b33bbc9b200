import { expect, test } from "bun:test";
import { cpuSeconds, freePort, rssMb } from "./proc.ts";

test("freePort gives a port a server can listen on", () => {
  const port = freePort();
  const server = Bun.serve({ hostname: "127.0.0.1", port, fetch: () => new Response("ok") });
  expect(server.port).toBe(port);
  server.stop(true);
});

test("rssMb and cpuSeconds read a live process, and 0 for none", () => {
  expect(rssMb(process.pid)).toBeGreaterThan(5);
  const before = cpuSeconds(process.pid);
  let x = 0;
  const until = performance.now() + 300;
  while (performance.now() < until) x += Math.sqrt(x + 1);
  expect(x).toBeGreaterThan(0);
  expect(cpuSeconds(process.pid) - before).toBeGreaterThan(0.1);
  expect(rssMb(2 ** 22 + 7)).toBe(0);
  expect(cpuSeconds(2 ** 22 + 7)).toBe(0);
});
