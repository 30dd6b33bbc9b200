import { isObject, stringOr } from "../../lib/read.ts";
import { settingName, type Upstream as Declared } from "../kind.ts";
import type { ListedModel } from "../models.ts";
import { fetchFailed, readUpstreamJson, upstreamErrorText, type Upstream } from "../../wire/upstream-errors.ts";
import { headersOf, labelOf, type AnthropicSettings } from "./settings.ts";

/** Pages read at most: Anthropic lists a few dozen models, 1,000 a page. */
const PAGES = 20;

/** `GET {base_url}/v1/models`, every page (`has_more`, `after_id`). */
export async function listAnthropicModels(upstream: Declared<AnthropicSettings>): Promise<ListedModel[]> {
  const up: Upstream = { label: labelOf(upstream), url: upstream.settings.baseUrl, credentials: settingName(upstream, "api_key") };
  const headers = headersOf(upstream);
  const models: ListedModel[] = [];
  let after: string | undefined;
  for (let page = 0; page < PAGES; page++) {
    const url = `${upstream.settings.baseUrl}/v1/models?limit=1000${after ? `&after_id=${encodeURIComponent(after)}` : ""}`;
    const response = await (upstream.fetch ?? fetch)(url, { headers, timeout: upstream.timeoutMs }).catch((error) => fetchFailed(up, error));
    if (!response.ok) throw upstreamErrorText(up, response.status, await response.text().catch(() => ""), response.headers.get("retry-after"));
    const body = await readUpstreamJson(up, response);
    const data = isObject(body) && Array.isArray(body.data) ? body.data : [];
    for (const m of data) {
      const id = isObject(m) ? stringOr(m.id) : undefined;
      const created = isObject(m) ? Date.parse(stringOr(m.created_at) ?? "") : NaN;
      if (id) models.push({ id, owned_by: "anthropic", created: Number.isNaN(created) ? 0 : Math.floor(created / 1000) });
    }
    after = isObject(body) && body.has_more === true ? stringOr(body.last_id) : undefined;
    if (!after) break;
  }
  return models;
}
