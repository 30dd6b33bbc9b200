import type { ChatRequest } from "../ir.ts";
import { baseType } from "./extract.ts";
import { humanSize } from "./size.ts";
import type { FileMeta } from "./store.ts";

export interface Attachment {
  meta: FileMeta;
  text: string;
}


function contextBlock(files: Attachment[]): string {
  const sections = files.map(({ meta, text }) =>
    [
      `--- File: ${meta.filename} ---`,
      `Type: ${baseType(meta.contentType)}`,
      `Size: ${humanSize(meta.bytes)}`,
      `Created: ${new Date(meta.createdAt * 1000).toISOString()}`,
      "",
      text,
      "",
    ].join("\n"),
  );
  return [`=== Attached files (${files.length}) ===`, ...sections, "=== End of attached files ==="].join("\n");
}

/** Puts the block in front of the text of the last user message. */
export function attach(request: ChatRequest, files: Attachment[]): void {
  const block = contextBlock(files);
  const user = request.messages.findLast((m) => m.role === "user");
  if (!user) {
    request.messages.push({ role: "user", content: [{ type: "text", text: block }] });
    return;
  }
  const text = user.content.find((p) => p.type === "text");
  if (text && text.type === "text") text.text = `${block}\n\n${text.text}`;
  else user.content.unshift({ type: "text", text: `${block}\n\n` });
}
