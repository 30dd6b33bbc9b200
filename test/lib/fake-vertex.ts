import { createVerify } from "node:crypto";
import { message, messageEvents } from "./fake-anthropic.ts";
import { geminiResponder, googleError } from "./fake-gemini.ts";
import { scripted } from "./scripted.ts";

/**
 * A fake Vertex AI on 127.0.0.1, with its own Google token endpoint (`POST /token`). The endpoint
 * takes a service account's RS256 JWT (checked against the test's public key: signature, issuer,
 * audience, scope, lifetime) or an authorized user's refresh token, and hands out short tokens
 * that the API then checks as bearers. Claude answers Anthropic's shapes at `:rawPredict` and
 * `:streamRawPredict` (refusing a body with a `model` or without `anthropic_version`, as Vertex
 * does) and `count-tokens:rawPredict`; Gemini models answer as the fake Gemini API does;
 * embedding models answer `:predict`.
 */

type Json = Record<string, any>;

export type ClaudeScript = { kind: "json"; body: Json } | { kind: "stream"; events: Json[] } | { kind: "error"; status: number; type: string; message: string };

export interface ClaudeReceived {
  model: string;
  method: string;
  project: string;
  region: string;
  headers: Headers;
  body: Json;
  raw: string;
}

export interface TokenRequest {
  grant: string;
  claims?: Json;
  header?: Json;
}

export const FAKE_PROJECT = "parley-test";
export const AUTHORIZED_USER = { client_id: "fake-client.apps.googleusercontent.com", client_secret: "fake-client-secret", refresh_token: "1//fake-refresh-token" };

/** A service account key made for this run, and the public half the fake checks it with. */
export async function serviceAccount(tokenUri: string) {
  const pair = (await crypto.subtle.generateKey({ name: "RSASSA-PKCS1-v1_5", modulusLength: 2048, publicExponent: new Uint8Array([1, 0, 1]), hash: "SHA-256" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const pem = (label: string, der: ArrayBuffer) => `-----BEGIN ${label}-----\n${Buffer.from(der).toString("base64").replace(/(.{64})/g, "$1\n")}\n-----END ${label}-----\n`;
  return {
    json: {
      type: "service_account", project_id: FAKE_PROJECT, private_key_id: "fakekeyid01", client_email: `parley@${FAKE_PROJECT}.iam.gserviceaccount.com`, client_id: "1234567890",
      private_key: pem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", pair.privateKey)), token_uri: tokenUri,
    },
    publicKey: pem("PUBLIC KEY", await crypto.subtle.exportKey("spki", pair.publicKey)),
  };
}

export async function startFakeVertex() {
  const gemini = geminiResponder();
  const claude = scripted<ClaudeScript, ClaudeReceived>();
  const tokens = { requests: [] as TokenRequest[], issued: new Set<string>(["ya29.static-token"]), publicKey: "", lifetime: 3599 };
  let issued = 0;
  let url = "";

  const server = Bun.serve({
    hostname: "127.0.0.1",
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const path = new URL(request.url).pathname;
      if (path === "/token" && request.method === "POST") return token(new URLSearchParams(await request.text()));
      const bearer = request.headers.get("authorization")?.replace(/^Bearer /, "");
      if (!bearer || !tokens.issued.has(bearer)) return googleError(401, "Request had invalid authentication credentials. Expected OAuth 2 access token.");
      const match = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(anthropic|google)\/models\/([^:/]+):(\w+)$/.exec(path);
      if (!match || request.method !== "POST") return googleError(404, `Not found: ${path}`);
      const [, project, region, publisher, model, method] = match as unknown as string[];
      if (project !== FAKE_PROJECT) return googleError(403, `Permission denied on project ${project}.`);
      if (publisher === "google") return method === "predict" ? predict(request) : gemini.respond(request, decodeURIComponent(model!), method!);
      return rawPredict(request, { model: decodeURIComponent(model!), method: method!, project: project!, region: region! });
    },
  });
  url = `http://127.0.0.1:${server.port}`;

  function token(form: URLSearchParams): Response {
    const grant = form.get("grant_type") ?? "";
    const refuse = (why: string) => Response.json({ error: "invalid_grant", error_description: why }, { status: 400 });
    if (grant === "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      const [h, c, s] = (form.get("assertion") ?? "").split(".");
      if (!h || !c || !s) return refuse("Invalid JWT.");
      const verify = createVerify("RSA-SHA256");
      verify.update(`${h}.${c}`);
      if (!tokens.publicKey || !verify.verify(tokens.publicKey, Buffer.from(s, "base64url"))) return refuse("Invalid JWT Signature.");
      const header = JSON.parse(Buffer.from(h, "base64url").toString());
      const claims = JSON.parse(Buffer.from(c, "base64url").toString());
      tokens.requests.push({ grant, claims, header });
      const now = Date.now() / 1000;
      if (header.alg !== "RS256") return refuse("Invalid JWT algorithm.");
      if (claims.aud !== `${url}/token`) return refuse(`Invalid JWT audience: ${claims.aud}`);
      if (!String(claims.scope).includes("https://www.googleapis.com/auth/cloud-platform")) return refuse("Invalid scope.");
      if (!String(claims.iss).endsWith(".iam.gserviceaccount.com")) return refuse("Invalid issuer.");
      if (Math.abs(claims.iat - now) > 300 || claims.exp - claims.iat > 3600 || claims.exp < now) return refuse("Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.");
    } else if (grant === "refresh_token") {
      tokens.requests.push({ grant });
      if (form.get("client_id") !== AUTHORIZED_USER.client_id || form.get("client_secret") !== AUTHORIZED_USER.client_secret || form.get("refresh_token") !== AUTHORIZED_USER.refresh_token) {
        return refuse("Token has been expired or revoked.");
      }
    } else {
      return Response.json({ error: "unsupported_grant_type", error_description: `Invalid grant_type: ${grant}` }, { status: 400 });
    }
    const access = `ya29.fake-${++issued}`;
    tokens.issued.add(access);
    return Response.json({ access_token: access, expires_in: tokens.lifetime, token_type: "Bearer" });
  }

  async function rawPredict(request: Request, at: Omit<ClaudeReceived, "headers" | "body" | "raw">): Promise<Response> {
    const raw = await request.text();
    const body = JSON.parse(raw);
    claude.controls.received.push({ ...at, headers: request.headers, body, raw });
    const anthropicError = (status: number, type: string, text: string) => Response.json({ type: "error", error: { type, message: text } }, { status });
    if (at.model === "count-tokens" && at.method === "rawPredict") {
      if (typeof body.model !== "string") return anthropicError(400, "invalid_request_error", "model: Field required");
      return Response.json({ input_tokens: 9 + (raw.length % 40) });
    }
    if (at.method !== "rawPredict" && at.method !== "streamRawPredict") return googleError(404, `Method ${at.method} not found.`);
    if (body.model !== undefined) return anthropicError(400, "invalid_request_error", "model: Extra inputs are not permitted");
    if (body.anthropic_version !== "vertex-2023-10-16") return anthropicError(400, "invalid_request_error", "anthropic_version: Input should be 'vertex-2023-10-16'");
    const streamed = at.method === "streamRawPredict";
    const script = claude.take() ?? (streamed ? { kind: "stream", events: messageEvents(vertexModel(at.model)) } : { kind: "json", body: message(vertexModel(at.model)) });
    if (script.kind === "error") return anthropicError(script.status, script.type, script.message);
    if (script.kind === "json") return Response.json(script.body);
    const text = script.events.map((e) => `event: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`).join("");
    return new Response(text, { headers: { "content-type": "text/event-stream" } });
  }

  async function predict(request: Request): Promise<Response> {
    const body = await request.json();
    const size = body.parameters?.outputDimensionality ?? 3;
    return Response.json({ predictions: body.instances.map((i: Json) => ({ embeddings: { values: Array.from({ length: size }, (_, k) => k + i.content.length / 10), statistics: { token_count: i.content.length, truncated: false } } })) });
  }

  return {
    url,
    tokenUrl: `${url}/token`,
    tokens,
    gemini: gemini.controls,
    signatures: gemini.signatures,
    claude: claude.controls,
    reset() {
      gemini.controls.reset();
      claude.controls.reset();
      tokens.requests.length = 0;
    },
    stop: () => server.stop(true),
  };
}

/** Vertex answers with Anthropic's name of the model (`claude-sonnet-4-5@20250929` -> `claude-sonnet-4-5-20250929`). */
const vertexModel = (model: string) => model.replace("@", "-");

export type FakeVertex = Awaited<ReturnType<typeof startFakeVertex>>;
