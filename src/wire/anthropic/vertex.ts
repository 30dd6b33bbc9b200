import { topMembers, type Json } from "../../lib/read.ts";

/**
 * Claude on Vertex AI speaks Anthropic Messages with two differences: the model is in the URL
 * (`…/publishers/anthropic/models/{model}:rawPredict`, `:streamRawPredict`, `count-tokens:rawPredict`)
 * and the body carries `anthropic_version: "vertex-2023-10-16"`. Both ways, member by member, every
 * other byte as the client wrote it (never parsed and written anew: that would round big numbers
 * and lose the client's escapes).
 */

export const VERTEX_ANTHROPIC_VERSION = "vertex-2023-10-16";

/** An Anthropic Messages body as Vertex takes it: `model` out, `anthropic_version` in (unless sent). */
export function toVertexBody(raw: string, json: Json): string {
  const head = Object.hasOwn(json, "anthropic_version") ? [] : [`"anthropic_version":${JSON.stringify(VERTEX_ANTHROPIC_VERSION)}`];
  return edited(raw, json, head, (key) => key !== "model", () => {
    const { model: _model, ...rest } = json;
    return { ...(head.length ? { anthropic_version: VERTEX_ANTHROPIC_VERSION } : {}), ...rest };
  });
}

/** A Vertex client's body for any other Anthropic upstream: `anthropic_version` out, `model` in. */
export function fromVertexBody(raw: string, json: Json, model: string): string {
  return edited(raw, json, [`"model":${JSON.stringify(model)}`], (key) => key !== "anthropic_version" && key !== "model", () => {
    const { anthropic_version: _version, model: _model, ...rest } = json;
    return { model, ...rest };
  });
}

function edited(raw: string, json: Json, head: string[], keep: (key: string) => boolean, whole: () => Json): string {
  const members = topMembers(raw);
  if (!members) return JSON.stringify(whole());
  return `{${[...head, ...members.filter((m) => keep(m.key)).map((m) => raw.slice(m.start, m.end))].join(",")}}`;
}

export interface VertexPath {
  project: string;
  location: string;
  publisher: string;
  /** `count-tokens` for the count. */
  model: string;
  method: string;
}

const PATH = /^\/v1(?:beta1)?\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):([A-Za-z]+)$/;

/** `/v1/projects/{p}/locations/{l}/publishers/{pub}/models/{m}:{method}` read; undefined for any other path. */
export function vertexPath(pathname: string): VertexPath | undefined {
  const match = PATH.exec(pathname);
  if (!match) return undefined;
  const [, project, location, publisher, model, method] = match.map((part) => (part === undefined ? "" : decodeURIComponent(part)));
  return { project: project!, location: location!, publisher: publisher!, model: model!, method: method! };
}
