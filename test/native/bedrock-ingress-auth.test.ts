import { AccessDeniedException, BedrockRuntimeClient, ConverseCommand, ConverseStreamCommand, ThrottlingException, type Message } from "@aws-sdk/client-bedrock-runtime";
import { NodeHttpHandler } from "@smithy/node-http-handler";
import { afterAll, describe, expect, test } from "bun:test";
import { startGateway, TEST_KEY } from "../lib/gateway.ts";

/** AWS clients that sign (SigV4) instead of sending a bearer key, and the limits every key has. */
const hello: Message[] = [{ role: "user", content: [{ text: "Hello" }] }];
const requestHandler = new NodeHttpHandler();

describe("SigV4 with INGRESS_AWS_CREDENTIALS", async () => {
  const gateway = await startGateway({ UPSTREAM_RETRIES: "0", RATE_LIMIT_RPM: "0", INGRESS_AWS_CREDENTIALS: "AKIAPARLEYINGRESS:parley-ingress-secret" });
  const endpoint = gateway.listen();
  afterAll(() => gateway.stop());
  const signing = (accessKeyId: string, secretAccessKey: string, region = "eu-west-1") =>
    new BedrockRuntimeClient({ endpoint, region, credentials: { accessKeyId, secretAccessKey }, requestHandler, maxAttempts: 1 });

  test("a request signed with those credentials is served, as API_KEY's; a stream too", async () => {
    const client = signing("AKIAPARLEYINGRESS", "parley-ingress-secret");
    const reply = await client.send(new ConverseCommand({ modelId: "gpt-4o", messages: hello }));
    expect(reply.output?.message?.content?.[0]?.text).toBe("Hello from OpenAI");
    const stream = await client.send(new ConverseStreamCommand({ modelId: "amazon.nova-micro-v1:0", messages: hello }));
    let text = "";
    for await (const event of stream.stream!) text += event.contentBlockDelta?.delta?.text ?? "";
    expect(text).toBe("Hello from Converse");
    // Re-signed for the upstream with its own credentials.
    expect(gateway.bedrock.received[0]!.headers.get("authorization")).toContain("Credential=AKIAFAKEFAKEFAKE/");
  });

  test("a wrong secret or another key id is an AccessDeniedException", async () => {
    const wrongSecret = await signing("AKIAPARLEYINGRESS", "not-the-secret").send(new ConverseCommand({ modelId: "gpt-4o", messages: hello })).catch((e) => e);
    expect(wrongSecret).toBeInstanceOf(AccessDeniedException);
    expect(wrongSecret.message).toContain("signature");
    const otherKey = await signing("AKIASOMEONEELSE", "parley-ingress-secret").send(new ConverseCommand({ modelId: "gpt-4o", messages: hello })).catch((e) => e);
    expect(otherKey).toBeInstanceOf(AccessDeniedException);
    // Signed right, but for another service: not a Bedrock signature.
    const { signRequest } = await import("../../src/providers/bedrock/sigv4.ts");
    const body = JSON.stringify({ messages: hello });
    const url = new URL(`${endpoint}/model/gpt-4o/converse`);
    const signed = signRequest({ method: "POST", host: url.host, path: url.pathname, headers: { "content-type": "application/json" }, body }, { accessKeyId: "AKIAPARLEYINGRESS", secretAccessKey: "parley-ingress-secret" }, "eu-west-1", "s3");
    const otherService = await fetch(url, { method: "POST", body, headers: { "content-type": "application/json", ...signed } });
    expect([otherService.status, otherService.headers.get("x-amzn-errortype")?.split(":")[0]]).toEqual([403, "AccessDeniedException"]);
  });

  test("a bearer key still works beside it", async () => {
    const client = new BedrockRuntimeClient({ endpoint, region: "us-east-1", token: { token: TEST_KEY }, authSchemePreference: ["httpBearerAuth"], requestHandler, maxAttempts: 1 });
    expect((await client.send(new ConverseCommand({ modelId: "mock", messages: hello }))).stopReason).toBe("end_turn");
  });
});

test("the key's rate limit answers a ThrottlingException", async () => {
  const gateway = await startGateway({ RATE_LIMIT_RPM: "1" });
  try {
    const client = new BedrockRuntimeClient({ endpoint: gateway.listen(), region: "us-east-1", token: { token: TEST_KEY }, authSchemePreference: ["httpBearerAuth"], requestHandler, maxAttempts: 1 });
    await client.send(new ConverseCommand({ modelId: "mock", messages: hello }));
    const error = await client.send(new ConverseCommand({ modelId: "mock", messages: hello })).catch((e) => e);
    expect(error).toBeInstanceOf(ThrottlingException);
  } finally {
    await gateway.stop();
  }
});
