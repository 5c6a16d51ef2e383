/**
 * SEBI's daily end of API sessions (circular of 4 February 2025; docs/design/sebi-algo.md): every API
 * session ends before the next trading day begins, at an instant the broker sets in India time
 * (SESSION_DAILY_END). A token issued before that instant expires at it, however long its TTL.
 */

/** India Standard Time is UTC+05:30 all year (no daylight saving). */
const IST_OFFSET_MS = (5 * 60 + 30) * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

/** `HH:MM`, 00:00 to 23:59. */
export const DAILY_END_PATTERN = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes after midnight of `HH:MM` (null: not of that form). */
export function dailyEndMinutes(text: string): number | null {
  const match = DAILY_END_PATTERN.exec(text);
  return match === null ? null : Number(match[1]) * 60 + Number(match[2]);
}

/** The first instant after `now` at which India's clock reads `minutes` after midnight. */
export function nextDailyEnd(now: number, minutes: number): number {
  const indiaMidnight = Math.floor((now + IST_OFFSET_MS) / DAY_MS) * DAY_MS - IST_OFFSET_MS;
  const today = indiaMidnight + minutes * 60 * 1000;
  return today > now ? today : today + DAY_MS;
}

/** When a token issued at `now` expires: its TTL, cut at the next daily end when one is set. */
export function tokenExpiry(now: number, ttlMs: number, dailyEndMinutes: number | null): number {
  const byTtl = now + ttlMs;
  return dailyEndMinutes === null ? byTtl : Math.min(byTtl, nextDailyEnd(now, dailyEndMinutes));
}
