import type { Settings } from "./client.ts";

export const DEFAULT_SETTINGS: Settings = { system: "", stream: true };

export const FIELDS = ["temperature", "maxTokens", "system", "stream"] as const;
export type Field = (typeof FIELDS)[number];
export const LABELS: Record<Field, string> = { temperature: "Temperature", maxTokens: "Max tokens", system: "System prompt", stream: "Streaming" };

const NAMES = new Map<string, Field>([
  ["temperature", "temperature"], ["temp", "temperature"], ["max_tokens", "maxTokens"], ["max-tokens", "maxTokens"],
  ["maxtokens", "maxTokens"], ["system", "system"], ["stream", "stream"], ["streaming", "stream"],
]);

/** `/settings temperature 0.3`: the field named, if any. */
export const fieldNamed = (name: string): Field | undefined => NAMES.get(name.toLowerCase());

export function show(settings: Settings, field: Field): string {
  const value = settings[field];
  if (field === "stream") return value ? "on" : "off";
  if (value === undefined || value === "") return "(default)";
  return String(value);
}

/** The settings with one field set from typed text, or a sentence saying why the text is refused. */
export function apply(settings: Settings, field: Field, text: string): Settings | string {
  const value = text.trim();
  if (field === "system") return { ...settings, system: value };
  if (field === "stream") {
    if (/^(on|true|yes|1)$/i.test(value)) return { ...settings, stream: true };
    if (/^(off|false|no|0)$/i.test(value)) return { ...settings, stream: false };
    return "Streaming is on or off.";
  }
  if (value === "") return { ...settings, [field]: undefined };
  const number = Number(value);
  if (field === "temperature") {
    return Number.isFinite(number) && number >= 0 && number <= 2 ? { ...settings, temperature: number } : "Temperature is a number from 0 to 2.";
  }
  return Number.isInteger(number) && number > 0 ? { ...settings, maxTokens: number } : "Max tokens is a positive whole number.";
}

/** Settings read back from storage or a file: anything of the wrong type is left at its default. */
export function settingsFrom(value: unknown): Settings | undefined {
  if (!value || typeof value !== "object") return undefined;
  const s = value as Partial<Record<keyof Settings, unknown>>;
  return {
    system: typeof s.system === "string" ? s.system : "",
    stream: typeof s.stream === "boolean" ? s.stream : true,
    ...(typeof s.temperature === "number" && s.temperature >= 0 && s.temperature <= 2 ? { temperature: s.temperature } : {}),
    ...(typeof s.maxTokens === "number" && Number.isInteger(s.maxTokens) && s.maxTokens > 0 ? { maxTokens: s.maxTokens } : {}),
  };
}
