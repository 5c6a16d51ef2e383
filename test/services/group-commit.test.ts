/**
 * GroupCommitter.fallsBehind, the load shedder's database measure: a stall (every lane holding a batch that
 * does not finish) counts however few commands wait; commands waiting while batches finish do not. And the
 * halving of a failed batch: one bad command fails alone, a failure of every command stops after one split,
 * and each half that commits is progress.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { GroupCommitter, type BatchWork } from '../../src/services/group-commit.js';
import type { OrderEntryMetrics } from '../../src/metrics/operator-metrics.js';
import type { Store } from '../../src/store/sql/database.js';
import { DatabaseUnavailableError } from '../../src/domain/errors.js';

/** A store whose transactions finish only when the test lets them. */
function gatedStore() {
  const gates: (() => void)[] = [];
  const store: Pick<Store, 'writeTransaction'> = {
    writeTransaction: (<T>(work: (tx: never) => Promise<T>) =>
      new Promise<void>((resolve) => gates.push(resolve)).then(() =>
        work(undefined as never),
      )) as Store['writeTransaction'],
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

    const failing = {
      writeTransaction: (async () => Promise.reject(new Error('the database is out'))) as Store['writeTransaction'],
    };
    const refused = new GroupCommitter(failing, work, { onCommitted: () => calls.push('committed') });
    await expect(refused.run(2)).rejects.toThrow('the database is out');
    expect(calls).toEqual(['committed', 'answered']);
  });
});

/** A store that runs each transaction at once and counts them. */
function countingStore() {
  let transactions = 0;
  const store: Pick<Store, 'writeTransaction'> = {
    writeTransaction: ((run) => {
      transactions += 1;
      return run(undefined as never);
    }) as Store['writeTransaction'],
  };
  return { store, transactions: () => transactions };
}

/** Work whose write fails (not a refusal, not the database out) for a batch holding one of `bad`, or for every batch. */
function failingWork(bad: (command: number) => boolean): BatchWork<number, null, number, number> {
  return {
    ...work,
    write: async (_tx, accepted) => {
      const met = accepted.find(({ command }) => bad(command));
      if (met !== undefined) throw new Error(`cannot store ${met.command}`);
    },
  };
}

/** The metrics' batchDone calls, as [commands, committed]. */
function recordedMetrics() {
  const batches: [number, boolean][] = [];
  const metrics: OrderEntryMetrics = {
    batchDone: (commands, _seconds, committed) => void batches.push([commands, committed]),
  };
  return { metrics, batches };
}

/** Runs the commands as one batch (all queued in the same turn of the event loop) and settles each. */
const runTogether = (committer: GroupCommitter<number, null, number, number>, commands: number[]) =>
  Promise.allSettled(commands.map((command) => committer.run(command)));

const sixteen = Array.from({ length: 16 }, (_, i) => i + 1);

describe('GroupCommitter halving a failed batch', () => {
  afterEach(() => vi.useRealTimers());

  it('one bad command among 16 fails alone with its error; the 15 beside it commit, and the batch counts as one failed', async () => {
    const { store, transactions } = countingStore();
    const { metrics, batches } = recordedMetrics();
    const committer = new GroupCommitter(
      store,
      failingWork((command) => command === 11),
      { metrics },
    );
    const outcomes = await runTogether(committer, sixteen);
    expect(outcomes.map((o) => o.status)).toEqual(
      sixteen.map((command) => (command === 11 ? 'rejected' : 'fulfilled')),
    );
    expect(outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []))).toEqual(
      sixteen.filter((command) => command !== 11),
    );
    expect((outcomes[10] as PromiseRejectedResult).reason.message).toBe('cannot store 11');
    // The batch, then two halves at each of four splits: one commits, the other fails and is split again;
    // alone, 11 is tried once more before it is blamed.
    expect(transactions()).toBe(1 + 2 * 4 + 1);
    // One failed batch (the one taken from the queue), and each half that committed with its size.
    expect(batches).toEqual([
      [16, false],
      [8, true],
      [4, true],
      [2, true],
      [1, true],
    ]);
  });

  it('a batch every command of which fails answers each command with its own error, in 3n - 1 transactions', async () => {
    const { store, transactions } = countingStore();
    const { metrics, batches } = recordedMetrics();
    const committer = new GroupCommitter(
      store,
      failingWork(() => true),
      { metrics },
    );
    const outcomes = await runTogether(committer, sixteen);
    expect(outcomes.map((o) => (o.status === 'rejected' ? o.reason.message : 'ok'))).toEqual(
      sixteen.map((command) => `cannot store ${command}`),
    );
    // Down to each command alone: the whole tree of halves, every one failing.
    // Down to each command alone (the whole tree of halves, every one failing), each tried once more.
    expect(transactions()).toBe(2 * 16 - 1 + 16);
    expect(batches).toEqual([[16, false]]);
    // The lane is free again: the next batch commits.
    const healthy = new GroupCommitter(store, work, { metrics });
    expect(await healthy.run(17)).toBe(17);
  });

  it('two bad commands sent together, one in each half, fail alone: the 14 beside them commit', async () => {
    const { store, transactions } = countingStore();
    const committer = new GroupCommitter(
      store,
      failingWork((command) => command === 3 || command === 7),
    );
    const outcomes = await runTogether(committer, sixteen);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? 'ok' : o.reason.message))).toEqual(
      sixteen.map((command) => (command === 3 ? 'cannot store 3' : command === 7 ? 'cannot store 7' : 'ok')),
    );
    // 16 fails; 1-8 fails, 9-16 commits; 1-4 and 5-8 both fail; 1-2 commits, 3-4 fails; 3 fails alone, 4
    // commits; then 5-6 commits, 7-8 fails; 7 fails alone, 8 commits.
    expect(transactions()).toBe(1 + 6 * 2 + 2);
  });

  it('a command that fails alone once and then commits was not at fault: the failure came and went', async () => {
    const { store, transactions } = countingStore();
    let failures = 0;
    const committer = new GroupCommitter(store, {
      ...work,
      write: async (_tx, accepted) => {
        // A passing failure (a deadlock, say): the whole batch, then 1-8, then 1-4, 1-2 and 1 on its own fail
        // once each; the fifth failure is the last.
        if (accepted.some(({ command }) => command === 1) && failures < 5) {
          failures += 1;
          throw new Error('deadlock detected');
        }
      },
    });
    const outcomes = await runTogether(committer, sixteen);
    expect(outcomes.map((o) => (o.status === 'fulfilled' ? o.value : o.reason.message))).toEqual(sixteen);
    // 16; 1-8 and 9-16; 1-4 and 5-8; 1-2 and 3-4; 1 and 2; 1 again, which commits.
    expect(transactions()).toBe(1 + 2 * 4 + 1);
  });

  it('a database that cannot be used, met while halving, fails every command not answered yet, at once', async () => {
    const { store, transactions } = countingStore();
    let writes = 0;
    const committer = new GroupCommitter(store, {
      ...work,
      write: async (_tx, accepted) => {
        writes += 1;
        // The batch fails for command 2; then the database goes away (the third transaction, 9-16).
        if (writes === 3) throw new DatabaseUnavailableError(new Error('connection lost'));
        if (accepted.some(({ command }) => command === 2)) throw new Error('cannot store 2');
      },
    });
    const outcomes = await runTogether(committer, sixteen);
    // 16 fails; 1-8 fails; 9-16 meets the lost database: 1-8 and 9-16 are answered with it, none tried again.
    expect(transactions()).toBe(3);
    expect(outcomes.map((o) => (o.status === 'rejected' ? o.reason.name : 'ok'))).toEqual(
      sixteen.map(() => 'DatabaseUnavailableError'),
    );
  });

  it('counts each half that commits while halving as progress: a long halving is not a stalled database', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const { store, open, waiting } = gatedStore();
    const committer = new GroupCommitter(
      store,
      failingWork((command) => command === 4),
      { maxInFlight: 1 },
    );
    const outcomes = runTogether(committer, [1, 2, 3, 4]);
    await settle();
    expect(waiting()).toBe(1); // 1-4
    vi.advanceTimersByTime(1_500);
    open(); // 1-4 fails
    await settle();
    expect(waiting()).toBe(1); // 1-2
    vi.advanceTimersByTime(1_500);
    // No transaction has committed since the batch started, 3 s ago.
    expect(committer.fallsBehind(2_000)).toEqual({ behind: true, oldestWaitMs: 3_000 });
    open(); // 1-2 commits
    await settle();
    expect(waiting()).toBe(1); // 3-4
    vi.advanceTimersByTime(1_500);
    // 1-2 committed 1.5 s ago, though the batch has held the lane for 4.5 s.
    expect(committer.fallsBehind(2_000)).toEqual({ behind: false, oldestWaitMs: 1_500 });
    open(); // 3-4 fails
    await settle();
    expect(waiting()).toBe(1); // 3
    open(); // 3 commits
    await settle();
    expect(waiting()).toBe(1); // 4
    vi.advanceTimersByTime(1_500);
    expect(committer.fallsBehind(2_000)).toEqual({ behind: false, oldestWaitMs: 1_500 });
    open(); // 4 fails alone
    await settle();
    expect(waiting()).toBe(1); // 4 once more
    open(); // 4 fails again: blamed
    expect((await outcomes).map((o) => (o.status === 'fulfilled' ? o.value : o.reason.message))).toEqual([
      1,
      2,
      3,
      'cannot store 4',
    ]);
  });
});
