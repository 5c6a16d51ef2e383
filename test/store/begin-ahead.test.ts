/**
 * BeginAheadConnection (src/store/sql/begin-ahead.ts): a PostgreSQL write transaction's BEGIN is sent without
 * waiting for its answer. Until it answers only reads go out; the first statement that is not a read, and
 * everything after it, is held and sent in order once BEGIN has answered; if BEGIN fails, nothing held is
 * ever sent and each held statement fails with BEGIN's error. The connection under it is a stand-in that
 * records what was sent and answers when the test says (no database: the order is observed, not timed).
 * test/store/sent-ahead.test.ts runs whole transactions through it on PostgreSQL.
 */
import { CompiledQuery, type DatabaseConnection, type QueryResult } from 'kysely';
import { describe, expect, it } from 'vitest';
import { BeginAheadConnection } from '../../src/store/sql/begin-ahead.js';

/** A connection that records each statement sent and answers it when the test calls `answer` or `fail`. */
function standIn() {
  const sent: { sql: string; answer: () => void; fail: (error: Error) => void }[] = [];
  const connection: DatabaseConnection = {
    executeQuery: <R>(query: CompiledQuery) =>
      new Promise<QueryResult<R>>((resolve, reject) => {
        sent.push({ sql: query.sql, answer: () => resolve({ rows: [] }), fail: reject });
      }),
    streamQuery: () => {
      throw new Error('not used');
    },
  };
  return { connection, sent, sqls: () => sent.map((s) => s.sql) };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));
const q = (text: string) => CompiledQuery.raw(text);

/** A connection over a stand-in whose transaction has sent its BEGIN ahead. */
function begunAhead(begin = 'begin; select pg_current_xact_id()') {
  const inner = standIn();
  const connection = new BeginAheadConnection(inner.connection);
  const begun = connection.beginAhead(q(begin));
  return { inner, connection, begun };
}

/** Once the gate is closed, a write goes out at once: the next transaction starts clean. */
function expectPlainAfterClose({ inner, connection }: ReturnType<typeof begunAhead>): void {
  connection.closeGate();
  void connection.executeQuery(q('delete from orders'));
  expect(inner.sqls().at(-1)).toBe('delete from orders');
}

describe('BeginAheadConnection', () => {
  it('sends the reads after BEGIN at once, and holds the first other statement and all after it until BEGIN answers', async () => {
    const transaction = begunAhead();
    const { inner, connection, begun } = transaction;
    const read = connection.executeQuery(q('select * from ofs_issues'));
    const lock = connection.executeQuery(q('SELECT pg_advisory_xact_lock(1)'));
    const write = connection.executeQuery(q('insert into orders values (1)'));
    const readAfterWrite = connection.executeQuery(q('select * from orders'));
    const commit = connection.executeQuery(q('commit'));
    await turn();
    expect(inner.sqls()).toEqual([
      'begin; select pg_current_xact_id()',
      'select * from ofs_issues',
      'SELECT pg_advisory_xact_lock(1)',
    ]);

    inner.sent[0]!.answer();
    await begun;
    await turn();
    // Sent together, in the order asked: a read behind a write stays behind it.
    expect(inner.sqls().slice(3)).toEqual(['insert into orders values (1)', 'select * from orders', 'commit']);
    for (const statement of inner.sent) statement.answer();
    await Promise.all([read, lock, write, readAfterWrite, commit]);

    // BEGIN answered and nothing held: everything goes out at once, until the gate is closed.
    void connection.executeQuery(q('update orders set status = 1'));
    expect(inner.sqls().at(-1)).toBe('update orders set status = 1');
    expectPlainAfterClose(transaction);
  });

  it('when BEGIN fails, sends nothing it held: each held statement, the COMMIT included, fails with its error', async () => {
    const transaction = begunAhead();
    const { inner, connection, begun } = transaction;
    const read = connection.executeQuery(q('select * from ofs_issues'));
    const write = connection.executeQuery(q('insert into orders values (1)'));
    const commit = connection.executeQuery(q('commit'));
    inner.sent[0]!.fail(new Error('the connection was lost'));
    await expect(begun).rejects.toThrow('the connection was lost');
    await expect(write).rejects.toThrow('the connection was lost');
    await expect(commit).rejects.toThrow('the connection was lost');
    // The read went out before BEGIN's answer (alone, it changes nothing); nothing else did.
    expect(inner.sqls()).toEqual(['begin; select pg_current_xact_id()', 'select * from ofs_issues']);
    inner.sent[1]!.answer();
    await read;

    expectPlainAfterClose(transaction);
  });

  it('a statement that is not a SELECT is held even when it reads (a CTE)', async () => {
    const { inner, connection } = begunAhead('begin');
    void connection.executeQuery(q('with due as (select 1) update outbox set claimed_by = 1'));
    await turn();
    expect(inner.sqls()).toEqual(['begin']);
    inner.sent[0]!.answer();
    await turn();
    await turn();
    expect(inner.sqls()).toEqual(['begin', 'with due as (select 1) update outbox set claimed_by = 1']);
  });
});
