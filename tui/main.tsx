import { render } from "ink";
import { App, type AppProps } from "./app.tsx";
import { createClient } from "./client.ts";
import { openStore } from "./store.ts";

export interface ChatOptions {
  serverUrl: string;
  apiKey?: string;
  model?: string;
  defaultModel?: string;
  /** Where conversations, prompt history and settings are kept (PARLEY_DATA_DIR). */
  dataDir: string;
  resume?: number | "last";
}

/** Runs the full-screen chat until /exit or Ctrl+C; the terminal is restored on the way out. */
export async function runChat(options: ChatOptions): Promise<void> {
  const store = openStore(options.dataDir);
  const props: AppProps = {
    client: createClient(options.serverUrl, options.apiKey),
    store,
    serverUrl: options.serverUrl,
    model: options.model,
    defaultModel: options.defaultModel,
    resume: options.resume,
  };
  // A terminal is a terminal even when CI=true is set: Ink would otherwise draw nothing until exit.
  // Ctrl+C is the app's own: it stops a reply first, and quits only when none is coming.
  const app = render(<App {...props} />, {
    alternateScreen: true, exitOnCtrlC: false, kittyKeyboard: { mode: "auto" }, interactive: !!process.stdout.isTTY,
  });
  try {
    await app.waitUntilExit();
  } finally {
    store.close();
  }
}
