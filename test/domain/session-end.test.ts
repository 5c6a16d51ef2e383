/** SEBI's daily end of API sessions as plain functions (src/domain/access/session-end.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { dailyEndMinutes, nextDailyEnd, tokenExpiry } from '../../src/domain/access/session-end.js';

const ist = (text: string) => Date.parse(`${text}+05:30`);
const SIX = dailyEndMinutes('06:00')!;

describe('the daily end of sessions', () => {
  it('reads HH:MM only', () => {
    expect(dailyEndMinutes('06:00')).toBe(360);
    expect(dailyEndMinutes('23:59')).toBe(1439);
    for (const text of ['6:00', '24:00', '06:60', '06:00:00', '']) expect(dailyEndMinutes(text), text).toBeNull();
  });

  it('is the next instant India reads that time, never now itself', () => {
    expect(nextDailyEnd(ist('2026-11-27T05:59:59'), SIX)).toBe(ist('2026-11-27T06:00:00'));
    expect(nextDailyEnd(ist('2026-11-27T06:00:00'), SIX)).toBe(ist('2026-11-28T06:00:00'));
    expect(nextDailyEnd(ist('2026-11-27T23:30:00'), SIX)).toBe(ist('2026-11-28T06:00:00'));
    // 00:30 India time is the previous day in UTC.
    expect(nextDailyEnd(ist('2026-11-28T00:30:00'), SIX)).toBe(ist('2026-11-28T06:00:00'));
  });

  it('cuts every token at the next end, within a day, and never lengthens one', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_700_000_000_000, max: 1_900_000_000_000 }),
        fc.integer({ min: 1, max: 7 * 86_400_000 }),
        fc.integer({ min: 0, max: 1439 }),
        (now, ttl, minutes) => {
          const expiry = tokenExpiry(now, ttl, minutes);
          expect(expiry).toBeGreaterThan(now);
          expect(expiry).toBeLessThanOrEqual(now + ttl);
          expect(expiry).toBeLessThanOrEqual(now + 86_400_000);
          expect(tokenExpiry(now, ttl, null)).toBe(now + ttl);
        },
      ),
    );
  });
});
