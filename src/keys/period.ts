import type { Period } from "./types.ts";

const DAY_MS = 86_400_000;

export interface PeriodSpan {
  /** Names the period in the ledger: `day:2026-11-27`, `week:2026-11-23` (its Monday), `month:2026-11`. */
  id: string;
  /** Unix milliseconds, UTC. */
  start: number;
  end: number;
}

/** The UTC period holding `now`: a day, an ISO week from Monday 00:00, a calendar month. */
export function periodAt(period: Period, now = Date.now()): PeriodSpan {
  const dayStart = Math.floor(now / DAY_MS) * DAY_MS;
  switch (period) {
    case "day":
      return { id: `day:${isoDay(dayStart)}`, start: dayStart, end: dayStart + DAY_MS };
    case "week": {
      // getUTCDay: Sunday 0 .. Saturday 6; days since Monday: (day + 6) % 7.
      const start = dayStart - ((new Date(dayStart).getUTCDay() + 6) % 7) * DAY_MS;
      return { id: `week:${isoDay(start)}`, start, end: start + 7 * DAY_MS };
    }
    case "month": {
      const date = new Date(now);
      const start = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
      const end = Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1);
      return { id: `month:${isoDay(start).slice(0, 7)}`, start, end };
    }
  }
}

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
