/**
 * What the operator's probes read (src/http/health.ts, src/metrics/): whether the database answers, and
 * the outbox's backlog. Both run on the read connection (SQLite's second connection, so that they never
 * wait behind an open write transaction; PostgreSQL's pool) and use the outbox's index on (done_at, id).
 */
import type { Kysely } from 'kysely';
import type { Database } from './tables.js';

/** The outbox entries not done yet, and when the oldest of them was created (epoch ms; null: none). */
export interface OutboxBacklog {
  open: number;
  oldestCreatedAt: number | null;
}

export class StoreHealth {
  constructor(private readonly readDb: Kysely<Database>) {}

  /**
   * Resolves when the database answers a read of a table (not a bare `select 1`, which SQLite answers
   * without reading the file); throws its error otherwise.
   */
  async answers(): Promise<void> {
    await this.readDb.selectFrom('outbox').select('id').where('done_at', 'is', null).limit(1).execute();
  }

  /** The outbox entries not done, and when the oldest of them (by id) was created. */
  async outboxBacklog(): Promise<OutboxBacklog> {
    const row = await this.readDb
      .selectFrom('outbox')
      .where('done_at', 'is', null)
      .select((eb) => [
        eb.fn.countAll<number | string>().as('open'),
        eb.selectFrom('outbox as oldest').select('oldest.created_at').where('oldest.done_at', 'is', null).orderBy('oldest.id').limit(1).as('oldest_created_at'),
      ])
      .executeTakeFirstOrThrow();
    return { open: Number(row.open), oldestCreatedAt: row.oldest_created_at == null ? null : Number(row.oldest_created_at) };
  }
}
