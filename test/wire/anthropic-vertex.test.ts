import { expect, test } from "bun:test";
import { fromVertexBody, toVertexBody, vertexPath } from "../../src/wire/anthropic/vertex.ts";

/** Claude's Messages body as Vertex takes it, both ways, every other byte kept; Vertex's paths read. */
const body = `{"model":"claude-sonnet-4-5","max_tokens":10,"messages":[{"role":"user","content":"\\u00e9t\\u00e9"}],"temperature":0.10000000000000001,"stream":true}`;

test("to Vertex: model out, version in, the rest as written", () => {
  expect(toVertexBody(body, JSON.parse(body))).toBe(`{"anthropic_version":"vertex-2023-10-16","max_tokens":10,"messages":[{"role":"user","content":"\\u00e9t\\u00e9"}],"temperature":0.10000000000000001,"stream":true}`);
  const versioned = `{"anthropic_version":"vertex-2023-10-16","max_tokens":1,"messages":[]}`;
  expect(toVertexBody(versioned, JSON.parse(versioned))).toBe(versioned);
});

test("from a Vertex client: version out, the model the route chose in", () => {
  const vertex = toVertexBody(body, JSON.parse(body));
  expect(fromVertexBody(vertex, JSON.parse(vertex), "claude-sonnet-4-5-20250929")).toBe(`{"model":"claude-sonnet-4-5-20250929","max_tokens":10,"messages":[{"role":"user","content":"\\u00e9t\\u00e9"}],"temperature":0.10000000000000001,"stream":true}`);
});

test("Vertex's paths, the count's included", () => {
  expect(vertexPath("/v1/projects/my-proj/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict")).toEqual({
    project: "my-proj", location: "us-east5", publisher: "anthropic", model: "claude-sonnet-4-5@20250929", method: "streamRawPredict",
  });
  expect(vertexPath("/v1/projects/p/locations/global/publishers/anthropic/models/count-tokens:rawPredict")).toMatchObject({ model: "count-tokens", method: "rawPredict" });
  expect(vertexPath("/v1/messages")).toBeUndefined();
});
