import { unavailable, validationError } from "../../errors.ts";
import type { UsageService } from "../../usage/service.ts";
import { GROUPINGS, isGrouping, parseSince, SINCE_HELP } from "../../usage/summary.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

/** GET /v1/usage?since=7d&by=model|upstream|key|day|tag|route: what was used, and what it cost (contract 12). */
export function usage(service: UsageService): PlainEndpoint {
  return {
    kind: "plain", method: "GET", path: "/v1/usage", scope: "usage", errors: "parley",
    async answer({ query }) {
      const since = parseSince(query.since ?? "7d");
      if (since === undefined) throw validationError("since", SINCE_HELP);
      const by = query.by ?? "model";
      if (!isGrouping(by)) throw validationError("by", `one of ${GROUPINGS.join(", ")}`);
      service.settle();
      await service.recorder?.flush();
      const data = await service.store.summarize(since, by).catch(() => {
        throw unavailable("The usage database cannot be read right now; try again shortly (records wait in memory meanwhile).");
      });
      return { object: "list", since, by, data };
    },
    openapi: {
      summary: "Usage and cost, grouped by model, upstream, key, day, tag or route",
      tags: ["usage"],
      parameters: [
        { name: "since", in: "query", required: false, schema: { type: "string", default: "7d" }, description: SINCE_HELP },
        { name: "by", in: "query", required: false, schema: { type: "string", enum: [...GROUPINGS], default: "model" } },
      ],
    },
  };
}
