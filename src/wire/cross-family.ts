import { invalidRequest } from "../errors.ts";
import type { ChatRequest } from "../ir.ts";

/** A request holding what only its own family reads (server tools, their blocks) cannot be converted. */
export function refuseUnsupported(request: ChatRequest, target: string): void {
  if (!request.unsupported?.length) return;
  throw invalidRequest(
    `${target} cannot take ${request.unsupported.join(", ")}: these exist only in the client's own API. Remove them, or use a model of the client's family.`,
    request.unsupported.join("; "),
  );
}
