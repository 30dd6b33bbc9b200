import { GatewayError, invalidRequest, notFound, validationError } from "../../errors.ts";
import { withSpend } from "../../keys/ledger.ts";
import { checkChanges, checkNewKey } from "../../keys/validate.ts";
import type { Principal } from "../auth.ts";
import { jsonObject, readText } from "../edge/body.ts";
import type { PlainEndpoint } from "../edge/endpoint.ts";
import type { Keys } from "../keys.ts";


const KEY_ID = { name: "id", in: "path", required: true, schema: { type: "string" }, description: "the key's id, or its name" };
const JSON_BODY = { required: true, content: { "application/json": { schema: { type: "object" } } } };

/**
 * Keys managed at runtime (contract 19): create (the secret shown once), list (env keys beside,
 * read-only), read, change, revoke, rotate; and the audit log of every admin change. All need `admin`.
 */
export function adminKeys(keys: Keys): PlainEndpoint[] {
  const { store, ledger } = keys;
  /**
   * A change is answered only once every worker's lookup will ask for changes at its next request
   * (lookup.ts, `checkEveryMs`; with Postgres, its refresh): in force on every worker for the next
   * request, as contract 19 says.
   */
  const inForce = <T>(value: T) => Bun.sleep(keys.inForceAfterMs).then(() => value);
  const actor = (principal: Principal | undefined) => principal!.label;
  /** An env key named by the path: 403 for a change, naming where it is set. */
  const env = (idOrName: string) => keys.envKeys.find((k) => k.name === idOrName);
  const unchangeable = (idOrName: string) => {
    const found = env(idOrName);
    if (found) throw new GatewayError(403, "permission_error", `Key '${found.name}' is set in ${found.set_in}: change or remove it there, then restart parley.`);
  };
  const idOf = async (idOrName: string) => {
    unchangeable(idOrName);
    const record = await store.find(idOrName);
    if (!record) throw notFound(`No key with the id or name '${idOrName.slice(0, 100)}'.`);
    return record.id;
  };
  const base = { kind: "plain", scope: "admin", errors: "parley", cors: false } as const;
  return [
    {
      ...base, method: "POST", path: "/admin/v1/keys", body: "json",
      async answer({ body, principal }) {
        const issued = await store.create(checkNewKey(body), actor(principal));
        return inForce(Response.json(issued, { status: 201 }));
      },
      openapi: { summary: "Create a key: the answer holds its secret (`key`), shown this once", tags: ["admin"], requestBody: JSON_BODY },
    },
    {
      ...base, method: "GET", path: "/admin/v1/keys",
      async answer() {
        const runtime = await Promise.all((await store.list()).map((record) => withSpend(record, ledger)));
        return { object: "list", data: [...keys.envKeys, ...runtime] };
      },
      openapi: { summary: "Every key: env keys (read-only, source env) and runtime keys with their spend; never a secret", tags: ["admin"] },
    },
    {
      ...base, method: "GET", path: "/admin/v1/keys/:id",
      async answer({ params }) {
        const listed = env(params[0]!);
        if (listed) return listed;
        const record = await store.find(params[0]!);
        if (!record) throw notFound(`No key with the id or name '${params[0]!.slice(0, 100)}'.`);
        return withSpend(record, ledger);
      },
      openapi: { summary: "One key, with its spend in the current period", tags: ["admin"], parameters: [KEY_ID] },
    },
    {
      ...base, method: "PATCH", path: "/admin/v1/keys/:id", body: "json",
      async answer({ params, body, principal }) {
        const changes = checkChanges(body);
        const id = await idOf(params[0]!);
        return inForce(await withSpend(await store.update(id, changes, actor(principal)), ledger));
      },
      openapi: { summary: "Change a key's fields (null clears one); in force at the next request on every worker", tags: ["admin"], parameters: [KEY_ID], requestBody: JSON_BODY },
    },
    {
      ...base, method: "DELETE", path: "/admin/v1/keys/:id",
      async answer({ params, principal }) {
        return inForce(await store.revoke(await idOf(params[0]!), actor(principal)));
      },
      openapi: { summary: "Revoke a key at once (its record stays, with revoked_at)", tags: ["admin"], parameters: [KEY_ID] },
    },
    {
      ...base, method: "POST", path: "/admin/v1/keys/:id/rotate",
      async answer({ request, params, principal }) {
        // The body is optional here: `{}` or none rotates at once.
        const raw = await readText(request, 64 * 1024);
        const grace = raw.trim() === "" ? 0 : (jsonObject(raw).grace_s ?? 0);
        if (!Number.isSafeInteger(grace) || (grace as number) < 0 || (grace as number) > 30 * 86_400) {
          throw validationError("grace_s", "whole seconds from 0 to 2592000 (30 days)");
        }
        return inForce(await store.rotate(await idOf(params[0]!), grace as number, actor(principal)));
      },
      openapi: {
        summary: "A new secret, shown this once; the old one stops at once, or after grace_s seconds", tags: ["admin"], parameters: [KEY_ID],
        requestBody: { required: false, content: { "application/json": { schema: { type: "object", properties: { grace_s: { type: "integer", minimum: 0 } } } } } },
      },
    },
    {
      ...base, method: "GET", path: "/admin/v1/audit",
      async answer({ query }) {
        const limit = query.limit === undefined ? 100 : Number(query.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 1000) throw validationError("limit", "an integer from 1 to 1000");
        const before = query.before === undefined ? undefined : Number(query.before);
        if (before !== undefined && !Number.isInteger(before)) throw invalidRequest("before: an audit entry's id");
        const data = await store.audit({ limit, ...(before !== undefined ? { before } : {}) });
        return { object: "list", data };
      },
      openapi: {
        summary: "Every admin change, newest first: when, which key's label, what (never a secret)", tags: ["admin"],
        parameters: [
          { name: "limit", in: "query", required: false, schema: { type: "integer", default: 100, minimum: 1, maximum: 1000 } },
          { name: "before", in: "query", required: false, schema: { type: "integer" }, description: "an entry's id: the page after it" },
        ],
      },
    },
  ];
}
