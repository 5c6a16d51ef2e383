/**
 * The sliding-log rule: at most `max` calls accepted in any window of `windowMs`, wherever the window
 * starts, and no call refused that the limit would allow. And the wait for a slot that paces a cart's
 * orders (admitWhenFree): it keeps to the same rule while single calls compete for the slots, and waits
 * no longer than until a slot is free.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { admitCall } from '../../src/domain/access/sliding-window.js';
import { admitWhenFree, MemoryCallLog } from '../../src/rate-limit/call-logs.js';

/** The accepted instants of calls arriving at `arrivals` (ascending). */
function run(arrivals: number[], windowMs: number, max: number) {
  const log: number[] = [];
  return arrivals.map((at) => ({ at, ...admitCall(log, at, windowMs, max) }));
}

describe('admitCall', () => {
  it('accepts max calls, refuses the next within the window, and tells when a call will be accepted again', () => {
    const log: number[] = [];
    for (let i = 0; i < 3; i += 1)
      expect(admitCall(log, 1000 + i * 100, 1000, 3)).toEqual({
        accepted: true,
        count: i + 1,
        resetMs: 1000 - i * 100,
      });
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
        fc
          .array(fc.integer({ min: 0, max: 1500 }), { maxLength: 80 })
          .map((steps) => steps.reduce<number[]>((acc, step) => [...acc, (acc.at(-1) ?? 0) + step], [])),
        fc.integer({ min: 1, max: 2000 }),
        fc.integer({ min: 1, max: 12 }),
        (arrivals, windowMs, max) => {
          const decisions = run(arrivals, windowMs, max);
          const accepted = decisions.filter((d) => d.accepted).map((d) => d.at);
          for (const start of accepted)
            expect(accepted.filter((at) => at >= start && at < start + windowMs).length).toBeLessThanOrEqual(max);
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

describe("admitWhenFree (a cart's orders paced at the user's rate)", () => {
  /** A call log on a test clock, and a sleep that moves the clock on: no real time passes. */
  function pacedLog() {
    const clock = { now: 0 };
    const log = new MemoryCallLog(() => clock.now);
    const admitted: number[] = [];
    const admit = async (key: string, windowMs: number, max: number) => {
      const decision = log.admit(key, windowMs, max);
      if (decision.accepted) admitted.push(clock.now);
      return decision;
    };
    const sleep = async (ms: number) => {
      clock.now += ms;
    };
    return { clock, admit, admitted, sleep };
  }

  it('places 10 orders at 4 a second: 4 at once, then 4 when the first second has passed, then 2', async () => {
    const { admit, admitted, sleep } = pacedLog();
    for (let i = 0; i < 10; i += 1) await admitWhenFree(admit, 'orders:u', 1000, 4, sleep);
    expect(admitted).toEqual([0, 0, 0, 0, 1000, 1000, 1000, 1000, 2000, 2000]);
  });

  it('with single calls competing for the slots, never more than max in any window, and every paced order placed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ pause: fc.integer({ min: 0, max: 400 }), paced: fc.boolean() }), { maxLength: 60 }),
        fc.integer({ min: 1, max: 6 }),
        async (calls, max) => {
          const { clock, admit, admitted, sleep } = pacedLog();
          let paced = 0;
          for (const { pause, paced: isPaced } of calls) {
            clock.now += pause;
            if (isPaced) {
              await admitWhenFree(admit, 'orders:u', 1000, max, sleep);
              paced += 1;
            } else {
              await admit('orders:u', 1000, max);
            }
          }
          for (const start of admitted)
            expect(admitted.filter((at) => at >= start && at < start + 1000).length).toBeLessThanOrEqual(max);
          expect(admitted.length).toBeGreaterThanOrEqual(paced);
        },
      ),
    );
  });
});
