import { isObject, stringOr } from "../../lib/read.ts";
import { settingName, type Upstream as Declared } from "../kind.ts";
import type { ListedModel } from "../models.ts";
import { fetchFailed, readUpstreamJson, type Upstream } from "../../wire/upstream-errors.ts";
import { geminiError } from "../../wire/gemini/errors.ts";
import { bareModel, headersOf, labelOf, type GeminiSettings } from "./settings.ts";

/** Pages read at most: Gemini lists a few dozen models. */
const PAGES = 20;

/** `GET {base_url}/v1beta/models`, every page (`pageToken`, `nextPageToken`). */
export async function listGeminiModels(upstream: Declared<GeminiSettings>): Promise<ListedModel[]> {
  const up: Upstream = { label: labelOf(upstream), url: upstream.settings.baseUrl, credentials: settingName(upstream, "api_key") };
  const headers = headersOf(upstream);
  const models: ListedModel[] = [];
  let token: string | undefined;
  for (let page = 0; page < PAGES; page++) {
    const url = `${upstream.settings.baseUrl}/v1beta/models?pageSize=1000${token ? `&pageToken=${encodeURIComponent(token)}` : ""}`;
    const response = await (upstream.fetch ?? fetch)(url, { headers, timeout: upstream.timeoutMs }).catch((error) => fetchFailed(up, error));
    if (!response.ok) throw geminiError(up, response.status, await response.text().catch(() => ""), response.headers.get("retry-after"));
    const body = await readUpstreamJson(up, response);
    const list = isObject(body) && Array.isArray(body.models) ? body.models : [];
    for (const m of list) {
      const name = isObject(m) ? stringOr(m.name) : undefined;
      if (name) models.push({ id: bareModel(name), owned_by: "google", created: 0 });
    }
    token = isObject(body) ? stringOr(body.nextPageToken) || undefined : undefined;
    if (!token) break;
  }
  return models;
}
