import { GatewayError, notFound } from "../../src/errors.ts";
import { withSpend, type BudgetLedger } from "../../src/keys/ledger.ts";
import type { KeyStore } from "../../src/keys/store.ts";
import { checkChanges, checkNewKey } from "../../src/keys/validate.ts";

/**
 * A stand-in for the admin API's key endpoints (contract 19) until the server has them: the real
 * key store and ledger behind the real HTTP shapes, with the admin key checked, and env keys listed
 * read-only. `requests` keeps what was asked, for tests to read.
 */
export function startAdminKeysServer(options: { store: KeyStore; ledger: BudgetLedger; adminKey: string; envKeys?: { name: string; scopes: string[] }[] }) {
  const { store, ledger, adminKey } = options;
  const requests: { method: string; path: string; body: unknown }[] = [];
  const env = (options.envKeys ?? []).map((key) => ({ id: null, source: "env", name: key.name, scopes: key.scopes }));

  async function handle(request: Request): Promise<Response> {
    const path = new URL(request.url).pathname;
    const body = request.method === "GET" || request.method === "DELETE" ? undefined : await request.json().catch(() => null);
    requests.push({ method: request.method, path, body });
    if (request.headers.get("authorization") !== `Bearer ${adminKey}`) throw new GatewayError(401, "authentication_error", "Invalid API key.");
    const [, id, action] = /^\/admin\/v1\/keys(?:\/([^/]+))?(?:\/(rotate))?$/.exec(path) ?? [];
    if (!path.startsWith("/admin/v1/keys")) throw notFound(`No route ${path}.`);
    if (id === undefined) {
      if (request.method === "POST") return Response.json(await store.create(checkNewKey(body), "main"), { status: 201 });
      if (request.method === "GET") return Response.json({ object: "list", data: [...env, ...(await Promise.all((await store.list()).map((r) => withSpend(r, ledger))))] });
    } else if (action === "rotate" && request.method === "POST") {
      return Response.json(await store.rotate(id, (body as { grace_s?: number } | null)?.grace_s ?? 0, "main"));
    } else if (action === undefined) {
      if (request.method === "GET") {
        const record = await store.find(id);
        if (!record) throw notFound(`No key with id '${id}'.`);
        return Response.json(await withSpend(record, ledger));
      }
      if (request.method === "PATCH") return Response.json(await store.update(id, checkChanges(body), "main"));
      if (request.method === "DELETE") return Response.json(await store.revoke(id, "main"));
    }
    throw new GatewayError(405, "invalid_request_error", `${request.method} is not allowed on ${path}.`);
  }

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    fetch: (request) =>
      handle(request).catch((error) => {
        if (!(error instanceof GatewayError)) throw error;
        return Response.json({ error: { type: error.type, message: error.message, ...(error.details ? { details: error.details } : {}) } }, { status: error.status });
      }),
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, stop: () => server.stop(true), [Symbol.dispose]: () => void server.stop(true) };
}
