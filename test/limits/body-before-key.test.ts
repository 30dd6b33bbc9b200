import { expect, test } from "bun:test";
import { signRequest } from "../../src/providers/bedrock/sigv4.ts";
import { testApp } from "../lib/app.ts";

/** Contract 25: no body is read before the key is checked, SigV4 included. */

/** A body that sends one chunk and then never ends, and says whether anyone read past it. */
function endless() {
  let pulls = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      pulls++;
      if (pulls === 1) controller.enqueue(new TextEncoder().encode("{"));
      // Never closes: a reader that waits for the end waits forever.
      return new Promise(() => {});
    },
  });
  return { body, pulls: () => pulls };
}

const signedHeaders = (keyId: string, secret: string, service = "bedrock", now = Date.now()) =>
  signRequest({ method: "POST", host: "localhost", path: "/model/mock/converse", headers: { "content-type": "application/json" }, body: "{}" }, { accessKeyId: keyId, secretAccessKey: secret }, "us-east-1", service, now);

test("a SigV4 request to a parley without ingress credentials is refused without reading its body", async () => {
  const { app } = testApp();
  const { body } = endless();
  const response = await app.handle(new Request("http://localhost/model/mock/converse", { method: "POST", body, headers: { "content-type": "application/json", ...signedHeaders("AKIAANY", "secret") } }));
  expect(response.status).toBe(403);
  expect((await response.json()).message).toContain("bearer");
});

test("a SigV4 request with another key id, service or date is refused before its body is read", async () => {
  const { app } = testApp({ INGRESS_AWS_CREDENTIALS: "AKIAPARLEYINGRESS:parley-ingress-secret" });
  for (const headers of [signedHeaders("AKIASOMEONEELSE", "x"), signedHeaders("AKIAPARLEYINGRESS", "parley-ingress-secret", "s3"), signedHeaders("AKIAPARLEYINGRESS", "parley-ingress-secret", "bedrock", Date.now() - 3_600_000)]) {
    const { body } = endless();
    const response = await app.handle(new Request("http://localhost/model/mock/converse", { method: "POST", body, headers: { "content-type": "application/json", ...headers } }));
    expect(response.status).toBe(403);
  }
});

test("a request without a key is refused without reading its body, on every kind of route", async () => {
  const { app } = testApp();
  for (const path of ["/v1/chat/completions", "/v1/messages", "/v1/embeddings", "/model/mock/converse", "/v1/files"]) {
    const { body } = endless();
    const response = await app.handle(new Request(`http://localhost${path}`, { method: "POST", body, headers: { "content-type": "application/json" } }));
    expect([path, [401, 403].includes(response.status)]).toEqual([path, true]);
  }
});

test("a signature over one query is not one over the same query with a parameter repeated", async () => {
  const { app } = testApp({ INGRESS_AWS_CREDENTIALS: "AKIAPARLEYINGRESS:parley-ingress-secret" });
  const credentials = { accessKeyId: "AKIAPARLEYINGRESS", secretAccessKey: "parley-ingress-secret" };
  const sign = (query: [string, string][]) => signRequest({ method: "GET", host: "localhost", path: "/foundation-models", query, body: "" }, credentials, "us-east-1", "bedrock");
  const good = await app.handle(new Request("http://localhost/foundation-models?byProvider=a&byProvider=b", { headers: sign([["byProvider", "a"], ["byProvider", "b"]]) }));
  expect(good.status).toBe(200);
  // Signed for byProvider=b alone; sent with byProvider=a before it.
  const smuggled = await app.handle(new Request("http://localhost/foundation-models?byProvider=a&byProvider=b", { headers: sign([["byProvider", "b"]]) }));
  expect(smuggled.status).toBe(403);
});
