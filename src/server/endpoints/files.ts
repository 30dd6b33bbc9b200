import type { Config } from "../../config.ts";
import { validationError } from "../../errors.ts";
import type { Files } from "../../files/service.ts";
import type { FileStore } from "../../files/store.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

const CHECK_TTL_MS = 60_000;

export function files(config: Config, module: { files: () => Promise<Files>; store: () => Promise<FileStore> }): PlainEndpoint[] {
  const { files, store } = module;
  let checked: { at: number; ok: Promise<boolean> } | undefined;
  const credentialsValid = () => {
    if (!checked || Date.now() - checked.at > CHECK_TTL_MS) checked = { at: Date.now(), ok: store().then((s) => s.check()) };
    return checked.ok;
  };

  return [
    {
      kind: "plain", method: "GET", path: "/v1/files/health", errors: "parley",
      answer: async () => ({
        status: "healthy",
        service: "files",
        storage: config.files.bucket ? "s3" : "local",
        objstore_bucket_configured: !!config.files.bucket,
        beta_region: config.files.aws.region ?? "",
        credentials_valid: await credentialsValid(),
      }),
      openapi: { summary: "Files health", tags: ["health"], security: [] },
    },
    {
      kind: "plain", method: "POST", path: "/v1/files", scope: "files:write", errors: "parley", body: "stream",
      answer: async ({ request }) => (await files()).upload(request),
      openapi: { summary: "Upload a file (multipart: file, purpose)", tags: ["files"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1/files", scope: "files:read", errors: "parley",
      answer: async ({ query }) => (await files()).list({ purpose: query.purpose || undefined, after: query.after || undefined, limit: listLimit(query.limit) }),
      openapi: { summary: "List files, newest first", tags: ["files"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1/files/:file_id", scope: "files:read", errors: "parley",
      answer: async ({ params }) => (await files()).get(decoded(params[0]!)),
      openapi: { summary: "Retrieve a file's metadata", tags: ["files"] },
    },
    {
      kind: "plain", method: "GET", path: "/v1/files/:file_id/content", scope: "files:read", errors: "parley",
      async answer({ params }) {
        const { file, body } = await (await files()).content(decoded(params[0]!));
        return new Response(body, {
          headers: { "content-type": file.contentType, "content-length": String(file.bytes), "content-disposition": attachment(file.filename) },
        });
      },
      openapi: { summary: "Download a file's original bytes", tags: ["files"] },
    },
    {
      kind: "plain", method: "DELETE", path: "/v1/files/:file_id", scope: "files:write", errors: "parley",
      answer: async ({ params }) => (await files()).delete(decoded(params[0]!)),
      openapi: { summary: "Delete a file", tags: ["files"] },
    },
  ];
}

/** The id from the path; one that is not percent-encoded UTF-8 is no file's id, and is looked up (and not found) as sent. */
function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
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
