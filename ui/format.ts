const integer = new Intl.NumberFormat(undefined, { maximumFractionDigits: 0 });
const usd = new Intl.NumberFormat(undefined, { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 4 });
const time = new Intl.DateTimeFormat(undefined, { hour: "2-digit", minute: "2-digit", second: "2-digit" });
const dateTime = new Intl.DateTimeFormat(undefined, { dateStyle: "medium", timeStyle: "short" });

export const num = (n: number | null | undefined) => (n === null || n === undefined ? "–" : integer.format(n));
/** Dollars; a sum under a cent keeps two significant digits rather than showing as $0.00. */
export const cost = (n: number | null | undefined) => (n === null || n === undefined ? "–" : n > 0 && n < 0.01 ? `$${n.toPrecision(2)}` : usd.format(n));
export const ms = (n: number | null | undefined) => (n === null || n === undefined ? "–" : `${integer.format(n)} ms`);
export const pct = (n: number | null | undefined) => (n === null || n === undefined ? "–" : `${(n * 100).toFixed(1)} %`);
export const clock = (unixMs: number) => time.format(new Date(unixMs));
export const when = (unixS: number | null | undefined) => (unixS ? dateTime.format(new Date(unixS * 1000)) : "–");
