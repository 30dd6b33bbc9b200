import { Transform } from "node:stream";
import { GatewayError } from "../errors.ts";

export const tooLarge = (max: number) =>
  new GatewayError(413, "invalid_request_error", `The file is larger than the limit of ${max} bytes (MAX_UPLOAD_BYTES).`);

/**
 * The bytes of a file part on their way to the store. Counts them and fails the moment they go over
 * `max`; holds back the end of the stream until `release()`, so a store only finishes the file once
 * the rest of the form has been read and found valid. `fail()` ends it with an error instead.
 */
export function uploadBody(max: number) {
  let seen = 0;
  let release!: () => void;
  let refuse!: (error: Error) => void;
  const verdict = new Promise<void>((resolve, reject) => {
    release = resolve;
    refuse = reject;
  });
  verdict.catch(() => undefined);

  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > max) done(tooLarge(max));
      else done(null, chunk);
    },
    flush(done) {
      verdict.then(() => done(), done);
    },
  });
  return {
    stream,
    bytes: () => seen,
    release,
    fail(error: Error) {
      refuse(error);
      stream.destroy(error);
    },
  };
}

export type UploadBody = ReturnType<typeof uploadBody>;
