import { Elysia } from "elysia";
import type { Config } from "../../config.ts";
import { validationError } from "../../errors.ts";
import type { Files } from "../../files/service.ts";
import type { FileStore } from "../../files/store.ts";
import { auth, type Guard } from "../auth.ts";

const CHECK_TTL_MS = 60_000;

export function filesRoutes(config: Config, module: { files: () => Promise<Files>; store: () => Promise<FileStore> }, guard: Guard) {
  const { files, store } = module;
  let checked: { at: number; ok: Promise<boolean> } | undefined;
  const credentialsValid = () => {
    if (!checked || Date.now() - checked.at > CHECK_TTL_MS) checked = { at: Date.now(), ok: store().then((s) => s.check()) };
    return checked.ok;
  };

  return new Elysia({ name: "parley/files" })
    .use(auth(guard))
    .get("/v1/files/health", async () => ({
      status: "healthy",
      service: "files",
      storage: config.files.bucket ? "s3" : "local",
      objstore_bucket_configured: !!config.files.bucket,
      beta_region: config.files.aws.region ?? "",
      credentials_valid: await credentialsValid(),
    }), { detail: { summary: "Files health", tags: ["health"], security: [] } })
    .post("/v1/files", async ({ request }) => (await files()).upload(request), { scope: "files:write", parse: "none", detail: { summary: "Upload a file (multipart: file, purpose)", tags: ["files"] } })
    .get("/v1/files", async ({ query }) => (await files()).list({ purpose: query.purpose || undefined, after: query.after || undefined, limit: listLimit(query.limit) }), {
      scope: "files:read",
      detail: { summary: "List files, newest first", tags: ["files"] },
    })
    .get("/v1/files/:file_id", async ({ params }) => (await files()).get(params.file_id), {
      scope: "files:read",
      detail: { summary: "Retrieve a file's metadata", tags: ["files"] },
    })
    .get("/v1/files/:file_id/content", async ({ params }) => {
      const { file, body } = await (await files()).content(params.file_id);
      return new Response(body, {
        headers: { "content-type": file.contentType, "content-length": String(file.bytes), "content-disposition": attachment(file.filename) },
      });
    }, { scope: "files:read", detail: { summary: "Download a file's original bytes", tags: ["files"] } })
    .delete("/v1/files/:file_id", async ({ params }) => (await files()).delete(params.file_id), {
      scope: "files:write",
      detail: { summary: "Delete a file", tags: ["files"] },
    });
}

function listLimit(value: string | undefined): number {
  if (value === undefined || value === "") return 20;
  const limit = Number(value);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) throw validationError("limit", "must be an integer from 1 to 100");
  return limit;
}

/** RFC 6266: an ASCII fallback name, and the exact name percent-encoded as UTF-8. */
function attachment(name: string): string {
  // encodeURIComponent throws on a lone surrogate; a name stored from a JSON escape may hold one.
  const filename = name.toWellFormed();
  const fallback = filename.replace(/[^\x20-\x7e]|["\\%]/g, "_");
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)}`;
}
