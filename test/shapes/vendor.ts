/**
 * Checks a body against the vendors' own reply schemas (test/schemas, from scripts/vendor-schemas.ts):
 * OpenAI's OpenAPI components and the Anthropic SDK's types.
 */
import Ajv2020, { type ValidateFunction } from "ajv/dist/2020";
import addFormats from "ajv-formats";
import anthropic from "../schemas/anthropic.json" with { type: "json" };
import openai from "../schemas/openai.json" with { type: "json" };

export type OpenAISchema = keyof typeof openai.components.schemas;
export type AnthropicSchema = keyof typeof anthropic.definitions;

/** SHAPES_STRICT=1 keeps every `required` as the vendors list it, nullable fields too. */
const STRICT = process.env.SHAPES_STRICT === "1";

// The spec carries OpenAPI's keywords (discriminator, x-*): not strict about unknown ones.
const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
addFormats(ajv);
ajv.addFormat("unixtime", true);
ajv.addSchema(loaded(openai)).addSchema(loaded(anthropic));

/**
 * The vendored documents as a validator reads them. OpenAPI 3.0's `nullable: true`, which the spec
 * still uses in places, becomes a `null` alternative. Both vendors list fields that may be null as
 * required (the SDK's types declare every reply field present); their APIs leave many of them out
 * (Bedrock's own Claude replies do), and a client reads a missing field as it reads a null: such a
 * field is optional here. A field that may not be null stays required.
 */
function loaded<T>(document: T): T {
  const admitsNull = (s: any): boolean =>
    s?.type === "null" || (Array.isArray(s?.type) && s.type.includes("null")) || s?.nullable === true ||
    (Array.isArray(s?.anyOf) && s.anyOf.some(admitsNull)) || (Array.isArray(s?.oneOf) && s.oneOf.some(admitsNull));
  const rewrite = (value: any, inProperties = false): any => {
    if (Array.isArray(value)) return value.map((v) => rewrite(v));
    if (!value || typeof value !== "object") return value;
    const out: any = Object.fromEntries(Object.entries(value).map(([k, v]) => [k, rewrite(v, !inProperties && k === "properties")]));
    if (inProperties) return out;
    if (!STRICT && Array.isArray(out.required) && value.properties) out.required = out.required.filter((p: string) => !admitsNull(value.properties[p]));
    if (out.nullable !== true) return out;
    const { nullable: _, ...rest } = out;
    if (typeof rest.type === "string") return { ...rest, type: [rest.type, "null"], ...(rest.enum ? { enum: [...rest.enum, null] } : {}) };
    return { anyOf: [rest, { type: "null" }] };
  };
  return rewrite(document);
}

const compiled = new Map<string, ValidateFunction>();
function validator(ref: string): ValidateFunction {
  const known = compiled.get(ref);
  if (known) return known;
  const made = ajv.compile({ $ref: ref });
  compiled.set(ref, made);
  return made;
}

/** The schema's complaints about `body` (empty when it conforms), each as `path: message`. */
export function problems(ref: string, body: unknown): string[] {
  const validate = validator(ref);
  if (validate(body)) return [];
  return (validate.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message}${e.params ? ` ${JSON.stringify(e.params)}` : ""}`);
}

export const openaiRef = (name: OpenAISchema) => `openai.json#/components/schemas/${name}`;
export const anthropicRef = (name: AnthropicSchema) => `anthropic.json#/definitions/${name}`;

/** A streamed event's schema, picked by its `type` as a client's SDK picks it; undefined for a type the vendor has not. */
export function eventRef(dialect: "responses" | "anthropic", type: string): string | undefined {
  if (dialect === "responses") return type === "error" ? openaiRef("ResponseErrorEvent") : RESPONSE_EVENTS.get(type);
  if (type === "error") return anthropicRef("ErrorResponse");
  return ANTHROPIC_EVENTS.get(type);
}

function variants(union: { anyOf?: { $ref: string }[] }, resolve: (ref: string) => any, prefix: string): Map<string, string> {
  const byType = new Map<string, string>();
  for (const { $ref } of union.anyOf ?? []) {
    const type = resolve($ref)?.properties?.type;
    const name = type?.const ?? type?.enum?.[0];
    if (typeof name === "string") byType.set(name, `${prefix}${$ref}`);
  }
  return byType;
}

const RESPONSE_EVENTS = variants(openai.components.schemas.ResponseStreamEvent as any, (ref) => (openai.components.schemas as any)[ref.split("/").pop()!], "openai.json");
const ANTHROPIC_EVENTS = variants(anthropic.definitions.RawMessageStreamEvent as any, (ref) => (anthropic.definitions as any)[ref.split("/").pop()!], "anthropic.json");
