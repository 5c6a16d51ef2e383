/**
 * The store of idempotency keys: one row per (user, key). A request claims a key by inserting its row
 * (RUNNING, with a lease); the primary key lets exactly one request on any node win. Its answer, if
 * kept, turns the row DONE; an answer that is not kept deletes it. Every change after the claim names the
 * claiming request (`owner`), so that a request whose key was taken over can no longer touch it.
 */
import DataLoader from 'dataloader';
import { sql, type Kysely, type SqlBool } from 'kysely';
import type { HeldKey } from '../../domain/orders/idempotency.js';
import type { DialectName } from '../sql/database.js';
import type { Database } from '../schema/tables.js';
import { executorOf, openTx, sealTx, type StoreTx } from '../sql/write-tx.js';

/** The key a request holds. */
export interface KeyClaim {
  userId: string;
  key: string;
  owner: string;
}

/** A claim, with what the request is. */
export interface NewKeyClaim extends KeyClaim {
  method: string;
  path: string;
  fingerprint: string;
}

/** A claim that won its key, and when (the key's created_at: its 24 hours run from then). */
export interface ClaimedKey extends NewKeyClaim {
  claimedAt: number;
}

/**
 * Between a key and the name of one of its request's kept steps (a line of a cart execution). The header
 * allows only 0x20 to 0x7E, so no key a client sends can contain it, and no client key is a step's key.
 */
export const STEP_SEPARATOR = '\u001f';

export interface StoredKey extends HeldKey {
  method: string;
  path: string;
  statusCode: number | null;
  responseBody: string | null;
  responseHeaders: Record<string, string>;
}

export interface KeptAnswer {
  statusCode: number;
  body: string;
  headers: Record<string, string>;
}

/**
 * The rows of the steps kept under the claim's key: the user's keys that begin with the key and the
 * separator (substr, not LIKE: SQLite's LIKE ignores case, and the key may hold % and _).
 */
function stepsOf(claim: KeyClaim) {
  const prefix = claim.key + STEP_SEPARATOR;
  return sql<SqlBool>`user_id = ${claim.userId} and substr(idempotency_key, 1, cast(${prefix.length} as integer)) = ${prefix}`;
}

/** A claim to insert, with its time and lease. */
interface NewRunningClaim {
  claim: NewKeyClaim;
  now: number;
  lockedUntil: number;
}

export class IdempotencyKeyRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** Inserts the claim as RUNNING; false when the key is already stored. */
  async insertRunning(claim: NewKeyClaim, now: number, lockedUntil: number): Promise<boolean> {
    return this.newClaims.load({ claim, now, lockedUntil });
  }

  /**
   * The claims of the requests that arrive together, inserted together: one statement, so one commit
   * (on SQLite one fsync) for all of them instead of one each outside the group commit, which halved
   * what a node takes when every bid carries a key (docs/design/idempotency.md, "Cost"). A claim wins
   * when its row went in: its owner comes back. Two claims of one key in one statement: the first wins,
   * as it would have in two statements.
   */
  private readonly newClaims = new DataLoader<NewRunningClaim, boolean>((batch) => this.insertClaims(batch), {
    cache: false,
    batchScheduleFn: (run) => setImmediate(run),
    maxBatchSize: 500,
  });

  private async insertClaims(batch: readonly NewRunningClaim[]): Promise<boolean[]> {
    const inserted = await this.db
      .insertInto('idempotency_keys')
      .values(
        batch.map(({ claim, now, lockedUntil }) => ({
          ...this.claimColumns(claim, lockedUntil),
          user_id: claim.userId,
          idempotency_key: claim.key,
          created_at: now,
        })),
      )
      .onConflict((oc) => oc.columns(['user_id', 'idempotency_key']).doNothing())
      .returning('owner')
      .execute();
    const owners = new Set(inserted.map((row) => row.owner));
    return batch.map(({ claim }) => owners.has(claim.owner));
  }

  async find(userId: string, key: string): Promise<StoredKey | undefined> {
    const row = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('user_id', '=', userId)
      .where('idempotency_key', '=', key)
      .executeTakeFirst();
    if (row === undefined) return undefined;
    return {
      owner: row.owner,
      fingerprint: row.fingerprint,
      state: row.state === 'DONE' ? 'DONE' : 'RUNNING',
      lockedUntil: Number(row.locked_until),
      createdAt: Number(row.created_at),
      method: row.method,
      path: row.path,
      statusCode: row.status_code === null ? null : Number(row.status_code),
      responseBody: row.response_body,
      responseHeaders:
        row.response_headers === null ? {} : (JSON.parse(row.response_headers) as Record<string, string>),
    };
  }

  /**
   * Replaces a stored key by a new claim, if the row is still exactly the one read (same holder, state and
   * lease): of several requests taking over one key at once, one wins.
   */
  async takeOver(claim: NewKeyClaim, previous: HeldKey, now: number, lockedUntil: number): Promise<boolean> {
    const result = await this.db
      .updateTable('idempotency_keys')
      .set({ ...this.claimColumns(claim, lockedUntil), created_at: now })
      .where('user_id', '=', claim.userId)
      .where('idempotency_key', '=', claim.key)
      .where('owner', '=', previous.owner)
      .where('state', '=', previous.state)
      .where('locked_until', '=', previous.lockedUntil)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * In the transaction that will write a change: whether the claim still holds its key (RUNNING, same
   * owner). On PostgreSQL the row stays locked until that transaction ends, so that no take-over can
   * come between this check and the answer written with the change.
   */
  async isHeld(storeTx: StoreTx, claim: KeyClaim): Promise<boolean> {
    const trx = openTx(storeTx).trx;
    const query = trx
      .selectFrom('idempotency_keys')
      .select(['owner', 'state'])
      .where('user_id', '=', claim.userId)
      .where('idempotency_key', '=', claim.key);
    const row = await (this.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
    return row !== undefined && row.owner === claim.owner && row.state === 'RUNNING';
  }

  /** Keeps the answer of a claim that still holds its key; false when it no longer does. */
  async keepAnswer(claim: KeyClaim, answer: KeptAnswer, storeTx?: StoreTx): Promise<boolean> {
    const executor = executorOf(this.db, storeTx);
    const result = await executor
      .updateTable('idempotency_keys')
      .set({
        state: 'DONE',
        status_code: answer.statusCode,
        response_body: answer.body,
        response_headers: JSON.stringify(answer.headers),
      })
      .where('user_id', '=', claim.userId)
      .where('idempotency_key', '=', claim.key)
      .where('owner', '=', claim.owner)
      .where('state', '=', 'RUNNING')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Extends the lease of a claim that still holds its key (its request is still running). */
  async renewLease(claim: KeyClaim, lockedUntil: number): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ locked_until: lockedUntil })
      .where('user_id', '=', claim.userId)
      .where('idempotency_key', '=', claim.key)
      .where('owner', '=', claim.owner)
      .where('state', '=', 'RUNNING')
      .execute();
  }

  /** Deletes the keys claimed at or before `claimedBy` (their answers are no longer replayed). */
  async purgeClaimedBefore(claimedBy: number): Promise<number> {
    const result = await this.db.deleteFrom('idempotency_keys').where('created_at', '<=', claimedBy).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  /** Frees the key of a claim whose answer is not kept (a kept answer, once DONE, stays). */
  async release(claim: KeyClaim): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('user_id', '=', claim.userId)
      .where('idempotency_key', '=', claim.key)
      .where('owner', '=', claim.owner)
      .where('state', '=', 'RUNNING')
      .execute();
  }

  /** Runs `work` in a transaction of its own (the kept steps of a request outside order entry). */
  async inTransaction<T>(work: (tx: StoreTx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute((trx) => work(sealTx(trx, null)));
  }

  /**
   * In a transaction that holds the claim's key: takes over the steps kept under the key by earlier runs
   * of the same request (same fingerprint, claimed less than 24 h before `now`), stamping them with the
   * claim (so that they expire and are purged with the key), deletes any other request's steps under the
   * key, keeps each of `seeds` not kept yet, and answers the steps by name (their JSON as kept).
   */
  async adoptSteps(
    storeTx: StoreTx,
    claim: ClaimedKey,
    now: number,
    window: number,
    seeds: Record<string, string>,
  ): Promise<Map<string, string>> {
    const trx = openTx(storeTx).trx;
    await trx
      .deleteFrom('idempotency_keys')
      .where(stepsOf(claim))
      .where((eb) => eb.or([eb('fingerprint', '!=', claim.fingerprint), eb('created_at', '<=', now - window)]))
      .execute();
    await trx
      .updateTable('idempotency_keys')
      .set({ owner: claim.owner, created_at: claim.claimedAt })
      .where(stepsOf(claim))
      .execute();
    for (const [step, value] of Object.entries(seeds)) await this.insertStep(storeTx, claim, step, value);
    const rows = await trx
      .selectFrom('idempotency_keys')
      .select(['idempotency_key', 'response_body'])
      .where(stepsOf(claim))
      .execute();
    const prefix = claim.key + STEP_SEPARATOR;
    return new Map(rows.map((row) => [row.idempotency_key.slice(prefix.length), row.response_body ?? 'null']));
  }

  /** Keeps one step of the claim's request (its value as JSON); false when that step is already kept. */
  async insertStep(storeTx: StoreTx, claim: ClaimedKey, step: string, value: string): Promise<boolean> {
    const executor = openTx(storeTx).trx;
    const result = await executor
      .insertInto('idempotency_keys')
      .values({
        user_id: claim.userId,
        idempotency_key: claim.key + STEP_SEPARATOR + step,
        owner: claim.owner,
        method: claim.method,
        path: claim.path,
        fingerprint: claim.fingerprint,
        state: 'DONE',
        locked_until: 0,
        status_code: null,
        response_body: value,
        response_headers: null,
        created_at: claim.claimedAt,
      })
      .onConflict((oc) => oc.columns(['user_id', 'idempotency_key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  private claimColumns(claim: NewKeyClaim, lockedUntil: number) {
    return {
      owner: claim.owner,
      method: claim.method,
      path: claim.path,
      fingerprint: claim.fingerprint,
      state: 'RUNNING',
      locked_until: lockedUntil,
      status_code: null,
      response_body: null,
      response_headers: null,
    };
  }
}
