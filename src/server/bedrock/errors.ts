import type { GatewayError } from "../../errors.ts";
import { overflowMessage } from "../../wire/anthropic/errors.ts";
import { exceptionOf } from "../../wire/aws-errors.ts";

/**
 * A failure as Bedrock Runtime answers one: the exception's name in `x-amzn-ErrorType`, its status,
 * and `{"message"}`, which the AWS SDKs raise as their typed exceptions (ThrottlingException, …).
 */
export function bedrockErrorResponse(error: GatewayError, headers: Record<string, string>, debug: boolean): Response {
  const [name, status] = exceptionOf(error.status);
  return Response.json({ message: messageOf(error, debug) }, {
    status,
    headers: { ...headers, ...error.headers, "x-amzn-errortype": `${name}:http://internal.amazon.com/coral/com.amazon.bedrock/` },
  });
}

/** A context overflow in Anthropic's words ("prompt is too long"), which Claude Code acts on in Bedrock mode too. */
function messageOf(error: GatewayError, debug: boolean): string {
  if (error.overflow) return overflowMessage(error.overflow);
  const details = debug && error.upstream ? error.upstream : error.details;
  return details && debug ? `${error.message} (${details})` : error.message;
}
