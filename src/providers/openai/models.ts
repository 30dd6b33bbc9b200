import type { Config } from "../../config.ts";
import { isObject, numberOr, stringOr } from "../../formats/read.ts";
import { fetchFailed, fromUpstreamStatus, readUpstreamJson, type Upstream } from "../upstream-errors.ts";

export interface ListedModel {
  id: string;
  owned_by: string;
  created: number;
}

/** `GET {ALPHA_BASE_URL}/models`: what OpenAI, Ollama, vLLM, LM Studio and llama.cpp serve. */
export async function listOpenAIModels(config: Config): Promise<ListedModel[]> {
  const up: Upstream = { label: "OpenAI upstream", url: config.alpha.baseUrl, credentials: "ALPHA_API_KEY (or OPENAI_API_KEY)" };
  const headers = { authorization: `Bearer ${config.alpha.apiKey ?? "none"}`, accept: "application/json" };
  const response = await fetch(`${config.alpha.baseUrl}/models`, { headers, timeout: config.upstreamTimeoutMs }).catch((error) => fetchFailed(up, error));
  if (!response.ok) throw fromUpstreamStatus(up, response.status, (await response.text().catch(() => "")).slice(0, 500));
  const body = await readUpstreamJson(up, response);
  const data = isObject(body) && Array.isArray(body.data) ? body.data : [];
  return data.flatMap((m): ListedModel[] => {
    const id = isObject(m) ? stringOr(m.id) : undefined;
    return id ? [{ id, owned_by: stringOr((m as Record<string, unknown>).owned_by) ?? "openai", created: numberOr((m as Record<string, unknown>).created) ?? 0 }] : [];
  });
}
