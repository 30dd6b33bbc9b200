import { cancel, intro, isCancel, log, outro, password, select, text } from "@clack/prompts";
import { checkValue, mask, readConfigFile, setConfigValue, SETTINGS } from "../config.ts";
import { RESTART_HINT } from "./restart-hint.ts";

const DONE = "__done";

/** `parley config set` with no arguments: pick a setting, type its value (secrets masked), checked before it is written. */
export async function promptConfig(configFile: string): Promise<void> {
  intro(`parley configuration · ${configFile}`);
  for (;;) {
    const current = readConfigFile(configFile);
    const key = await select({
      message: "Which setting? (Done to finish)",
      maxItems: 14,
      options: [
        ...SETTINGS.filter((s) => s.key !== "PARLEY_CONFIG_DIR").map((s) => {
          const value = current[s.key];
          const shown = value === undefined ? "unset" : s.secret ? mask(value) : value;
          return { value: s.key, label: s.key, hint: `${shown} · ${s.help}` };
        }),
        { value: DONE, label: "Done" },
      ],
    });
    if (isCancel(key)) return cancel("Nothing more was changed.");
    if (key === DONE) return outro(`Saved. ${RESTART_HINT}`);
    const setting = SETTINGS.find((s) => s.key === key)!;
    const validate = (value: string | undefined) => {
      const problem = checkValue(key, (value ?? "").trim());
      return problem ? `${key}: ${problem}` : undefined;
    };
    const value = setting.secret
      ? await password({ message: `${key} (${setting.help})`, mask: "•", validate })
      : await text({ message: `${key} (${setting.help})`, initialValue: current[key] ?? setting.fallback ?? "", validate });
    if (isCancel(value)) continue;
    setConfigValue(configFile, key, value.trim());
    log.success(`${key} saved`);
  }
}
