import { unavailable, validationError } from "../../errors.ts";
import type { UsageService } from "../../usage/service.ts";
import { BUCKETS, GROUPINGS, isBucket, isGrouping, parseSince, SINCE_HELP } from "../../usage/summary.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";

/** GET /v1/usage?since=7d&by=model|upstream|key|day|tag|route[&bucket=hour|day]: what was used, and what it cost (contracts 12, 20). */
export function usage(service: UsageService): PlainEndpoint {
  return {
    kind: "plain", method: "GET", path: "/v1/usage", scope: "usage", errors: "parley",
    async answer({ query }) {
      const since = parseSince(query.since ?? "7d");
      if (since === undefined) throw validationError("since", SINCE_HELP);
      const by = query.by ?? "model";
      if (!isGrouping(by)) throw validationError("by", `one of ${GROUPINGS.join(", ")}`);
      const bucket = query.bucket;
      if (bucket !== undefined && !isBucket(bucket)) throw validationError("bucket", `one of ${BUCKETS.join(", ")}`);
      service.settle();
      await service.recorder?.flush();
      const data = await service.store.summarize(since, by, bucket).catch(() => {
        throw unavailable("The usage database cannot be read right now; try again shortly (records wait in memory meanwhile).");
      });
      return { object: "list", since, by, ...(bucket ? { bucket } : {}), data };
    },
    openapi: {
      summary: "Usage and cost, grouped by model, upstream, key, day, tag or route",
      tags: ["usage"],
      parameters: [
        { name: "since", in: "query", required: false, schema: { type: "string", default: "7d" }, description: SINCE_HELP },
        { name: "by", in: "query", required: false, schema: { type: "string", enum: [...GROUPINGS], default: "model" } },
        { name: "bucket", in: "query", required: false, schema: { type: "string", enum: [...BUCKETS] }, description: "one row per hour or day (UTC) and group, each with its start in Unix seconds" },
      ],
    },
  };
}
