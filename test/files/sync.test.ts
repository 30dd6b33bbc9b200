import { Database } from "bun:sqlite";
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createFileCache } from "../../src/files/cache.ts";
import { createS3Store } from "../../src/files/s3.ts";
import { createFiles } from "../../src/files/service.ts";
import type { FileStore } from "../../src/files/store.ts";
import { SYNC_WINDOW_MS } from "../../src/files/sync.ts";
import { createLogger } from "../../src/log.ts";
import { testApp, testConfig } from "../lib/app.ts";
import { form, startS3 } from "../lib/files.ts";

type App = ReturnType<typeof testApp>;

let s3: Awaited<ReturnType<typeof startS3>>;
beforeAll(async () => {
  s3 = await startS3();
});
afterAll(() => s3.stop());

const upload = async (app: App, name: string, content = name) => {
  const response = await app.call("/v1/files", { method: "POST", body: form({ name, content, type: "text/plain" }, "assistants") });
  expect(response.status).toBe(200);
  return ((await response.json()) as { id: string }).id;
};
const listed = async (app: App) => ((await (await app.call("/v1/files?limit=100")).json()).data as { id: string }[]).map((f) => f.id);

describe("gateways sharing one bucket", () => {
  let one: App;
  let two: App;
  beforeAll(async () => {
    one = testApp(s3.env);
    two = testApp(s3.env);
    await listed(one);
    await listed(two);
  });

  test("a file uploaded on one is found by id on the other at once, and listed there within the sync window", async () => {
    const id = await upload(one, "shared.txt", "shared");
    expect((await two.call(`/v1/files/${id}`)).status).toBe(200);
    expect(await (await two.call(`/v1/files/${id}/content`)).text()).toBe("shared");
    const fresh = await upload(one, "fresh.txt");
    await Bun.sleep(SYNC_WINDOW_MS + 100);
    expect(await listed(two)).toContain(fresh);
  });

  test("a file deleted on one: its content is 404 on the other at once, its metadata and listing within the window", async () => {
    const id = await upload(one, "doomed.txt");
    expect((await two.call(`/v1/files/${id}`)).status).toBe(200);
    expect((await one.call(`/v1/files/${id}`, { method: "DELETE" })).status).toBe(200);
    expect((await two.call(`/v1/files/${id}/content`)).status).toBe(404);
    await Bun.sleep(SYNC_WINDOW_MS + 100);
    expect((await two.call(`/v1/files/${id}`)).status).toBe(404);
    expect(await listed(two)).not.toContain(id);
  });

  test("a file uploaded on one can be deleted on the other at once", async () => {
    const id = await upload(one, "short-lived.txt");
    expect(await (await two.call(`/v1/files/${id}`, { method: "DELETE" })).json()).toEqual({ id, object: "file", deleted: true });
    expect((await one.call(`/v1/files/${id}/content`)).status).toBe(404);
    expect((await two.call(`/v1/files/${id}`, { method: "DELETE" })).status).toBe(404);
  });
});

describe("the sync with the store", () => {
  const bucket = "parley-sync";
  let writer: App;
  const seeded: string[] = [];

  beforeAll(async () => {
    const { S3Client, CreateBucketCommand } = await import("@aws-sdk/client-s3");
    await new S3Client({ region: "us-east-1", endpoint: s3.env.OBJSTORE_ENDPOINT_URL, forcePathStyle: true, credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } })
      .send(new CreateBucketCommand({ Bucket: bucket }));
    writer = testApp({ ...s3.env, OBJSTORE_FILES_BUCKET: bucket });
    for (let i = 0; i < 30; i++) seeded.push(await upload(writer, `seed-${i}.txt`));
  });

  /** A gateway of its own on the shared bucket, with the real S3 store counted as it is called. */
  function gateway(syncWindowMs: number) {
    const config = testConfig({ ...s3.env, OBJSTORE_FILES_BUCKET: bucket });
    const real = createS3Store(config);
    const calls = { ids: 0, head: 0, headsInFlight: 0, maxHeadsInFlight: 0, readsInFlight: 0, maxReadsInFlight: 0 };
    const store: FileStore = {
      ...real,
      async ids() {
        calls.ids++;
        return real.ids();
      },
      async head(id) {
        calls.head++;
        calls.maxHeadsInFlight = Math.max(calls.maxHeadsInFlight, ++calls.headsInFlight);
        try {
          await Bun.sleep(5);
          return await real.head(id);
        } finally {
          calls.headsInFlight--;
        }
      },
      async read(id, limit) {
        calls.maxReadsInFlight = Math.max(calls.maxReadsInFlight, ++calls.readsInFlight);
        try {
          await Bun.sleep(5);
          return await real.read(id, limit);
        } finally {
          calls.readsInFlight--;
        }
      },
    };
    const files = createFiles({ config, store, cache: createFileCache(new Database(":memory:")), log: createLogger("silent"), syncWindowMs });
    const ids = async () => (await files.list({ limit: 100 })).data.map((f) => f.id);
    return { files, calls, ids };
  }

  test("lists the store at most once per window, reading each unknown file once, eight at a time", async () => {
    const { files, calls, ids } = gateway(60_000);
    const lists = await Promise.all([ids(), ids(), ids()]);
    for (const list of lists) expect(new Set(list)).toEqual(new Set(seeded));
    await ids();
    await files.get(seeded[0]!);
    expect(calls.ids).toBe(1);
    expect(calls.head).toBe(seeded.length);
    expect(calls.maxHeadsInFlight).toBeLessThanOrEqual(8);
    expect(calls.maxHeadsInFlight).toBeGreaterThan(1);
  });

  test("after the window only files it does not know are read; files gone from the store are dropped", async () => {
    const { calls, ids } = gateway(0);
    await ids();
    expect(calls.head).toBe(seeded.length);
    const added = await upload(writer, "late.txt");
    expect(await ids()).toContain(added);
    expect(calls.ids).toBe(2);
    expect(calls.head).toBe(seeded.length + 1);
    await writer.call(`/v1/files/${added}`, { method: "DELETE" });
    expect(await ids()).not.toContain(added);
    expect(calls.head).toBe(seeded.length + 1);
  });

  test("text extraction of files found by a sync runs a few at a time", async () => {
    const { files, calls, ids } = gateway(60_000);
    await ids();
    for (let i = 0; i < 200 && (await files.list({ limit: 100 })).data.some((f) => f.status === "uploaded"); i++) await Bun.sleep(20);
    expect((await files.list({ limit: 100 })).data.every((f) => f.status === "processed")).toBe(true);
    expect(calls.maxReadsInFlight).toBeLessThanOrEqual(4);
    expect(calls.maxReadsInFlight).toBeGreaterThan(1);
  });

  test("a store that cannot be listed is a 503 for the listing; lookups by id still answer", async () => {
    const config = testConfig({ ...s3.env, OBJSTORE_FILES_BUCKET: bucket });
    const real = createS3Store(config);
    const store: FileStore = { ...real, ids: () => Promise.reject(new Error("listing refused")) };
    const files = createFiles({ config, store, cache: createFileCache(new Database(":memory:")), log: createLogger("silent") });
    await expect(files.list({ limit: 10 })).rejects.toMatchObject({ status: 503, type: "service_unavailable_error" });
    expect((await files.get(seeded[0]!)).id).toBe(seeded[0]!);
  });
});

