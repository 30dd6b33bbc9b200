import Ajv from "ajv";
import addFormats from "ajv-formats";
import draft6 from "ajv/dist/refs/json-schema-draft-06.json";
import schemas from "har-schema";
import { mkdtempSync, readFileSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Har } from "../../src/cassettes/har.ts";

/** Checks a file against the HAR 1.2 JSON schema (har-schema, the schema har-validator uses): the errors, or [] when valid. */
export function harErrors(har: unknown): string[] {
  const validate = harValidator();
  return validate(har) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
}

let compiled: ReturnType<Ajv["compile"]> | undefined;
function harValidator() {
  if (compiled) return compiled;
  // har-schema's schemas carry keywords of their own (`optional`, `min`): not strict.
  const ajv = new Ajv({ strict: false, allErrors: true });
  ajv.addMetaSchema(draft6);
  addFormats(ajv);
  for (const [name, schema] of Object.entries(schemas)) if (name !== "har") ajv.addSchema(schema);
  return (compiled = ajv.compile(schemas.har!));
}

export const readHar = (file: string): Har => JSON.parse(readFileSync(file, "utf8"));

export const tempDir = (prefix = "parley-cassettes-") => mkdtempSync(join(tmpdir(), prefix));

/** Every file a directory holds, as text: what a secret must never be found in. */
export function allText(dir: string): string {
  return readdirSync(dir).map((name) => readFileSync(join(dir, name), "utf8")).join("\n");
}

/** A converted reply's parts that parley makes anew for every answer (ids, times): the rest must be identical on replay. */
export function stable(text: string): string {
  return text
    .replace(/\b(chatcmpl-|msg_|resp_|call_|toolu_|fc_|rs_|msg-)[0-9a-f]{24}\b/g, "$1<id>")
    .replace(/"(created|created_at)":\d+/g, '"$1":0');
}
