/**
 * Regenerates the vendors' reply schemas that test/shapes checks parley's bytes against:
 * - test/schemas/openai.json: the component schemas parley writes, with their $ref closure, cut
 *   from OpenAI's OpenAPI spec in a clone of openai/openai-openapi (its commit and version recorded).
 * - test/schemas/anthropic.json: JSON Schema generated from the installed @anthropic-ai/sdk's types
 *   (test/schemas/anthropic-types.ts names the roots; the SDK's version recorded).
 * - test/schemas/gemini.json: the same from the installed @google/genai SDK's reply types
 *   (test/schemas/gemini-types.ts names the roots).
 *
 *   bun scripts/vendor-schemas.ts <path to an openai/openai-openapi git clone>
 */
import { spawnSync } from "node:child_process";
import { createGenerator } from "ts-json-schema-generator";

const OPENAI_ROOTS = [
  "CreateChatCompletionResponse",
  "CreateChatCompletionStreamResponse",
  "Response",
  "ResponseStreamEvent",
  "ListModelsResponse",
  "Model",
  "ErrorResponse",
  "CreateEmbeddingResponse",
  "CreateCompletionResponse",
];

/** Schema keys validation does not read. */
const PROSE = new Set(["description", "example", "examples", "x-oaiMeta", "title", "deprecated", "x-stainless-const", "x-oaiTypeLabel", "x-oaiExpandable"]);

const OUT = new URL("../test/schemas/", import.meta.url).pathname;

const clone = process.argv[2];
if (!clone) {
  console.error("usage: bun scripts/vendor-schemas.ts <path to an openai/openai-openapi git clone>");
  process.exit(2);
}
await Bun.write(`${OUT}openai.json`, `${JSON.stringify(openaiSubset(clone), null, 1)}\n`);
await Bun.write(`${OUT}anthropic.json`, `${JSON.stringify(await anthropicSchemas(), null, 1)}\n`);
await Bun.write(`${OUT}gemini.json`, `${JSON.stringify(await sdkSchemas("gemini", "@google/genai"), null, 1)}\n`);
console.log(`wrote ${OUT}openai.json, ${OUT}anthropic.json and ${OUT}gemini.json`);

function git(dir: string, ...args: string[]): string {
  const run = spawnSync("git", ["-C", dir, ...args], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (run.status !== 0) throw new Error(`git ${args.join(" ")}: ${run.stderr}`);
  return run.stdout;
}

/** The roots and every schema they reach through $ref, refs left as the spec writes them. */
function openaiSubset(dir: string) {
  const commit = git(dir, "rev-parse", "HEAD").trim();
  const date = git(dir, "show", "-s", "--format=%cI", commit).trim();
  const spec = JSON.parse(git(dir, "show", `${commit}:openapi.json`));
  const all: Record<string, unknown> = spec.components.schemas;
  const kept = new Map<string, unknown>();
  const visit = (name: string) => {
    if (kept.has(name)) return;
    if (!Object.hasOwn(all, name)) throw new Error(`openapi.json has no schema ${name}`);
    kept.set(name, withoutProse(all[name]));
    walk(all[name]);
  };
  const walk = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(walk);
    if (!value || typeof value !== "object") return;
    for (const [key, inner] of Object.entries(value)) {
      if (key === "$ref" && typeof inner === "string") visit(inner.replace("#/components/schemas/", ""));
      else walk(inner);
    }
  };
  OPENAI_ROOTS.forEach(visit);
  return {
    $id: "openai.json",
    "x-source": {
      repo: "github.com/openai/openai-openapi", file: "openapi.json", commit, date, openapi: spec.openapi, version: spec.info.version, roots: OPENAI_ROOTS,
      note: "components.schemas cut to the roots' $ref closure; descriptions, examples and doc metadata dropped",
    },
    components: { schemas: Object.fromEntries([...kept].sort(([a], [b]) => a.localeCompare(b))) },
  };
}

/** Drops what validation does not read (descriptions, examples, doc metadata); a property named so stays. */
function withoutProse(value: unknown, inProperties = false): unknown {
  if (Array.isArray(value)) return value.map((v) => withoutProse(v));
  if (!value || typeof value !== "object") return value;
  const entries = Object.entries(value).filter(([key]) => inProperties || !PROSE.has(key));
  return Object.fromEntries(entries.map(([key, inner]) => [key, withoutProse(inner, !inProperties && key === "properties")]));
}

/** An SDK's types named in test/schemas/<name>-types.ts as JSON Schema, as the generator writes them (closed objects, every field required). */
function generated(name: string): Record<string, any> {
  const generator = createGenerator({
    path: new URL(`../test/schemas/${name}-types.ts`, import.meta.url).pathname,
    tsconfig: new URL("../tsconfig.json", import.meta.url).pathname,
    type: "*",
    skipTypeCheck: true,
    expose: "export",
    jsDoc: "none",
    topRef: false,
  });
  return (generator.createSchema("*") as { definitions: Record<string, any> }).definitions;
}

/** The Anthropic SDK's reply types. */
async function anthropicSchemas() {
  // `PageResponse<ModelInfo>` is not a name a $ref can carry as it is.
  const definitions = JSON.parse(JSON.stringify(generated("anthropic")).replaceAll("PageResponse<ModelInfo>", "ModelInfoPage")) as Record<string, any>;
  return {
    $id: "anthropic.json",
    "x-source": {
      package: "@anthropic-ai/sdk",
      version: (await Bun.file(new URL("../node_modules/@anthropic-ai/sdk/package.json", import.meta.url)).json()).version,
      generator: "ts-json-schema-generator",
      roots: "test/schemas/anthropic-types.ts",
    },
    definitions,
  };
}

/** Another SDK's reply types, as they are (`@google/genai`'s). */
async function sdkSchemas(name: string, pkg: string) {
  return {
    $id: `${name}.json`,
    "x-source": {
      package: pkg,
      version: (await Bun.file(new URL(`../node_modules/${pkg}/package.json`, import.meta.url)).json()).version,
      generator: "ts-json-schema-generator",
      roots: `test/schemas/${name}-types.ts`,
    },
    definitions: generated(name),
  };
}
