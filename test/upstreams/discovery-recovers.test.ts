import { afterAll, expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";
import { startFakeOpenAI } from "../lib/fake-openai.ts";
import { bodyFor, where, writeToml } from "./fleet.ts";

/**
 * A model server started after parley (contract 13): while its discovery fails /health says so and
 * the 404 for its model names the failure; it routes within seconds of coming up, not at the next
 * MODELS_REFRESH_S (600 s here).
 */
const fake = await startFakeOpenAI();
fake.catalogue.ids = ["readme-llama-1m"];
// A port nothing listens on yet: the model server comes up there later.
const reserved = Bun.serve({ hostname: "127.0.0.1", port: 0, fetch: () => new Response() });
const port = reserved.port;
reserved.stop(true);
let late: ReturnType<typeof Bun.serve> | undefined;
afterAll(() => (fake.stop(), late?.stop(true)));

const { file } = writeToml(`
[upstreams.local]
kind = "openai"
base_url = "http://127.0.0.1:${port}"
`);
const { json, call } = testApp({ PARLEY_UPSTREAMS: file, MODELS_REFRESH_S: "600", RATE_LIMIT_RPM: "0" });

const status = async () => (await (await call("/health")).json()).services.local as string;

async function until(what: () => Promise<boolean>, ms = 30_000) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await what()) return;
    await Bun.sleep(50);
  }
  throw new Error("the awaited event never came");
}

test("a server that was down when parley started routes once it is up; meanwhile /health and the 404 say why", async () => {
  await until(async () => (await status()) === "unreachable");
  const missed = await json("/v1/chat/completions", bodyFor("/v1/chat/completions", "readme-llama-1m"));
  expect(missed.status).toBe(404);
  const { error } = await missed.json();
  expect(error.message).toContain("Model discovery for 'local' failed");
  expect(error.message).toContain("ECONNREFUSED");

  // The model server comes up (as llama.cpp would, on the port the file names).
  late = Bun.serve({ hostname: "127.0.0.1", port, fetch: (request) => fetch(new Request(`${fake.url}${new URL(request.url).pathname}`, request)) });
  await until(async () => (await status()) === "available");
  const response = await json("/v1/chat/completions", bodyFor("/v1/chat/completions", "readme-llama-1m"));
  expect(where(response)).toMatchObject({ status: 200, upstream: "local" });
}, 60_000);
