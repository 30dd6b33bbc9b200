import { useState } from "react";
import { draftOf, readDraft, type KeyFields } from "./key-draft.ts";
import { BudgetInput, Disabled, Expiry, Metadata, Rate, Scopes, TextInput } from "./key-inputs.tsx";

/**
 * Creates a key or edits one: every field the admin API takes. Empty means no limit (all models,
 * routes, upstreams; no budget, rate or expiry). An edit sends only the fields changed; `submit`
 * answers whether the API took them, `refuse` shows what the form itself cannot send.
 */
export function KeyForm({ start, creating, submit, refuse, cancel }: {
  start: Partial<KeyFields>;
  creating: boolean;
  submit: (fields: Partial<KeyFields>) => Promise<boolean>;
  refuse: (message: string) => void;
  cancel?: () => void;
}) {
  const id = creating ? "new" : "edit";
  const [first] = useState(() => draftOf(start));
  const [draft, setDraft] = useState(first);
  const part = { id, draft, set: (change: Partial<typeof draft>) => setDraft((d) => ({ ...d, ...change })) };
  return (
    <form
      className="key-form"
      aria-label={creating ? "New key" : `Edit ${start.name}`}
      onSubmit={async (e) => {
        e.preventDefault();
        const read = readDraft(draft, creating ? undefined : first);
        if (!read.ok) return refuse(read.message);
        if (await submit(read.fields) && creating) setDraft((d) => ({ ...d, name: "" }));
      }}
    >
      <div className="row">
        <TextInput {...part} field="name" label={creating ? "New key's name" : "Name"} autoFocus={!creating} pattern="[A-Za-z0-9][A-Za-z0-9._\-]{0,63}" required />
        <Scopes {...part} />
      </div>
      <div className="row">
        <TextInput {...part} field="models" label="Models (globs; empty: all)" placeholder="claude-*, gpt-4o" />
        <TextInput {...part} field="routes" label="Routes (empty: all)" placeholder="coding, cheap" />
        <TextInput {...part} field="upstreams" label="Upstreams (empty: all)" placeholder="alpha, bedrock-*" />
      </div>
      <div className="row">
        <BudgetInput {...part} />
        <Rate {...part} field="rpm" label="Requests per minute" />
        <Rate {...part} field="tpm" label="Tokens per minute" />
      </div>
      <div className="row">
        <Expiry {...part} />
        <Disabled {...part} />
        <Metadata {...part} />
      </div>
      <span className="actions">
        <button type="submit">{creating ? "Create key" : "Save"}</button>
        {cancel && <button type="button" onClick={cancel}>Cancel</button>}
      </span>
    </form>
  );
}
