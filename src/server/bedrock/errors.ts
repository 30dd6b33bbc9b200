import { errorBody, GatewayError } from "../../errors.ts";

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

/** The Bedrock exception for a status, and the status Bedrock gives it. */
export function exceptionOf(status: number): [name: string, status: number] {
  switch (status) {
    case 400:
    case 405:
    case 413:
    case 422:
      return ["ValidationException", 400];
    case 401:
    case 403:
      return ["AccessDeniedException", 403];
    case 404:
      return ["ResourceNotFoundException", 404];
    case 408:
    case 504:
      return ["ModelTimeoutException", 408];
    case 429:
      return ["ThrottlingException", 429];
    case 500:
      return ["InternalServerException", 500];
    default:
      return status >= 500 ? ["ServiceUnavailableException", 503] : ["ValidationException", 400];
  }
}

/** A context overflow in Anthropic's words ("prompt is too long"), which Claude Code acts on in Bedrock mode too. */
function messageOf(error: GatewayError, debug: boolean): string {
  if (error.overflow) return (errorBody(error, "anthropic") as { error: { message: string } }).error.message;
  const details = debug && error.upstream ? error.upstream : error.details;
  return details && debug ? `${error.message} (${details})` : error.message;
}
