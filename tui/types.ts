import type { ListedModel, ServerFile } from "./client.ts";

/** A file uploaded for the next message. */
export type Attachment = { id: string; name: string };

/** What the screen shows below the transcript: the chat's input, or a panel over it. */
export type Mode =
  | { kind: "chat" }
  | { kind: "models"; models: ListedModel[] }
  | { kind: "history"; query: string }
  | { kind: "files"; files: ServerFile[] }
  | { kind: "settings" }
  | { kind: "confirm"; path: string; content: string };
