import { Transform } from "node:stream";
import { GatewayError } from "../errors.ts";

const tooLarge = (max: number) =>
  new GatewayError(413, "invalid_request_error", `The file is larger than the limit of ${max} bytes (MAX_UPLOAD_BYTES).`);

/** Counts bytes as they pass and fails the stream the moment it goes over `max`. */
export function byteLimit(max: number) {
  let seen = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > max) done(tooLarge(max));
      else done(null, chunk);
    },
  });
  return { stream, bytes: () => seen };
}
