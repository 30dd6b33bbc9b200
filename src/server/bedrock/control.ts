import { notFound } from "../../errors.ts";
import { claudeBedrockIds, foundationModel } from "../../providers/anthropic-models.ts";
import type { Discovery } from "../../routing/discovery.ts";
import type { Live } from "../../routing/live.ts";

/** A model as the control plane lists it. */
interface Routed {
  id: string;
  vendor: string;
  created: number;
}

/** Where ARNs made up for parley's models say they are: no account, the region Bedrock clients default to. */
const REGION = "us-east-1";
const ACCOUNT = "000000000000";

const PATHS = /^\/(foundation-models|inference-profiles)(?:\/([^/]+))?$/;

/**
 * The Bedrock control-plane reads that Bedrock clients make on their runtime base URL
 * (ListFoundationModels, GetFoundationModel, ListInferenceProfiles, GetInferenceProfile; Claude
 * Code in Bedrock mode asks for the profiles), answered in Bedrock's shapes from what parley
 * routes: the models discovery lists, and Claude's names with the inference profiles Bedrock
 * clients call them by, where some upstream takes them.
 */
export function createControlPlane(upstreams: Live, discovery: Discovery) {
  const route = (id: string) => {
    try {
      return upstreams.current().router(id).targets[0]!.upstream;
    } catch {
      return undefined;
    }
  };

  function models(): Routed[] {
    const out = new Map<string, Routed>();
    for (const m of discovery.list(route)) out.set(m.id, { id: m.id, vendor: m.owned_by, created: m.created });
    for (const m of claudeBedrockIds(REGION)) if (!out.has(m.id) && route(m.id)) out.set(m.id, { id: m.id, vendor: m.owned_by, created: m.created });
    return [...out.values()];
  }

  const arn = (kind: "foundation-model" | "inference-profile", id: string) =>
    kind === "foundation-model" ? `arn:aws:bedrock:${REGION}::foundation-model/${id}` : `arn:aws:bedrock:${REGION}:${ACCOUNT}:inference-profile/${id}`;

  const foundation = (m: Routed) => ({
    modelArn: arn("foundation-model", foundationModel(m.id)),
    modelId: m.id,
    modelName: m.id,
    providerName: m.vendor,
    inputModalities: ["TEXT"],
    outputModalities: ["TEXT"],
    responseStreamingSupported: true,
    customizationsSupported: [],
    inferenceTypesSupported: ["ON_DEMAND", "INFERENCE_PROFILE"],
    modelLifecycle: { status: "ACTIVE" },
  });

  const profile = (m: Routed) => {
    const at = new Date(m.created * 1000).toISOString();
    return {
      inferenceProfileName: m.id,
      inferenceProfileId: m.id,
      inferenceProfileArn: arn("inference-profile", m.id),
      description: `${m.id}, served by parley`,
      createdAt: at,
      updatedAt: at,
      models: [{ modelArn: arn("foundation-model", foundationModel(m.id)) }],
      status: "ACTIVE",
      type: "SYSTEM_DEFINED",
    };
  };

  /** An id in a path may be an ARN: the model is its last part. */
  const find = (id: string) => {
    let decoded: string;
    try {
      decoded = decodeURIComponent(id);
    } catch {
      throw notFound(`The model id '${id}' is not percent-encoded UTF-8.`);
    }
    const wanted = decoded.replace(/^arn:aws[\w-]*:bedrock:[^:]*:\d*:(foundation-model|inference-profile)\//, "");
    const found = models().find((m) => m.id === wanted);
    if (!found) throw notFound(`The model '${wanted}' is not routed to any upstream.`);
    return found;
  };

  return {
    serves: (path: string) => PATHS.test(path),
    answer(path: string, query: URLSearchParams): unknown {
      const [, list, id] = PATHS.exec(path)!;
      if (list === "foundation-models") return id ? { modelDetails: foundation(find(id)) } : { modelSummaries: models().map(foundation) };
      if (id) return profile(find(id));
      const type = query.get("type");
      return { inferenceProfileSummaries: type && type !== "SYSTEM_DEFINED" ? [] : models().map(profile) };
    },
  };
}

export type ControlPlane = ReturnType<typeof createControlPlane>;
