import S3rver from "s3rver";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** An S3-compatible server in this process, on a temporary directory, with one bucket. */
export async function startS3(bucket = "parley-test") {
  const directory = mkdtempSync(join(tmpdir(), "parley-s3-"));
  const server = new S3rver({ port: 0, address: "127.0.0.1", silent: true, directory, configureBuckets: [{ name: bucket, configs: [] }] });
  const { port } = await server.run();
  return {
    directory,
    env: {
      OBJSTORE_FILES_BUCKET: bucket,
      OBJSTORE_ENDPOINT_URL: `http://127.0.0.1:${port}`,
      BETA_REGION: "us-east-1",
      BETA_ACCESS_KEY_ID: "S3RVER",
      BETA_SECRET_ACCESS_KEY: "S3RVER",
    },
    stop: () => server.close(),
  };
}

export function form(file: { name: string; content: string | Uint8Array<ArrayBuffer>; type?: string } | undefined, purpose?: string, purposeFirst = true) {
  const body = new FormData();
  if (purpose !== undefined && purposeFirst) body.append("purpose", purpose);
  if (file) body.append("file", new Blob([file.content], file.type === undefined ? {} : { type: file.type }), file.name);
  if (purpose !== undefined && !purposeFirst) body.append("purpose", purpose);
  return body;
}
