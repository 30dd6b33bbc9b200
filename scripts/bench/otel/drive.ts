/**
 * The measured loop shared by each implementation's entry (none.ts, ours.ts, sdk.ts): one request's
 * spans (a SERVER span, two CLIENT attempts, the attributes contract 24 lists) repeated, with the
 * event loop let run between chunks so batches are exported as they would be under load.
 *   <entry> startup            set up against a dead endpoint and exit (start-up time)
 *   <entry> run <url> <n>      prints {"hotUs": per-request CPU of the span calls on the request's
 *                                      thread, "cpuUs": per-request process CPU, export included}
 */

export interface Impl {
  request(): void;
  shutdown(): Promise<void>;
}

export async function drive(setup: (url: string) => Impl): Promise<void> {
  const [mode, url = "http://127.0.0.1:9", n = "20000"] = process.argv.slice(2);
  const impl = setup(url);
  if (mode !== "run") return impl.shutdown();
  const count = Number(n);
  for (let i = 0; i < 2000; i++) impl.request(); // warm-up: JIT and the first exports
  await impl.shutdown().catch(() => {});
  const again = setup(url);
  const cpu0 = process.cpuUsage();
  let hot = 0;
  for (let done = 0; done < count; done += 100) {
    // CPU time of this thread, not the wall clock: the machine may be busy with other work.
    const t0 = process.threadCpuUsage();
    for (let i = 0; i < 100; i++) again.request();
    const t = process.threadCpuUsage(t0);
    hot += t.user + t.system;
    await Bun.sleep(0);
  }
  await again.shutdown();
  const cpu = process.cpuUsage(cpu0);
  console.log(JSON.stringify({ hotUs: hot / count, cpuUs: (cpu.user + cpu.system) / count }));
}
