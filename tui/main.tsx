import { render } from "ink";
import { App, type AppProps } from "./app.tsx";
import { createClient } from "./client.ts";

/** Runs the full-screen chat until /exit or Ctrl+C; the terminal is restored on the way out. */
export async function runChat(options: { serverUrl: string; apiKey?: string; model?: string }): Promise<void> {
  const props: AppProps = { client: createClient(options.serverUrl, options.apiKey), serverUrl: options.serverUrl, model: options.model };
  // A terminal is a terminal even when CI=true is set: Ink would otherwise draw nothing until exit.
  const app = render(<App {...props} />, {
    alternateScreen: true, exitOnCtrlC: true, kittyKeyboard: { mode: "auto" }, interactive: !!process.stdout.isTTY,
  });
  await app.waitUntilExit();
}
