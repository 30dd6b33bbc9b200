import { describe, expect, test } from "bun:test";
import { createSigner, signRequest, type SignedRequest } from "../../src/providers/bedrock/sigv4.ts";

// AWS's published SigV4 test suite (aws-sig-v4-test-suite), as the AWS SDK for JavaScript runs it.
const credentials = { accessKeyId: "AKIDEXAMPLE", secretAccessKey: "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY" };
const now = Date.parse("2015-08-30T12:36:00Z");
const host = "example.amazonaws.com";
const vectors: [string, Omit<SignedRequest, "host">, string, string][] = [
  ["get-vanilla", { method: "GET", path: "/" }, "host;x-amz-date", "5fa00fa31553b73ebf1942676e86291e8372ff2a2260956d9b8aae1d763fbf31"],
  ["get-unreserved", { method: "GET", path: "/-._~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" }, "host;x-amz-date", "07ef7494c76fa4850883e2b006601f940f8a34d404d0cfa977f52a65bbf5f24f"],
  ["get-utf8", { method: "GET", path: "/ሴ" }, "host;x-amz-date", "8318018e0b0f223aa2bbf98705b62bb787dc9c0e678f255a891fd03141be5d85"],
  ["get-vanilla-query-order-key-case", { method: "GET", path: "/", query: { Param2: "value2", Param1: "value1" } }, "host;x-amz-date", "b97d918cfa904a5beff61c982a1b6f458b799221646efd99d3219ec94cdf2500"],
  ["get-vanilla-utf8-query", { method: "GET", path: "/", query: { "ሴ": "bar" } }, "host;x-amz-date", "2cdec8eed098649ff3a119c94853b13c643bcf08f8b0a1d91e12c9027818dd04"],
  ["get-header-value-trim", { method: "GET", path: "/", headers: { "my-header1": "value1", "my-header2": '"a   b   c"' } }, "host;my-header1;my-header2;x-amz-date", "acc3ed3afb60bb290fc8d2dd0098b9911fcaa05412b367055dee359757a9c736"],
  ["post-vanilla", { method: "POST", path: "/" }, "host;x-amz-date", "5da7c1a2acd57cee7505fc6676e4e544621c30862966e37dddb68e92efbe5d6b"],
  ["post-vanilla-query-nonunreserved", { method: "POST", path: "/", query: { "@#$%^": "", "+": '/,?><`";:\\|][{}' } }, "host;x-amz-date", "66c82657c86e26fb25238d0e69f011edc4c6df5ae71119d7cb98ed9b87393c1e"],
  ["post-x-www-form-urlencoded", { method: "POST", path: "/", headers: { "content-type": "application/x-www-form-urlencoded" }, body: "Param1=value1" }, "content-type;host;x-amz-date", "ff11897932ad3f4e8b18135d722051e5ac45fc38421b1da7b9d196a0fe09473a"],
];

describe("SigV4 against AWS's published test suite", () => {
  for (const [name, request, signed, signature] of vectors) {
    test(name, () => {
      const headers = signRequest({ host, ...request }, credentials, "us-east-1", "service", now);
      expect(headers.authorization).toBe(`AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=${signed}, Signature=${signature}`);
    });
  }

  test("the fast Bedrock signer agrees with the general one, session token included", () => {
    const path = `/model/${encodeURIComponent("us.anthropic.claude-sonnet-4-20250514-v1:0")}/invoke`;
    const body = '{"messages":[{"role":"user","content":"hi"}]}';
    for (const creds of [credentials, { ...credentials, sessionToken: "token/with+chars=" }]) {
      const fast = createSigner("us-east-1", "bedrock")(host, path, "application/json", body, creds, now);
      const general = signRequest({ method: "POST", host, path, headers: { accept: "application/json", "content-type": "application/json" }, body }, creds, "us-east-1", "bedrock", now);
      expect(fast.authorization).toBe(general.authorization!);
    }
  });
});
