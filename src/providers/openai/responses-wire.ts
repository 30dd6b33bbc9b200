import { isObject } from "../../formats/read.ts";
import { fromResponses } from "../../formats/usage.ts";
import type { Usage } from "../../ir.ts";
import { badShape, type Upstream } from "../upstream-errors.ts";

/**
 * A Responses API reply passed through: checked, never changed, its token counts read. Tolerant,
 * since compatible servers leave fields out, but a reply that is not a response object is the
 * upstream failing (a 503).
 */
export function checkResponse(body: unknown, up: Upstream): Usage | undefined {
  const bad = (what: string) => badShape(up, what, JSON.stringify(body));
  if (!isObject(body)) throw bad("the response is not an object");
  if (!Array.isArray(body.output)) throw bad("the response has no output list");
  if (!body.output.every(isObject)) throw bad("an output item is not an object");
  return fromResponses(body.usage);
}
