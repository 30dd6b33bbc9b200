import busboy from "busboy";
import { Readable } from "node:stream";
import { GatewayError, invalidRequest, unavailable, validationError } from "../errors.ts";
import { tooLarge, uploadBody, type UploadBody } from "./body.ts";
import { FILE_TYPES, resolveType } from "./extract.ts";
import type { FileMeta, FileStore, NewFile } from "./store.ts";

export const PURPOSES = ["assistants", "batch", "fine-tune", "vision", "user_data", "evals"];
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** `file-` and 24 characters from a secure random source, without modulo bias. */
function newFileId(): string {
  let id = "file-";
  while (id.length < 29) {
    for (const byte of crypto.getRandomValues(new Uint8Array(32))) {
      if (byte < 248 && id.length < 29) id += ALPHABET[byte % 62];
    }
  }
  return id;
}

interface Storing {
  file: NewFile;
  body: UploadBody;
  stored: Promise<void>;
}

/**
 * Reads a multipart upload while its `file` part streams into the store. The file becomes visible
 * only once the whole form has been read and found valid; any failure (a refused form, a broken or
 * aborted body, a store error) leaves nothing behind and ends in a GatewayError.
 */
export async function receiveUpload(request: Request, store: FileStore, maxBytes: number): Promise<FileMeta> {
  const type = request.headers.get("content-type") ?? "";
  if (!type.toLowerCase().startsWith("multipart/form-data") || !request.body) {
    throw invalidRequest("Upload with multipart/form-data: a 'file' part and a 'purpose' part.");
  }
  let parser: busboy.Busboy;
  try {
    parser = busboy({ headers: { "content-type": type }, defParamCharset: "utf8", limits: { files: 1, fields: 20, fieldSize: 64 * 1024 } });
  } catch {
    throw invalidRequest("The multipart body has no boundary.");
  }

  const fields = new Map<string, string>();
  let storing: Storing | undefined;
  // The first reason to refuse the form wins; the rest of the body is still read, so the client sees the answer.
  let refusal: GatewayError | undefined;
  const refuse = (error: GatewayError) => void (refusal ??= error);

  const source = Readable.fromWeb(request.body as never);
  let interrupted: unknown;
  const parsed = new Promise<void>((resolve, reject) => {
    parser.on("field", (name, value) => {
      if (name === "purpose" && fields.has(name)) refuse(invalidRequest("The field 'purpose' was sent more than once."));
      fields.set(name, value);
    });
    parser.on("file", (name, stream, info) => {
      // Busboy ends a file stream with an error when the form breaks inside it: never unheard.
      stream.on("error", () => undefined);
      if (name !== "file" || refusal) return void stream.resume();
      const filename = info.filename || "upload";
      const contentType = resolveType(info.mimeType, filename);
      if (!contentType) {
        refuse(invalidRequest(`Unsupported file type '${info.mimeType}' for '${filename}'.`, `accepted: ${FILE_TYPES.join(", ")} (or .txt .csv .json .html .htm .xml .md .markdown)`));
        return void stream.resume();
      }
      const known = fields.get("purpose");
      const file: NewFile = { id: newFileId(), filename, contentType, createdAt: Math.floor(Date.now() / 1000), purpose: known && PURPOSES.includes(known) ? known : undefined };
      const body = uploadBody(maxBytes);
      storing = { file, body, stored: store.put(file, body.stream) };
      storing.stored.catch((error) => body.fail(error));
      stream.on("error", (error) => body.fail(error));
      // A refused body (over the limit, or the store gave up) is drained, so busboy reads on to the end of the form.
      body.stream.on("error", (error) => {
        if (error instanceof GatewayError) refuse(error);
        stream.unpipe(body.stream);
        stream.resume();
      });
      stream.pipe(body.stream);
    });
    parser.on("filesLimit", () => refuse(invalidRequest("Upload one file at a time: the form has more than one file part.")));
    parser.on("error", reject);
    parser.on("close", resolve);
  });
  source.on("error", (error) => {
    interrupted = error;
    parser.destroy(error);
  });
  source.pipe(parser);

  try {
    await parsed;
  } catch {
    refuse(interrupted ? brokenOff(interrupted, maxBytes) : invalidRequest("The multipart body could not be parsed."));
    source.destroy();
  }
  const problem = refusal ?? check(storing, fields.get("purpose"));
  if (problem) {
    await discard(storing, problem);
    throw problem;
  }
  const { file, body, stored } = storing!;
  const purpose = fields.get("purpose")!;
  body.release();
  try {
    await stored;
    if (!file.purpose) await store.commit(file, purpose);
  } catch (error) {
    if (error instanceof GatewayError) throw error;
    throw unavailable("The file store could not save the file; nothing was kept.", { upstream: error instanceof Error ? error.message : String(error) });
  }
  return { ...file, purpose, bytes: body.bytes() };
}

/** What is wrong with a completely read form, if anything. */
function check(storing: Storing | undefined, purpose: string | undefined): GatewayError | undefined {
  if (!storing) return invalidRequest("Missing required field 'file'.", "file: required");
  if (purpose === undefined) return invalidRequest("Missing required field 'purpose'.", "purpose: required");
  if (!PURPOSES.includes(purpose)) return validationError("purpose", `must be one of ${PURPOSES.join(", ")}`);
  if (storing.body.bytes() === 0) return invalidRequest("The file is empty.");
  return undefined;
}

/** Ends the store's write with an error and waits until it has removed what it wrote. */
async function discard(storing: Storing | undefined, reason: GatewayError) {
  if (!storing) return;
  storing.body.fail(reason);
  await storing.stored.catch(() => undefined);
}

/** The request body itself failed: the client went away, or Bun cut a body over its size limit. */
function brokenOff(error: unknown, maxBytes: number): GatewayError {
  const message = error instanceof Error ? error.message : String(error);
  if (/maxRequestBodySize|too large/i.test(message)) return tooLarge(maxBytes);
  return invalidRequest("The upload ended before the form was complete.");
}
