/**
 * The group commit's invariant (src/store/group-commit.ts): a refused command leaves no write behind,
 * even though it shares its transaction with the commands accepted beside it. Run on both databases
 * against a real store: a refusal while judging keeps the others' rows and none of its own; a refusal
 * placed after the batch's writes, or a write the database refuses, rolls the batch back, and it is run
 * again in halves until the command at fault is alone: it gets the error, the others commit.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, Errors } from '../../src/domain/errors.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { GroupCommitter, RefusalAfterWriteError, type BatchWork } from '../../src/services/group-commit.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { openTx } from '../../src/store/sql/write-tx.js';
import { createMigratedTestDatabase, type TestDatabase } from '../support/databases.js';

/** A command: a user to create; `refuse` says where it is refused, if anywhere. */
interface Command {
  userId: string;
  refuse?: 'when-judged' | 'after-write';
}

const refusal = (userId: string) => new ApiError(Errors.ORDER_NOT_FOUND, `refused ${userId}`);

/** The batch work of these tests: the users table as the thing written. */
const work: BatchWork<Command, null, string, Command> = {
  read: async () => null,
  judge: (command) =>
    command.refuse === 'when-judged'
      ? { accepted: false, error: refusal(command.userId) }
      : { accepted: true, change: command, value: command.userId },
  write: async (tx, accepted) => {
    await openTx(tx)
      .trx.insertInto('users')
      .values(
        accepted.map(({ change }) => ({
          user_id: change.userId,
          password_hash: 'x',
          category: 'RETAIL',
          totp_secret: null,
          created_at: 0,
        })),
      )
      .execute();
    // A check placed after the write, the mistake the invariant must survive.
    const late = accepted.find(({ change }) => change.refuse === 'after-write');
    if (late !== undefined) throw refusal(late.change.userId);
  },
};

/** Runs the commands as one batch (all queued in the same turn of the event loop) and settles each. */
function runTogether(committer: GroupCommitter<Command, null, string, Command>, commands: Command[]) {
  return Promise.allSettled(commands.map((command) => committer.run(command)));
}

describe('a refused command in a group commit', () => {
  let database: TestDatabase;
  let store: Store;
  let committer: GroupCommitter<Command, null, string, Command>;

  const storedUsers = async () =>
    (await store.db.selectFrom('users').select('user_id').orderBy('user_id').execute()).map((row) => row.user_id);

  beforeAll(async () => {
    database = await createMigratedTestDatabase('ordergate_refusal');
    store = openStore(database.databaseUrl);
    await migrateToLatest(store);
    committer = new GroupCommitter(store, work);
  });
  afterAll(async () => {
    await store.close();
    await database.dispose();
  });

  it('refused while judged: its caller gets its refusal, the others their answers, and only their rows are stored', async () => {
    const outcomes = await runTogether(committer, [
      { userId: 'a1' },
      { userId: 'a2', refuse: 'when-judged' },
      { userId: 'a3' },
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(outcomes[0]).toEqual({ status: 'fulfilled', value: 'a1' });
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(ApiError);
    expect((outcomes[1] as PromiseRejectedResult).reason.message).toBe('refused a2');
    expect(await storedUsers()).toEqual(['a1', 'a3']);
  });

  it('refused after the batch wrote: the batch is rolled back and run again in halves; that command alone gets the internal error, the others commit', async () => {
    const outcomes = await runTogether(committer, [
      { userId: 'b1' },
      { userId: 'b2', refuse: 'after-write' },
      { userId: 'b3' },
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const reason = (outcomes[1] as PromiseRejectedResult).reason;
    // Not the refusal itself: its rows were written before it, and rolled back with its half.
    expect(reason).toBeInstanceOf(RefusalAfterWriteError);
    expect(reason).not.toBeInstanceOf(ApiError);
    expect(reason.message).toContain('refused b2');
    expect(await storedUsers()).toEqual(['a1', 'a3', 'b1', 'b3']);
  });

  it('a command the database refuses (a key taken already) fails alone; the seven beside it commit', async () => {
    const commands = [...['d1', 'd2', 'd3', 'a1', 'd4', 'd5', 'd6', 'd7']].map((userId) => ({ userId }));
    const outcomes = await runTogether(committer, commands);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
    ]);
    expect(await storedUsers()).toEqual(['a1', 'a3', 'b1', 'b3', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7']);
  });

  it('keeps committing the batches after it', async () => {
    const outcomes = await runTogether(committer, [{ userId: 'c1' }, { userId: 'c2' }]);
    expect(outcomes).toEqual([
      { status: 'fulfilled', value: 'c1' },
      { status: 'fulfilled', value: 'c2' },
    ]);
    expect(await storedUsers()).toEqual(['a1', 'a3', 'b1', 'b3', 'c1', 'c2', 'd1', 'd2', 'd3', 'd4', 'd5', 'd6', 'd7']);
  });
});
