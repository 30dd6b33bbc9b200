import { encodeReply } from "./reply.ts";
import { decodeRequest } from "./request.ts";
import { streamEncoder } from "./stream.ts";
import type { Codec } from "../codec.ts";

/** Amazon Titan Text: the spec's `beta_textgen` format, read and written by the one Titan wire module. */
export const titanText: Codec = { decodeRequest, encodeReply, streamEncoder, lastEvent: '"completionReason":"' };
