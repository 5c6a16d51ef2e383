/**
 * The store of idempotency keys: one row per (user, key). A request claims a key by inserting its row
 * (RUNNING, with a lease); the primary key lets exactly one request on any node win. Its answer, if
 * kept, turns the row DONE; an answer that is not kept deletes it. Every change after the claim names the
 * claiming request (`owner`), so that a request whose key was taken over can no longer touch it.
 */
import type { Kysely, Transaction } from 'kysely';
import type { HeldKey } from '../domain/idempotency.js';
import type { DialectName } from './database.js';
import type { Database } from './tables.js';

export interface IdempotencyKeysTable {
  user_id: string;
  idempotency_key: string;
  /** A random token naming the request that holds (or held) the key. */
  owner: string;
  method: string;
  path: string;
  /** SHA-256 of method, path and canonical body (domain/idempotency.ts). */
  fingerprint: string;
  /** RUNNING (held by a request until locked_until) or DONE (the answer below is kept). */
  state: string;
  locked_until: number;
  status_code: number | null;
  /** The answer's body, byte for byte. */
  response_body: string | null;
  /** The answer's headers that a replay repeats (e.g. ETag), as a JSON object. */
  response_headers: string | null;
  created_at: number;
}

/** The tables of idempotency keys (part of `Database`). */
export interface IdempotencyTables {
  idempotency_keys: IdempotencyKeysTable;
}

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

type Executor = Kysely<Database> | Transaction<Database>;

export class IdempotencyKeyRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** Inserts the claim as RUNNING; false when the key is already stored. */
  async insertRunning(claim: NewKeyClaim, now: number, lockedUntil: number): Promise<boolean> {
    const result = await this.db
      .insertInto('idempotency_keys')
      .values({ ...this.claimColumns(claim, lockedUntil), user_id: claim.userId, idempotency_key: claim.key, created_at: now })
      .onConflict((oc) => oc.columns(['user_id', 'idempotency_key']).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
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
      responseHeaders: row.response_headers === null ? {} : (JSON.parse(row.response_headers) as Record<string, string>),
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
  async isHeld(trx: Transaction<Database>, claim: KeyClaim): Promise<boolean> {
    const query = trx
      .selectFrom('idempotency_keys')
      .select(['owner', 'state'])
      .where('user_id', '=', claim.userId)
      .where('idempotency_key', '=', claim.key);
    const row = await (this.dialect === 'postgres' ? query.forUpdate() : query).executeTakeFirst();
    return row !== undefined && row.owner === claim.owner && row.state === 'RUNNING';
  }

  /** Keeps the answer of a claim that still holds its key; false when it no longer does. */
  async keepAnswer(claim: KeyClaim, answer: KeptAnswer, executor: Executor = this.db): Promise<boolean> {
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
