import { expect, test } from "bun:test";
import { testApp } from "../lib/app.ts";

/** Contract 25: a chat request's file_ids need the files:read scope. */
test("a chat-only key cannot read an uploaded file through file_ids; a key with files:read can", async () => {
  const { call, json } = testApp({ API_KEYS: "sk-chat-only-key-000001:chat,sk-chat-and-read-0001:chat+files:read" });
  const form = new FormData();
  form.append("purpose", "assistants");
  form.append("file", new File(["the secret plan"], "plan.txt", { type: "text/plain" }));
  const uploaded = await (await call("/v1/files", { method: "POST", body: form })).json();
  const ask = { model: "mock", messages: [{ role: "user", content: "what does the file say?" }], file_ids: [uploaded.id] };

  const refused = await json("/v1/chat/completions", ask, { key: "sk-chat-only-key-000001" });
  expect(refused.status).toBe(403);
  const body = await refused.json();
  expect(body.error.type).toBe("permission_error");
  expect(body.error.message).toContain("files:read");
  expect(JSON.stringify(body)).not.toContain("secret plan");

  expect((await json("/v1/chat/completions", ask, { key: "sk-chat-and-read-0001" })).status).toBe(200);
  // Without file_ids the chat-only key chats as before.
  expect((await json("/v1/chat/completions", { ...ask, file_ids: [] }, { key: "sk-chat-only-key-000001" })).status).toBe(200);
});
