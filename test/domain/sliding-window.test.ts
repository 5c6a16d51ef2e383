/**
 * The sliding-log rule: at most `max` calls accepted in any window of `windowMs`, wherever the window
 * starts, and no call refused that the limit would allow.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admitCall } from '../../src/domain/sliding-window.js';

/** The accepted instants of calls arriving at `arrivals` (ascending). */
function run(arrivals: number[], windowMs: number, max: number) {
  const log: number[] = [];
  return arrivals.map((at) => ({ at, ...admitCall(log, at, windowMs, max) }));
}

describe('admitCall', () => {
  it('accepts max calls, refuses the next within the window, and tells when a call will be accepted again', () => {
    const log: number[] = [];
    for (let i = 0; i < 3; i += 1) expect(admitCall(log, 1000 + i * 100, 1000, 3)).toEqual({ accepted: true, count: i + 1, resetMs: 1000 - i * 100 });
    expect(admitCall(log, 1500, 1000, 3)).toEqual({ accepted: false, count: 3, resetMs: 500 });
    // The refused call is not logged: at 2000 the first call (1000) has left the window [1000, 2000).
    expect(admitCall(log, 1999, 1000, 3).accepted).toBe(false);
    expect(admitCall(log, 2000, 1000, 3)).toEqual({ accepted: true, count: 3, resetMs: 100 });
    expect(log).toEqual([1100, 1200, 2000]);
  });

  it('counts across the edge of a second: 10 at 0.99 s and 10 at 1.01 s are not 20', () => {
    const decisions = run([...Array<number>(10).fill(990), ...Array<number>(10).fill(1010)], 1000, 10);
    expect(decisions.filter((d) => d.accepted)).toHaveLength(10);
  });

  it('never accepts more than max in any window, and refuses only when max were accepted in the window before', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 1500 }), { maxLength: 80 }).map((steps) => steps.reduce<number[]>((acc, step) => [...acc, (acc.at(-1) ?? 0) + step], [])),
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 1, max: 12 }),
        (arrivals, windowMs, max) => {
          const decisions = run(arrivals, windowMs, max);
          const accepted = decisions.filter((d) => d.accepted).map((d) => d.at);
          for (const start of accepted) expect(accepted.filter((at) => at >= start && at < start + windowMs).length).toBeLessThanOrEqual(max);
          for (const d of decisions) {
            if (!d.accepted) expect(accepted.filter((at) => at > d.at - windowMs && at <= d.at)).toHaveLength(max);
          }
        },
      ),
    );
  });

  it('takes an instant earlier than the last logged one as that instant (a clock must not let calls through by going back)', () => {
    const log: number[] = [];
    admitCall(log, 5000, 1000, 2);
    admitCall(log, 5000, 1000, 2);
    expect(admitCall(log, 3000, 1000, 2).accepted).toBe(false);
  });
});
