/**
 * GroupCommitter.fallsBehind, the load shedder's database measure: a stall (every lane holding a batch that
 * does not finish) counts however few commands wait; commands waiting while batches finish do not.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GroupCommitter, type BatchWork } from '../../src/services/group-commit.js';
import type { Store } from '../../src/store/database.js';

/** A store whose transactions finish only when the test lets them. */
function gatedStore() {
  const gates: (() => void)[] = [];
  const store: Pick<Store, 'writeTransaction'> = {
    writeTransaction: (<T>(work: (tx: never) => Promise<T>) =>
      new Promise<void>((resolve) => gates.push(resolve)).then(() => work(undefined as never))) as Store['writeTransaction'],
  };
  return { store, open: () => gates.splice(0).forEach((resolve) => resolve()), waiting: () => gates.length };
}

const work: BatchWork<number, null, number, number> = {
  read: async () => null,
  judge: (command) => ({ accepted: true, change: command, value: command }),
  write: async () => undefined,
};

const turn = () => new Promise((resolve) => setImmediate(resolve));

/** Lets the committer start its batches (each starts on setImmediate, after a commit's callbacks). */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i += 1) await turn();
}

describe('GroupCommitter.fallsBehind', () => {
  afterEach(() => vi.useRealTimers());

  it('is behind once every lane has held its batch past the wait, with only a few commands waiting', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const { store, open, waiting } = gatedStore();
    const committer = new GroupCommitter(store, work, { maxInFlight: 2 });
    const first = committer.run(1);
    await settle();
    expect(waiting()).toBe(1);
    vi.advanceTimersByTime(5_000);
    // A lane is free: a new command would not wait for the stalled batch.
    expect(committer.fallsBehind(2_000)).toEqual({ behind: false, oldestWaitMs: 0 });

    const second = committer.run(2);
    await settle();
    expect(waiting()).toBe(2);
    // Both lanes hold a batch, and none has finished since the first began, 5 s ago.
    expect(committer.fallsBehind(2_000)).toEqual({ behind: true, oldestWaitMs: 5_000 });
    const third = committer.run(3); // waits for a lane: two batches in flight, one command queued
    await settle();
    expect(waiting()).toBe(2);
    expect(committer.fallsBehind(2_000).behind).toBe(true);

    open();
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    await settle();
    // A batch finished: progress, however long the third command has waited.
    expect(committer.fallsBehind(2_000).behind).toBe(false);
    open();
    expect(await third).toBe(3);
  });

  it('is not behind while batches keep finishing, however long the busy spell lasts', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const { store, open, waiting } = gatedStore();
    const committer = new GroupCommitter(store, work, { maxInFlight: 1 });
    let answer = committer.run(0);
    for (let round = 1; round <= 5; round += 1) {
      await settle();
      expect(waiting()).toBe(1);
      const next = committer.run(round); // queued behind the batch in flight: the lane stays busy
      vi.advanceTimersByTime(1_500);
      expect(committer.fallsBehind(2_000).behind, `round ${round}`).toBe(false);
      open();
      expect(await answer).toBe(round - 1);
      answer = next;
    }
    await settle();
    vi.advanceTimersByTime(2_500);
    expect(committer.fallsBehind(2_000)).toEqual({ behind: true, oldestWaitMs: 2_500 });
    open();
    expect(await answer).toBe(5);
  });
});

describe('GroupCommitter onCommitted (the embedded OMS wake-up)', () => {
  it('is called after a batch commits, before its callers are answered, and not after a failed one', async () => {
    const calls: string[] = [];
    const committed = { writeTransaction: ((run) => run(undefined as never)) as Store['writeTransaction'] };
    const committer = new GroupCommitter(committed, work, { onCommitted: () => calls.push('committed') });
    await committer.run(1).then(() => calls.push('answered'));
    expect(calls).toEqual(['committed', 'answered']);

    const failing = { writeTransaction: (async () => Promise.reject(new Error('the database is out'))) as Store['writeTransaction'] };
    const refused = new GroupCommitter(failing, work, { onCommitted: () => calls.push('committed') });
    await expect(refused.run(2)).rejects.toThrow('the database is out');
    expect(calls).toEqual(['committed', 'answered']);
  });
});
