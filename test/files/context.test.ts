import { afterAll, beforeEach, describe, expect, test } from "bun:test";
import { humanSize } from "../../src/files/size.ts";
import { form } from "../lib/files.ts";
import { startGateway, type Gateway } from "../lib/gateway.ts";

const gateway = await startGateway({ FILE_CONTEXT_MAX_CHARS: "2000" });
afterAll(() => gateway.stop());
beforeEach(() => gateway.reset());

async function upload(target: Gateway, name: string, content: string, type: string) {
  const response = await target.call("/v1/files", { method: "POST", body: form({ name, content, type }, "assistants") });
  expect(response.status).toBe(200);
  const file = await response.json();
  return { id: file.id as string, created: new Date(file.created_at * 1000).toISOString() };
}

/** The exact block the contract gives, for one file. */
const block = (name: string, type: string, size: string, created: string, content: string) =>
  `=== Attached files (1) ===\n--- File: ${name} ---\nType: ${type}\nSize: ${size}\nCreated: ${created}\n\n${content}\n\n=== End of attached files ===`;

async function userTextSent(fileIds: string[], question = "What is in it?") {
  const response = await gateway.json("/v1/chat/completions", { model: "gpt-4o", file_ids: fileIds, messages: [{ role: "system", content: "S" }, { role: "user", content: question }] });
  expect(response.status).toBe(200);
  return gateway.openai.last().body.messages.at(-1).content as string;
}

describe("processing by type, in the exact context block", () => {
  const cases: [string, string, string, string, string][] = [
    ["notes.txt", "text/plain", "hello\nworld", "11 B", "hello\nworld"],
    ["readme.md", "text/markdown", "# Title\n\n- a\n- b", "16 B", "# Title\n\n- a\n- b"],
    ["data.json", "application/json", '{"a":1,"b":[true,null]}', "23 B", '{\n  "a": 1,\n  "b": [\n    true,\n    null\n  ]\n}'],
    ["broken.json", "application/json", '{"a":', "5 B", '[Shown as text: it is not valid JSON.]\n{"a":'],
    ["people.csv", "text/csv", 'name,age,note\n"Smith, J",42,"said ""hi"""\nAnn,7,\n', "49 B",
      'Columns: name, age, note\nRows: 2\n\n| name | age | note |\n| --- | --- | --- |\n| Smith, J | 42 | said "hi" |\n| Ann | 7 |  |'],
    ["page.html", "text/html", "<html><head><title>T</title><style>p{color:red}</style><script>alert(1)</script></head><body><h1>Menu</h1><p>Fish &amp; chips &lt;3</p><!-- hidden --></body></html>",
      "164 B", "T\nMenu\nFish & chips <3"],
    ["doc.xml", "application/xml", "<root><item>1</item></root>", "27 B", "<root><item>1</item></root>"],
  ];
  for (const [name, type, content, size, processed] of cases) {
    test(name, async () => {
      const file = await upload(gateway, name, content, type);
      expect(await userTextSent([file.id])).toBe(`${block(name, type, size, file.created, processed)}\n\nWhat is in it?`);
    });
  }
});

describe("file_ids in chat", () => {
  test("two files, in the order given, before the last user message's own text", async () => {
    const a = await upload(gateway, "a.txt", "x".repeat(1229), "text/plain");
    const b = await upload(gateway, "b.txt", "B", "text/plain");
    const sent = await userTextSent([a.id, b.id], "Compare them.");
    expect(sent).toStartWith("=== Attached files (2) ===\n--- File: a.txt ---\nType: text/plain\nSize: 1.2 KB\n");
    expect(sent).toContain(`${"x".repeat(1229)}\n\n--- File: b.txt ---\nType: text/plain\nSize: 1 B\nCreated: ${b.created}\n\nB\n\n=== End of attached files ===\n\nCompare them.`);
  });

  test("an unknown id fails the whole request with 404 naming it, and nothing goes upstream", async () => {
    const real = await upload(gateway, "r.txt", "r", "text/plain");
    for (const missing of ["file-AAAAAAAAAAAAAAAAAAAAAAAA", "not-a-file-id"]) {
      const response = await gateway.json("/v1/chat/completions", { model: "gpt-4o", file_ids: [real.id, missing], messages: [{ role: "user", content: "x" }] });
      expect(response.status).toBe(404);
      const body = await response.json();
      expect(body.error.type).toBe("not_found_error");
      expect(body.error.message).toContain(missing);
    }
    expect(gateway.openai.received).toHaveLength(0);
  });

  test("works for beta_messages and beta_textgen requests, and on Bedrock", async () => {
    const file = await upload(gateway, "n.txt", "NOTE", "text/plain");
    const expected = `${block("n.txt", "text/plain", "4 B", file.created, "NOTE")}\n\nSummarise.`;
    await gateway.json("/v1/chat/completions?target_format=beta_messages", {
      anthropic_version: "bedrock-2023-05-31", model: "anthropic.claude-3-5-haiku-20241022-v1:0", max_tokens: 50, file_ids: [file.id],
      messages: [{ role: "user", content: "First." }, { role: "assistant", content: "Ok." }, { role: "user", content: [{ type: "text", text: "Summarise." }] }],
    });
    const sent = gateway.bedrock.last().body.messages;
    expect(sent[0].content[0].text).toBe("First.");
    expect(sent.at(-1).content[0].text).toBe(expected);
    await gateway.json("/v1/chat/completions", { model: "amazon.titan-text-express-v1", file_ids: [file.id], inputText: "User: Summarise.\nBot:" });
    expect(gateway.bedrock.last().body.inputText).toBe(`User: ${expected}\nBot:`);
  });

  test("a file is cut at FILE_CONTEXT_MAX_CHARS with a line saying so", async () => {
    const small = await startGateway({ FILE_CONTEXT_MAX_CHARS: "10" });
    try {
      const file = await upload(small, "long.txt", "abcdefghijklmnopqrstuvwxyz", "text/plain");
      await small.json("/v1/chat/completions", { model: "gpt-4o", file_ids: [file.id], messages: [{ role: "user", content: "x" }] });
      expect(small.openai.last().body.messages[0].content).toContain("\n\nabcdefghij\n[… truncated: 10 of 26 characters shown]\n\n=== End of attached files ===");
    } finally {
      await small.stop();
    }
  });
});

test("human sizes: bytes under 1024, then 1024-based units with one decimal", () => {
  expect([0, 1023, 1024, 1536, 1024 ** 2 * 3.45, 1024 ** 3].map(humanSize)).toEqual(["0 B", "1023 B", "1.0 KB", "1.5 KB", "3.5 MB", "1.0 GB"]);
});
