/** ANSI styling that turns itself off: `NO_COLOR` (any non-empty value) drops colours, keeps bold and the like. */
export type Color = "red" | "green" | "yellow" | "blue" | "magenta" | "cyan" | "gray";

const FG: Record<Color, number> = { red: 31, green: 32, yellow: 33, blue: 34, magenta: 35, cyan: 36, gray: 90 };

export interface Paint {
  readonly color: boolean;
  fg(color: Color, text: string): string;
  bold(text: string): string;
  dim(text: string): string;
  italic(text: string): string;
  underline(text: string): string;
  strike(text: string): string;
}

export function colorWanted(env: Record<string, string | undefined> = process.env): boolean {
  return !env.NO_COLOR;
}

export function createPaint(color: boolean): Paint {
  const sgr = (open: number, close: number) => (text: string) => (text ? `\x1b[${open}m${text}\x1b[${close}m` : text);
  return {
    color,
    fg: (name, text) => (color ? sgr(FG[name], 39)(text) : text),
    bold: sgr(1, 22),
    dim: color ? sgr(2, 22) : (text) => text,
    italic: sgr(3, 23),
    underline: sgr(4, 24),
    strike: sgr(9, 29),
  };
}

/** A colour for an Ink prop, or none under NO_COLOR. */
export const tone = (color: Color): Color | undefined => (colorWanted() ? color : undefined);
