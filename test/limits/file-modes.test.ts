import { expect, test } from "bun:test";
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { TEST_KEY } from "../lib/app.ts";
import { startCli, userDir } from "../lib/cli.ts";

/** Contract 25: the data dir is 0700 (an existing one tightened, with a log line); the database and uploads 0600. */
const mode = (path: string) => (statSync(path).mode & 0o777).toString(8);

test("a data dir others could read is tightened at start; the database and an upload are this user's alone", async () => {
  const user = userDir();
  const data = join(user.dir, "data");
  mkdirSync(data, { mode: 0o755 });
  const server = await startCli([], { cwd: user.dir, env: { ...user.env, API_KEY: TEST_KEY, PARLEY_DATA_DIR: data } });
  try {
    await server.waitFor(/tightened .*data.* to 0700/);
    expect(mode(data)).toBe("700");
    const form = new FormData();
    form.append("purpose", "assistants");
    form.append("file", new File(["private notes"], "notes.txt", { type: "text/plain" }));
    const upload = await fetch(`${server.url}/v1/files`, { method: "POST", body: form, headers: { authorization: `Bearer ${TEST_KEY}` } });
    expect(upload.status).toBe(200);
    expect(mode(join(data, "parley.db"))).toBe("600");
    const files = readdirSync(join(data, "files"));
    expect(files.length).toBeGreaterThan(0);
    expect(mode(join(data, "files"))).toBe("700");
    for (const name of files) expect([name, mode(join(data, "files", name))]).toEqual([name, "600"]);
  } finally {
    await server.stop();
  }
});
