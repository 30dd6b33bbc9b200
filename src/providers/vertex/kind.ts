import type { Kind } from "../kind.ts";
import { VERTEX_CATALOGUE } from "./catalogue.ts";
import { isClaude, toVertexId } from "./model-ids.ts";
import { credentialSource, DEFAULT_REGION, hostOf, type VertexSettings } from "./settings.ts";

/** Vertex AI (contract 23): Claude and Gemini in one Google Cloud project and region. */
export const vertexKind: Kind<VertexSettings> = {
  keys: { project: "string", region: "string", access_token: "string", credentials_file: "string", token_url: "string", base_url: "string" },
  required: ["project"],
  secrets: ["access_token"],
  settings: (t) => {
    const s = (key: string) => (t[key] === undefined ? undefined : String(t[key]));
    return {
      project: s("project") ?? "",
      region: s("region") ?? DEFAULT_REGION,
      ...(s("access_token") ? { accessToken: s("access_token") } : {}),
      ...(s("credentials_file") ? { credentialsFile: s("credentials_file") } : {}),
      ...(s("token_url") ? { tokenUrl: s("token_url") } : {}),
      ...(s("base_url") ? { baseUrl: s("base_url")!.replace(/\/+$/, "").replace(/\/v1$/, "") } : {}),
    };
  },
  // Credentials may come from the environment or gcloud: their absence shows at the first call.
  missing: (u) => (u.settings.project ? undefined : `set project in [upstreams.${u.name}]`),
  build: (u) => import("./provider.ts").then((m) => m.createVertexProvider(u)),
  credentials: (s) => credentialSource(s).source,
  where: (s) => `${hostOf(s)} (${s.project}, ${s.region})`,
  patterns: [/^gemini-/],
  // Claude's names as Vertex writes them (`claude-sonnet-4-5@20250929`).
  modelFor: (model) => (isClaude(model) ? toVertexId(model) : model),
  // Claude's names go to Anthropic's own API first, then Vertex, then Bedrock.
  claude: 1.5,
  // Vertex lists nothing per project.
  catalogue: VERTEX_CATALOGUE,
};
