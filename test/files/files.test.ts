import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { testApp } from "../lib/app.ts";
import { form, startS3 } from "../lib/files.ts";

type App = ReturnType<typeof testApp>;

/** Every file test, once against the local store and once against S3 (s3rver). */
for (const storage of ["local", "s3"] as const) {
  describe(`files on the ${storage} store`, () => {
    let s3: Awaited<ReturnType<typeof startS3>> | undefined;
    let env: Record<string, string> = {};
    let app: App;

    beforeAll(async () => {
      if (storage === "s3") {
        s3 = await startS3();
        env = s3.env;
      }
      app = testApp({ ...env, MAX_UPLOAD_BYTES: "4096" });
    });
    afterAll(() => s3?.stop());

    const upload = (target: App, body: FormData) => target.call("/v1/files", { method: "POST", body });
    const uploadText = async (target: App, name: string, content: string, purpose = "assistants", type?: string) => {
      const response = await upload(target, form({ name, content, type }, purpose));
      expect(response.status).toBe(200);
      return (await response.json()) as { id: string; [k: string]: unknown };
    };
    const waitProcessed = async (target: App, id: string) => {
      for (let i = 0; i < 100; i++) {
        const file = await (await target.call(`/v1/files/${id}`)).json();
        if (file.status !== "uploaded") return file;
        await Bun.sleep(20);
      }
      throw new Error(`${id} never processed`);
    };
    /** What the store holds, read directly: nothing half-made may be left behind. */
    const storedObjects = () => {
      if (storage === "local") {
        try {
          return readdirSync(join(app.config.dataDir, "files"));
        } catch {
          return [];
        }
      }
      const bucketDir = join(s3!.directory, "parley-test");
      try {
        return readdirSync(bucketDir, { recursive: true }).map(String).filter((f) => f.includes("file-") && !f.endsWith("/"));
      } catch {
        return [];
      }
    };

    test("upload answers a File with status uploaded; retrieval shows processed", async () => {
      const file = await uploadText(app, "notes.txt", "hello world", "assistants", "text/plain");
      expect(file).toEqual({ id: expect.stringMatching(/^file-[A-Za-z0-9]{24}$/), object: "file", bytes: 11, created_at: expect.any(Number), filename: "notes.txt", purpose: "assistants", status: "uploaded" });
      expect(Math.abs((file.created_at as number) - Date.now() / 1000)).toBeLessThan(5);
      expect((await waitProcessed(app, file.id)).status).toBe("processed");
    });

    test("the purpose may come after the file in the form", async () => {
      const response = await upload(app, form({ name: "late.txt", content: "x", type: "text/plain" }, "batch", false));
      expect(response.status).toBe(200);
      const { id } = await response.json();
      expect((await (await app.call(`/v1/files/${id}`)).json()).purpose).toBe("batch");
      const fresh = testApp({ ...env, PARLEY_DATA_DIR: join(app.config.dataDir, "..", "other-dir") });
      if (storage === "s3") expect((await (await fresh.call(`/v1/files/${id}`)).json()).purpose).toBe("batch");
    });

    test("content returns the original bytes, the stored type and an RFC 6266 disposition", async () => {
      const bytes = "col\n\"naïve, yes\"\n";
      const { id } = await uploadText(app, "résumé data.csv", bytes, "user_data", "text/csv; charset=utf-8");
      const response = await app.call(`/v1/files/${id}/content`);
      expect(response.status).toBe(200);
      expect(await response.text()).toBe(bytes);
      expect(response.headers.get("content-type")).toBe("text/csv");
      expect(response.headers.get("content-disposition")).toBe(`attachment; filename="r_sum_ data.csv"; filename*=UTF-8''r%C3%A9sum%C3%A9%20data.csv`);
    });

    test("a part typed application/octet-stream or untyped is typed by its extension", async () => {
      const md = await uploadText(app, "readme.md", "# Title", "assistants", "application/octet-stream");
      expect((await app.call(`/v1/files/${md.id}/content`)).headers.get("content-type")).toBe("text/markdown");
      const json = await uploadText(app, "data.JSON", "{}", "assistants", "");
      expect((await app.call(`/v1/files/${json.id}/content`)).headers.get("content-type")).toBe("application/json");
    });

    describe("refused uploads leave nothing behind", () => {
      const cases: [string, () => FormData, number, string][] = [
        ["missing purpose", () => form({ name: "a.txt", content: "x", type: "text/plain" }), 400, "invalid_request_error"],
        ["unknown purpose", () => form({ name: "a.txt", content: "x", type: "text/plain" }, "memes"), 422, "validation_error"],
        ["unknown purpose after the file", () => form({ name: "a.txt", content: "x", type: "text/plain" }, "memes", false), 422, "validation_error"],
        ["missing file", () => form(undefined, "assistants"), 400, "invalid_request_error"],
        ["an image", () => form({ name: "cat.png", content: "png", type: "image/png" }, "assistants"), 400, "invalid_request_error"],
        ["octet-stream with an unknown extension", () => form({ name: "tool.exe", content: "MZ", type: "application/octet-stream" }, "assistants"), 400, "invalid_request_error"],
        ["an empty file", () => form({ name: "empty.txt", content: "", type: "text/plain" }, "assistants"), 400, "invalid_request_error"],
        ["a file over MAX_UPLOAD_BYTES", () => form({ name: "big.txt", content: "x".repeat(5000), type: "text/plain" }, "assistants"), 413, "invalid_request_error"],
        ["a file over MAX_UPLOAD_BYTES, purpose last", () => form({ name: "big.txt", content: "x".repeat(5000), type: "text/plain" }, "assistants", false), 413, "invalid_request_error"],
      ];
      for (const [name, body, status, type] of cases) {
        test(`${name}: ${status}`, async () => {
          const before = storedObjects();
          const listed = (await (await app.call("/v1/files?limit=100")).json()).data.length;
          const response = await upload(app, body());
          expect(response.status).toBe(status);
          expect((await response.json()).error.type).toBe(type);
          expect(storedObjects()).toEqual(before);
          expect((await (await app.call("/v1/files?limit=100")).json()).data.length).toBe(listed);
        });
      }

      test("a body that is not multipart: 400", async () => {
        const response = await app.call("/v1/files", { method: "POST", body: JSON.stringify({ file: "x" }), headers: { "content-type": "application/json" } });
        expect(response.status).toBe(400);
      });
    });

    describe("listing", () => {
      let own: App;
      const ids: string[] = [];
      beforeAll(async () => {
        own = testApp(storage === "s3" ? { ...env, OBJSTORE_FILES_BUCKET: "parley-test" } : {});
        if (storage === "s3") {
          // A bucket of its own, so the other tests' files do not count.
          own = testApp({ ...env, OBJSTORE_FILES_BUCKET: "parley-list" });
          const { S3Client, CreateBucketCommand } = await import("@aws-sdk/client-s3");
          await new S3Client({ region: "us-east-1", endpoint: env.OBJSTORE_ENDPOINT_URL, forcePathStyle: true, credentials: { accessKeyId: "S3RVER", secretAccessKey: "S3RVER" } })
            .send(new CreateBucketCommand({ Bucket: "parley-list" }));
        }
        for (let i = 0; i < 5; i++) {
          ids.push((await uploadText(own, `f${i}.txt`, `file ${i}`, i % 2 ? "batch" : "assistants", "text/plain")).id);
          await Bun.sleep(1010 * (i === 2 ? 1 : 0));
        }
      });

      test("newest first, with has_more, first_id and last_id", async () => {
        const page = await (await own.call("/v1/files?limit=2")).json();
        expect(page.object).toBe("list");
        expect(page.data).toHaveLength(2);
        expect(page.has_more).toBe(true);
        expect(page.first_id).toBe(page.data[0].id);
        expect(page.last_id).toBe(page.data[1].id);
        const all = (await (await own.call("/v1/files")).json()).data;
        expect(all).toHaveLength(5);
        const times = all.map((f: { created_at: number }) => f.created_at);
        expect(times).toEqual([...times].sort((a, b) => b - a));
        expect(new Set(all.map((f: { id: string }) => f.id))).toEqual(new Set(ids));
      });

      test("the after cursor walks every file exactly once", async () => {
        const seen: string[] = [];
        let after = "";
        for (;;) {
          const page = await (await own.call(`/v1/files?limit=2${after ? `&after=${after}` : ""}`)).json();
          seen.push(...page.data.map((f: { id: string }) => f.id));
          if (!page.has_more) break;
          after = page.last_id;
        }
        expect(seen.sort()).toEqual([...ids].sort());
      });

      test("purpose filters before the limit", async () => {
        const page = await (await own.call("/v1/files?purpose=batch&limit=2")).json();
        expect(page.data.map((f: { purpose: string }) => f.purpose)).toEqual(["batch", "batch"]);
        expect(page.has_more).toBe(false);
      });

      test("limit outside 1..100 is 422; an unknown cursor is 400", async () => {
        for (const limit of ["0", "101", "abc", "2.5"]) {
          const response = await own.call(`/v1/files?limit=${limit}`);
          expect(response.status).toBe(422);
          expect((await response.json()).error.details).toContain("limit");
        }
        expect((await own.call("/v1/files?after=file-AAAAAAAAAAAAAAAAAAAAAAAA")).status).toBe(400);
      });
    });

    test("delete removes bytes and metadata; a second delete is 404", async () => {
      const { id } = await uploadText(app, "gone.txt", "bye", "assistants", "text/plain");
      const before = storedObjects().length;
      expect(await (await app.call(`/v1/files/${id}`, { method: "DELETE" })).json()).toEqual({ id, object: "file", deleted: true });
      expect(storedObjects().length).toBeLessThan(before);
      for (const path of [`/v1/files/${id}`, `/v1/files/${id}/content`]) expect((await app.call(path)).status).toBe(404);
      expect((await app.call(`/v1/files/${id}`, { method: "DELETE" })).status).toBe(404);
    });

    test("ids that are not file- plus 24 characters are 404 and touch nothing", async () => {
      for (const id of ["..%2F..%2Fetc%2Fpasswd", "file-..%2F..%2Fparley.db", "file-abc", "file-AAAAAAAAAAAAAAAAAAAAAAA%2F", "file-AAAAAAAAAAAAAAAAAAAAAAAAA"]) {
        for (const method of ["GET", "DELETE"]) {
          const response = await app.call(`/v1/files/${id}`, { method });
          expect(response.status).toBe(404);
          expect((await response.json()).error.type).toBe("not_found_error");
        }
        expect((await app.call(`/v1/files/${id}/content`)).status).toBe(404);
      }
    });

    test("the SQLite cache is rebuilt from the store when it is deleted", async () => {
      const dataDir = join(app.config.dataDir, "..", "rebuild");
      const first = testApp({ ...env, PARLEY_DATA_DIR: dataDir });
      const { id } = await uploadText(first, "keep.txt", "still here", "assistants", "text/plain");
      await waitProcessed(first, id);
      for (const suffix of ["", "-wal", "-shm"]) rmSync(join(dataDir, `parley.db${suffix}`), { force: true });
      const second = testApp({ ...env, PARLEY_DATA_DIR: dataDir });
      const listed = (await (await second.call("/v1/files?limit=100")).json()).data.map((f: { id: string }) => f.id);
      expect(listed).toContain(id);
      expect((await waitProcessed(second, id)).status).toBe("processed");
    });

    if (storage === "s3") {
      test("a store that refuses the write is 503 and leaves no metadata", async () => {
        const broken = testApp({ ...env, OBJSTORE_FILES_BUCKET: "no-such-bucket", PARLEY_DATA_DIR: join(app.config.dataDir, "..", "broken") });
        const response = await upload(broken, form({ name: "a.txt", content: "x", type: "text/plain" }, "assistants"));
        expect(response.status).toBe(503);
        expect((await response.json()).error.type).toBe("service_unavailable_error");
        const { Database } = await import("bun:sqlite");
        const db = new Database(join(app.config.dataDir, "..", "broken", "parley.db"));
        expect(db.query("SELECT COUNT(*) AS n FROM files").get()).toEqual({ n: 0 });
      });
    }

    test("/v1/files/health reports the store and a real credentials check", async () => {
      const health = await (await app.call("/v1/files/health", { key: null })).json();
      expect(health).toEqual({
        status: "healthy", service: "files", storage, objstore_bucket_configured: storage === "s3",
        beta_region: storage === "s3" ? "us-east-1" : "", credentials_valid: true,
      });
      if (storage === "s3") {
        const wrong = testApp({ ...env, OBJSTORE_FILES_BUCKET: "missing-bucket" });
        expect((await (await wrong.call("/v1/files/health")).json()).credentials_valid).toBe(false);
      }
    });
  });
}
