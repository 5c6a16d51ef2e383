/**
 * The OMS loop at rest (src/oms/outbox-loop.ts): after IDLE_AFTER_MS with nothing handled it passes every
 * IDLE_POLL_MS instead of every pollMs; a pass that finds work, or a wake-up (order entry's commit), brings
 * it back to pollMs. The clock and the timers are the test's: the passes are counted, not timed.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IDLE_AFTER_MS, IDLE_POLL_MS, OutboxLoop } from '../../src/oms/outbox-loop.js';
import type { OutboxEntry } from '../../src/store/orders/outbox.js';

const POLL_MS = 50;

/** A loop over an outbox held in memory: `arrive` adds entries, each pass claims them all. */
function loopOverMemory() {
  const waiting: OutboxEntry[] = [];
  const passedAt: number[] = [];
  let passes = 0;
  let nextId = 1;
  const loop = new OutboxLoop(
    {
      oms: {
        latestEntryId: async () => {
          passes += 1;
          passedAt.push(performance.now());
          return nextId - 1;
        },
        claimDue: async () => waiting.splice(0),
        completeAll: async () => undefined,
        releaseAll: async () => undefined,
        releaseLeasedTo: async () => 0,
        deferAll: async () => undefined,
      },
      now: () => Date.now(),
      logger: pino({ level: 'silent' }),
      workerId: 'test',
      pollMs: POLL_MS,
    },
    { processBatch: async (batch) => batch.length, afterOutbox: async () => 0 },
  );
  return {
    loop,
    passes: () => passes,
    passedAt,
    waiting: () => waiting.length,
    arrive: () => waiting.push({ id: nextId++, orderId: `o${nextId}`, action: 'PLACE' }),
  };
}

/** How many passes the loop makes in the next `ms` of the test's clock. */
async function passesIn(memory: ReturnType<typeof loopOverMemory>, ms: number): Promise<number> {
  const before = memory.passes();
  await vi.advanceTimersByTimeAsync(ms);
  return memory.passes() - before;
}

describe('the OMS loop at rest', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'performance'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('passes every pollMs while work arrives, every IDLE_POLL_MS once it has had none for IDLE_AFTER_MS', async () => {
    const memory = loopOverMemory();
    memory.loop.start();
    // Busy: an entry arrives before each pass.
    for (let i = 0; i < 20; i++) {
      memory.arrive();
      await vi.advanceTimersByTimeAsync(POLL_MS);
    }
    expect(memory.passes()).toBeGreaterThanOrEqual(19);
    // Nothing arrives: still every pollMs for IDLE_AFTER_MS...
    expect(await passesIn(memory, IDLE_AFTER_MS - 2 * POLL_MS)).toBeGreaterThanOrEqual(
      (IDLE_AFTER_MS - 2 * POLL_MS) / POLL_MS - 1,
    );
    // ...then every IDLE_POLL_MS.
    await vi.advanceTimersByTimeAsync(IDLE_POLL_MS);
    const idle = await passesIn(memory, 10 * IDLE_POLL_MS);
    expect(idle).toBeGreaterThanOrEqual(9);
    expect(idle).toBeLessThanOrEqual(11);
    await memory.loop.stop();
  });

  it('an idle loop passes within pollMs of a wake-up, and stays at pollMs while woken', async () => {
    const memory = loopOverMemory();
    memory.loop.start();
    await vi.advanceTimersByTimeAsync(IDLE_AFTER_MS + 2 * IDLE_POLL_MS);
    // Just after a pass, then half-way through the pause after it:
    const count = memory.passedAt.length;
    while (memory.passedAt.length === count) await vi.advanceTimersByTimeAsync(1);
    await vi.advanceTimersByTimeAsync(IDLE_POLL_MS / 2);
    // Idle: the last two passes were IDLE_POLL_MS apart, and the next is IDLE_POLL_MS / 2 away.
    const [before, last] = memory.passedAt.slice(-2) as [number, number];
    expect(last - before).toBeGreaterThanOrEqual(IDLE_POLL_MS);
    expect(last - before).toBeLessThan(IDLE_POLL_MS + POLL_MS);
    expect(performance.now() - last).toBeGreaterThanOrEqual(IDLE_POLL_MS / 2);
    const wokenAt = performance.now();
    memory.arrive();
    memory.loop.wake();
    // A pass's claim follows its start by a turn of the event loop.
    await vi.advanceTimersByTimeAsync(POLL_MS + 5);
    expect(memory.waiting()).toBe(0);
    expect(memory.passedAt.at(-1)! - wokenAt).toBeLessThanOrEqual(POLL_MS);
    // Woken: pollMs again, for IDLE_AFTER_MS at least.
    expect(await passesIn(memory, IDLE_AFTER_MS - 2 * POLL_MS)).toBeGreaterThanOrEqual(
      (IDLE_AFTER_MS - 2 * POLL_MS) / POLL_MS - 1,
    );
    await memory.loop.stop();
  });

  it('an idle loop that finds work without a wake-up (another node committed it) is back at pollMs at once', async () => {
    const memory = loopOverMemory();
    memory.loop.start();
    await vi.advanceTimersByTimeAsync(IDLE_AFTER_MS + 2 * IDLE_POLL_MS);
    memory.arrive();
    // Taken at the next idle pass, at the latest; and every pollMs after it.
    await vi.advanceTimersByTimeAsync(IDLE_POLL_MS);
    expect(memory.waiting()).toBe(0);
    expect(await passesIn(memory, 10 * POLL_MS)).toBeGreaterThanOrEqual(9);
    await memory.loop.stop();
  });

  it('a wake-up of a stopped loop starts nothing', async () => {
    const memory = loopOverMemory();
    memory.loop.start();
    await vi.advanceTimersByTimeAsync(IDLE_AFTER_MS + 2 * IDLE_POLL_MS);
    await memory.loop.stop();
    memory.loop.wake();
    expect(await passesIn(memory, 10 * IDLE_POLL_MS)).toBe(0);
  });
});
