import { startFakeBedrock } from "./fake-bedrock.ts";
import { startFakeOpenAI } from "./fake-openai.ts";
import { testApp, TEST_KEY } from "./app.ts";

/** parley wired to a fake OpenAI and a fake Bedrock, both real local HTTP servers. */
export async function startGateway(env: Record<string, string> = {}, before?: (bedrockUrl: string) => void) {
  const openai = await startFakeOpenAI();
  const bedrock = await startFakeBedrock();
  // Files that name the fakes' ports are written before the configuration is read.
  before?.(bedrock.url);
  const gateway = testApp({
    ALPHA_API_KEY: "sk-upstream-openai-key",
    ALPHA_BASE_URL: openai.url,
    BETA_REGION: "us-east-1",
    BETA_ACCESS_KEY_ID: "AKIAFAKEFAKEFAKE",
    BETA_SECRET_ACCESS_KEY: "fake-secret-access-key",
    BETA_ENDPOINT_URL: bedrock.url,
    BETA_CONTROL_ENDPOINT_URL: bedrock.url,
    ...env,
  });
  let server: ReturnType<typeof Bun.serve> | undefined;
  return {
    ...gateway,
    openai,
    bedrock,
    /** A real listening server, for what needs real sockets (disconnects, SDK clients). */
    listen() {
      server ??= Bun.serve({ hostname: "127.0.0.1", port: 0, idleTimeout: 0, fetch: (request) => gateway.app.handle(request) });
      return `http://127.0.0.1:${server.port}`;
    },
    reset() {
      openai.reset();
      bedrock.reset();
    },
    async stop() {
      server?.stop(true);
      openai.stop();
      bedrock.stop();
    },
  };
}

export type Gateway = Awaited<ReturnType<typeof startGateway>>;
export { TEST_KEY };

export interface SseMessage {
  event?: string;
  data: any;
}

/** Reads a whole SSE body into its events; `data: [DONE]` stays a string. */
export async function readSse(response: Response): Promise<SseMessage[]> {
  const text = await response.text();
  return text
    .split(/\n\n/)
    .filter((block) => block.trim())
    .map((block) => {
      const lines = block.split("\n");
      const event = lines.find((l) => l.startsWith("event: "))?.slice(7);
      const data = lines.filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
      let parsed: unknown = data;
      try {
        parsed = JSON.parse(data);
      } catch {}
      return { ...(event ? { event } : {}), data: parsed };
    });
}
