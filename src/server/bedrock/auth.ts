import { timingSafeEqual } from "node:crypto";
import type { Scope } from "../../config.ts";
import { GatewayError } from "../../errors.ts";
import { signRequest } from "../../providers/bedrock/sigv4.ts";
import { admit, authorize, principalOf, type Guard, type Principal } from "../auth.ts";

/** INGRESS_AWS_CREDENTIALS: the access key AWS clients sign with, standing for API_KEY. */
export interface IngressCredentials {
  accessKeyId: string;
  secretAccessKey: string;
}

const SIGV4 = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/;
/** AWS refuses a signature more than 15 minutes from its clock. */
const SKEW_MS = 15 * 60_000;

export const isSigned = (request: Request) => request.headers.get("authorization")?.startsWith("AWS4-HMAC-SHA256 ") === true;

const denied = (message: string) => new GatewayError(403, "permission_error", message);

/**
 * What a signature's header says, checked before a byte of the body is read (contract 25): that
 * parley takes signatures at all, the key id, the service and the date. Only a request that passes
 * has its body read, to check the signature itself.
 */
export function checkSigned(credentials: IngressCredentials | undefined, mainKey: string | undefined, request: Request): void {
  if (!credentials) throw denied("This parley takes no AWS signatures: send a parley key as a bearer token (AWS_BEARER_TOKEN_BEDROCK=<parley key>), or set INGRESS_AWS_CREDENTIALS.");
  if (!mainKey) throw denied("INGRESS_AWS_CREDENTIALS stands for API_KEY, which is not set.");
  claims(request, credentials);
}

/**
 * The principal of a Bedrock Runtime call: a bearer key (the SDKs send AWS_BEARER_TOKEN_BEDROCK
 * so) as on every endpoint, or a SigV4 signature made with INGRESS_AWS_CREDENTIALS, checked with
 * parley's own signer and standing for API_KEY. `body` is needed for a signed request only.
 */
export function bedrockPrincipal(guard: Guard, credentials: IngressCredentials | undefined, mainKey: string | undefined, request: Request, body: string, scope: Scope | readonly Scope[], headers: Record<string, string>): Principal | Promise<Principal> {
  if (!isSigned(request)) return authorize(guard, request, scope, headers);
  checkSigned(credentials, mainKey, request);
  checkSignature(request, body, credentials!);
  return admit(guard, principalOf(guard, mainKey!), scope, headers);
}

/** The signature header's parts, once its key id, service and date are found good. */
function claims(request: Request, credentials: IngressCredentials) {
  const match = SIGV4.exec(request.headers.get("authorization")!);
  if (!match) throw denied("The request signature is malformed.");
  const [, keyId, , region, service, signedHeaders, signature] = match;
  if (keyId !== credentials.accessKeyId) throw denied("The security token included in the request is invalid.");
  // A signature for another service is not one for Bedrock, whatever region the client chose.
  if (service !== "bedrock") throw denied(`Credential should be scoped to correct service: 'bedrock' (the signature names '${service}').`);
  const amzDate = request.headers.get("x-amz-date") ?? "";
  const date = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(amzDate);
  const at = date ? Date.parse(`${date[1]}-${date[2]}-${date[3]}T${date[4]}:${date[5]}:${date[6]}Z`) : NaN;
  if (!Number.isFinite(at) || Math.abs(Date.now() - at) > SKEW_MS) throw denied("Signature expired or not yet valid: check the clock (x-amz-date).");
  return { region: region!, service: service!, signedHeaders: signedHeaders!, signature: signature!, at };
}

function checkSignature(request: Request, body: string, credentials: IngressCredentials): void {
  const { region, service, signedHeaders, signature, at } = claims(request, credentials);
  const url = new URL(request.url);
  const names = signedHeaders.split(";");
  const signed: Record<string, string> = {};
  for (const name of names) if (name !== "host" && name !== "x-amz-date" && name !== "x-amz-security-token") signed[name] = request.headers.get(name) ?? "";
  const token = names.includes("x-amz-security-token") ? request.headers.get("x-amz-security-token") ?? undefined : undefined;
  const expected = signRequest(
    // The query as sent, every pair of a repeated name: the signature covers exactly what the handler may read.
    { method: request.method, host: request.headers.get("host") ?? url.host, path: url.pathname, query: [...url.searchParams], headers: signed, body },
    { ...credentials, ...(token ? { sessionToken: token } : {}) },
    region,
    service,
    at,
  ).authorization!.slice(-64);
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) throw denied("The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method.");
}
