import {
  CopyObjectCommand, DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, HeadObjectCommand, ListObjectsV2Command, S3Client,
  type S3ClientConfig,
} from "@aws-sdk/client-s3";
import { Upload } from "@aws-sdk/lib-storage";
import type { Readable } from "node:stream";
import { awsCredentials } from "../lib/aws.ts";
import type { Config } from "../config.ts";
import { FILE_ID, type FileMeta, type FileStore, type NewFile } from "./store.ts";

/** Where an upload's bytes wait for the rest of its form: a key that is not a file id, so no listing shows it. */
const staged = (id: string) => `${id}.part`;

/** File bytes in S3 (or any S3-compatible server); the metadata rides in the object's own metadata. */
export function createS3Store(config: Config): FileStore {
  const Bucket = config.files.bucket!;
  const client = new S3Client(clientConfig(config));

  const metadata = (file: Omit<FileMeta, "bytes">) => ({
    filename: encodeURIComponent(file.filename.toWellFormed()),
    purpose: file.purpose,
    "created-at": String(file.createdAt),
  });

  async function head(id: string): Promise<FileMeta | undefined> {
    if (!FILE_ID.test(id)) return undefined;
    try {
      const out = await client.send(new HeadObjectCommand({ Bucket, Key: id }));
      const m = out.Metadata ?? {};
      if (!m.purpose) return undefined;
      return {
        id,
        filename: decodeURIComponent(m.filename ?? id),
        purpose: m.purpose,
        contentType: out.ContentType ?? "application/octet-stream",
        createdAt: Number(m["created-at"] ?? Math.floor((out.LastModified?.getTime() ?? 0) / 1000)),
        bytes: out.ContentLength ?? 0,
      };
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  return {
    kind: "s3",

    async put(file: NewFile, body: Readable) {
      const Key = file.purpose ? file.id : staged(file.id);
      const upload = new Upload({
        client,
        params: { Bucket, Key, Body: body, ContentType: file.contentType, Metadata: metadata({ ...file, purpose: file.purpose ?? "" }) },
        queueSize: 2,
        leavePartsOnError: false,
      });
      await upload.done();
    },

    /** Object metadata cannot change in place: a server-side copy gives the bytes their final key and metadata. */
    async commit(file, purpose) {
      const removeStaged = () => client.send(new DeleteObjectCommand({ Bucket, Key: staged(file.id) }));
      try {
        await client.send(new CopyObjectCommand({
          Bucket, Key: file.id, CopySource: `${Bucket}/${staged(file.id)}`, MetadataDirective: "REPLACE",
          ContentType: file.contentType, Metadata: metadata({ ...file, purpose }),
        }));
      } catch (error) {
        await removeStaged().catch(() => undefined);
        throw error;
      }
      // The file is complete now; a staged copy that will not go away is invisible and harms nothing.
      await removeStaged().catch(() => undefined);
    },

    head,

    async ids() {
      const ids: string[] = [];
      let ContinuationToken: string | undefined;
      do {
        const page = await client.send(new ListObjectsV2Command({ Bucket, ContinuationToken }));
        for (const object of page.Contents ?? []) if (object.Key && FILE_ID.test(object.Key)) ids.push(object.Key);
        ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (ContinuationToken);
      return ids;
    },

    async open(id) {
      try {
        const out = await client.send(new GetObjectCommand({ Bucket, Key: id }));
        return out.Body?.transformToWebStream() as ReadableStream<Uint8Array> | undefined;
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    },

    async read(id, limit) {
      const out = await client.send(new GetObjectCommand({ Bucket, Key: id, Range: `bytes=0-${Math.max(0, limit - 1)}` }));
      return (await out.Body?.transformToByteArray()) ?? new Uint8Array();
    },

    async delete(id) {
      if (!FILE_ID.test(id)) return false;
      const existed = await client.send(new HeadObjectCommand({ Bucket, Key: id })).then(() => true, (error) => {
        if (isNotFound(error)) return false;
        throw error;
      });
      if (existed) await client.send(new DeleteObjectCommand({ Bucket, Key: id }));
      return existed;
    },

    async check() {
      try {
        await client.send(new HeadBucketCommand({ Bucket }));
        return true;
      } catch {
        return false;
      }
    },
  };
}

function clientConfig(config: Config): S3ClientConfig {
  const endpoint = config.files.endpointUrl;
  return {
    region: config.files.aws.region ?? "us-east-1",
    ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
    ...awsCredentials(config.files.aws),
  };
}

function isNotFound(error: unknown): boolean {
  const e = error as { name?: string; $metadata?: { httpStatusCode?: number } };
  return e?.$metadata?.httpStatusCode === 404 || e?.name === "NotFound" || e?.name === "NoSuchKey";
}
