/**
 * The leases of exchange sessions (migration 0026; src/oms/links/session-lease.ts): who holds an exchange
 * API user's session, and until when. Taking a lease is one conditional write: it succeeds for the
 * holder (a renewal) or when the lease has run out (a takeover), so that two nodes never both hold it.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';

export interface SessionHolder {
  holder: string;
  heldUntil: number;
}

/** Where an exchange link's message stream resumes (migration 0027): the sequence number applied up to. */
export class StreamCursorRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The stream's cursor; 0 for a stream never read. */
  async read(name: string): Promise<number> {
    const row = await this.db
      .selectFrom('exchange_stream_cursors')
      .select('seq')
      .where('name', '=', name)
      .executeTakeFirst();
    return row === undefined ? 0 : Number(row.seq);
  }

  /** Moves the cursor forward to `seq` (never back: a slower node's write leaves a faster one's). */
  async advance(name: string, seq: number): Promise<void> {
    await this.db
      .insertInto('exchange_stream_cursors')
      .values({ name, seq })
      .onConflict((conflict) =>
        conflict.column('name').doUpdateSet({ seq }).where('exchange_stream_cursors.seq', '<', seq),
      )
      .execute();
  }
}

export class ExchangeSessionRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Takes or renews the lease for `holder` until `until`, if it is free or expired at `now`; answers who holds it after. */
  async take(name: string, holder: string, now: number, until: number): Promise<SessionHolder> {
    await this.db
      .insertInto('exchange_sessions')
      .values({ name, holder, held_until: until })
      .onConflict((conflict) =>
        conflict
          .column('name')
          .doUpdateSet({ holder, held_until: until })
          .where((eb) =>
            eb.or([eb('exchange_sessions.holder', '=', holder), eb('exchange_sessions.held_until', '<', now)]),
          ),
      )
      .execute();
    const row = await this.db
      .selectFrom('exchange_sessions')
      .select(['holder', 'held_until'])
      .where('name', '=', name)
      .executeTakeFirstOrThrow();
    return { holder: row.holder, heldUntil: Number(row.held_until) };
  }

  /** Gives the lease up, if `holder` holds it: another node may take it at once. */
  async release(name: string, holder: string): Promise<void> {
    await this.db
      .updateTable('exchange_sessions')
      .set({ held_until: 0 })
      .where('name', '=', name)
      .where('holder', '=', holder)
      .execute();
  }
}
