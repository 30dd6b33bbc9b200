import { isObject, stringOr } from "../../lib/read.ts";
import { unprefixed } from "../anthropic-models.ts";
import { fetchFailed, readUpstreamJson, type Upstream } from "../../wire/upstream-errors.ts";
import type { Upstream as Declared } from "../kind.ts";
import { bedrockAuth } from "./auth.ts";
import { credentialsOf, labelOf, type BedrockSettings } from "./settings.ts";
import { canonicalQuery } from "./sigv4.ts";
import { httpError } from "../../wire/aws-errors.ts";

/** A model Bedrock can run by id: a foundation model on demand, or an inference profile. */
export interface BedrockModel {
  id: string;
  /** The vendor, for `owned_by`: anthropic, amazon, meta… */
  vendor: string;
  created: number;
}

/**
 * Bedrock's control plane (bedrock.<region>.amazonaws.com), for what the runtime cannot tell:
 * which models exist here, and which model an application inference profile or a custom model
 * ARN stands for. Off the chat path: discovery runs in the background, lookups are cached.
 */
export function createBedrockControl(upstream: Declared<BedrockSettings>) {
  const beta = upstream.settings;
  const timeout = upstream.timeoutMs;
  const base = controlEndpoint(beta);
  const prefix = base.pathname.replace(/\/$/, "");
  const up: Upstream = { label: `${labelOf(upstream)} control plane`, url: base.origin, credentials: credentialsOf(upstream) };
  const auth = bedrockAuth(beta, up);

  async function get(path: string, query?: Record<string, string>): Promise<Record<string, unknown>> {
    const full = prefix + path;
    const headers = await auth.get(base.host, full, query);
    const search = query ? `?${canonicalQuery(query)}` : "";
    const response = await (upstream.fetch ?? fetch)(base.origin + full + search, { headers, timeout }).catch((error) => fetchFailed(up, error));
    if (!response.ok) throw await httpError(up, response);
    const body = await readUpstreamJson(up, response);
    return isObject(body) ? body : {};
  }

  return {
    /** Text models callable by id (on demand), then every inference profile: one list. */
    async models(): Promise<BedrockModel[]> {
      const found = await get("/foundation-models", { byOutputModality: "TEXT" });
      const models: BedrockModel[] = [];
      for (const m of Array.isArray(found.modelSummaries) ? found.modelSummaries : []) {
        const id = isObject(m) ? stringOr(m.modelId) : undefined;
        const types = isObject(m) && Array.isArray(m.inferenceTypesSupported) ? m.inferenceTypesSupported : [];
        if (id && types.includes("ON_DEMAND")) models.push({ id, vendor: vendorOf(id, stringOr((m as Record<string, unknown>).providerName)), created: 0 });
      }
      let nextToken: string | undefined;
      do {
        const page = await get("/inference-profiles", { maxResults: "1000", ...(nextToken ? { nextToken } : {}) });
        for (const p of Array.isArray(page.inferenceProfileSummaries) ? page.inferenceProfileSummaries : []) {
          const id = isObject(p) ? stringOr(p.inferenceProfileId) : undefined;
          if (!id || (isObject(p) && p.status !== undefined && p.status !== "ACTIVE")) continue;
          const created = isObject(p) && typeof p.createdAt === "string" ? Math.floor(Date.parse(p.createdAt) / 1000) || 0 : 0;
          models.push({ id, vendor: vendorOf(id), created });
        }
        nextToken = stringOr(page.nextToken);
      } while (nextToken);
      return models;
    },

    /** The foundation model an application inference profile or a custom model ARN runs. */
    async baseModel(arn: string): Promise<string | undefined> {
      if (arn.includes(":custom-model/")) return stringOr((await get(`/custom-models/${encodeURIComponent(arn)}`)).baseModelArn);
      const profile = await get(`/inference-profiles/${encodeURIComponent(arn)}`);
      const first = Array.isArray(profile.models) ? profile.models[0] : undefined;
      return isObject(first) ? stringOr(first.modelArn) : undefined;
    },
  };
}

export type BedrockControl = ReturnType<typeof createBedrockControl>;

/** BETA_CONTROL_ENDPOINT_URL, else the region's public control-plane endpoint. */
export function controlEndpoint({ region, controlEndpointUrl }: Pick<BedrockSettings, "region" | "controlEndpointUrl">): URL {
  if (controlEndpointUrl) return new URL(controlEndpointUrl);
  const suffix = region!.startsWith("cn-") ? "amazonaws.com.cn" : region!.startsWith("eusc-") ? "amazonaws.eu" : "amazonaws.com";
  return new URL(`https://bedrock.${region}.${suffix}`);
}

/** `us.anthropic.claude-…` -> anthropic; the provider's own name when the id says nothing. */
function vendorOf(id: string, providerName?: string): string {
  const bare = unprefixed(id);
  return bare.includes(".") ? bare.split(".")[0]! : (providerName?.toLowerCase() ?? "aws");
}
