import { isObject, numberOr, stringOr } from "../../lib/read.ts";
import { settingName, shownUrl, type Upstream as Declared } from "../kind.ts";
import type { ListedModel } from "../models.ts";
import { labelOf, urlOf, type OpenAISettings } from "./settings.ts";
import { fetchFailed, fromUpstreamStatus, readUpstreamJson, type Upstream } from "../../wire/upstream-errors.ts";

// Where routing/discovery.ts still takes it from.
export type { ListedModel };

/** `GET {base_url}/models`: what OpenAI, Ollama, vLLM, LM Studio and llama.cpp serve. */
export async function listOpenAIModels(upstream: Declared<OpenAISettings>): Promise<ListedModel[]> {
  const { settings } = upstream;
  const up: Upstream = { label: labelOf(upstream), url: shownUrl(settings.baseUrl), credentials: settingName(upstream, "api_key") };
  const headers = { ...upstream.headers, authorization: `Bearer ${settings.apiKey ?? "none"}`, accept: "application/json" };
  const response = await (upstream.fetch ?? fetch)(urlOf(settings, "/models"), { headers, timeout: upstream.timeoutMs }).catch((error) => fetchFailed(up, error));
  if (!response.ok) throw fromUpstreamStatus(up, response.status, (await response.text().catch(() => "")).slice(0, 500));
  const body = await readUpstreamJson(up, response);
  const data = isObject(body) && Array.isArray(body.data) ? body.data : [];
  return data.flatMap((m): ListedModel[] => {
    const id = isObject(m) ? stringOr(m.id) : undefined;
    return id ? [{ id, owned_by: stringOr((m as Record<string, unknown>).owned_by) ?? "openai", created: numberOr((m as Record<string, unknown>).created) ?? 0 }] : [];
  });
}
