import { encodeReply } from "../wire/titan/reply.ts";
import { decodeRequest } from "../wire/titan/request.ts";
import { streamEncoder } from "../wire/titan/stream.ts";
import type { Codec } from "./codec.ts";

/** Amazon Titan Text: the spec's `beta_textgen` format, read and written by the one Titan wire module. */
export const titanText: Codec = { decodeRequest, encodeReply, streamEncoder, lastEvent: '"completionReason":"' };
