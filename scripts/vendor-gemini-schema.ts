/**
 * Regenerates test/schemas/gemini.json: JSON Schema of the installed @google/genai SDK's reply types
 * (test/schemas/gemini-types.ts names the roots; the SDK's version recorded), which the tests of
 * the Gemini wire module check parley's replies and stream chunks against.
 *
 *   bun scripts/vendor-gemini-schema.ts
 */
import { createGenerator } from "ts-json-schema-generator";

const OUT = new URL("../test/schemas/gemini.json", import.meta.url).pathname;

const generator = createGenerator({
  path: new URL("../test/schemas/gemini-types.ts", import.meta.url).pathname,
  tsconfig: new URL("../tsconfig.json", import.meta.url).pathname,
  type: "*",
  skipTypeCheck: true,
  expose: "export",
  jsDoc: "none",
  topRef: false,
});
const schema = generator.createSchema("*") as { definitions: Record<string, unknown> };
const version = (await Bun.file(new URL("../node_modules/@google/genai/package.json", import.meta.url)).json()).version;
const out = {
  $id: "gemini.json",
  "x-source": { package: "@google/genai", version, generator: "ts-json-schema-generator", roots: "test/schemas/gemini-types.ts" },
  definitions: schema.definitions,
};
await Bun.write(OUT, `${JSON.stringify(out, null, 1)}\n`);
console.log(`wrote ${OUT}`);
