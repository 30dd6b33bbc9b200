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
  const start = process.cpuUsage();
  // Spin until the kernel has counted 0.3 s of CPU for this process (getrusage), however long a
  // busy machine takes to give it that much.
  const spent = () => {
    const { user, system } = process.cpuUsage(start);
    return (user + system) / 1e6;
  };
  let x = 0;
  while (spent() < 0.3) for (let i = 0; i < 10_000; i++) x += Math.sqrt(x + 1);
  const used = cpuSeconds(process.pid) - before;
  expect(x).toBeGreaterThan(0);
  // The same time read from /proc, in seconds (not clock ticks), give or take a few ticks.
  expect(used).toBeGreaterThan(0.25);
  expect(used).toBeLessThan(spent() + 0.05);
  expect(rssMb(2 ** 22 + 7)).toBe(0);
  expect(cpuSeconds(2 ** 22 + 7)).toBe(0);
});
