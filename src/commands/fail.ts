import { ConfigError } from "../config.ts";

/** Configuration mistakes end the process with one line and exit code 2; anything else is a bug. */
export async function exitOnConfigError<T>(run: () => T | Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`parley: ${error.message}\n`);
    process.exit(2);
  }
}

/** A command line that cannot work: one line on stderr, exit code 2. */
export function exitUsage(message: string): never {
  process.stderr.write(message.startsWith("usage:") ? `${message}\n` : `parley: ${message}\n`);
  process.exit(2);
}
