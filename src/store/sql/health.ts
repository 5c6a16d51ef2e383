/**
 * What the operator's probes read (src/http/routes/health.ts, src/metrics/): whether the database answers, the
 * outbox's backlog, and the instruments the OMS set aside. Both run on the read connection (SQLite's second connection, so that they never
 * wait behind an open write transaction; PostgreSQL's pool) and use the outbox's index on (done_at, id).
 * And what a node or an OMS worker warns of at its start: a PostgreSQL server that does not vacuum.
 */
import { sql, type Kysely } from 'kysely';
import type { Store } from './database.js';
import type { SetAsideInstrument } from '../../domain/ofs/instrument-keys.js';
import type { Database } from '../schema/tables.js';

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

  /** The instruments the OMS set aside after repeated failures (oms_instrument_faults), the longest set aside first. */
  async setAside(): Promise<SetAsideInstrument[]> {
    const rows = await this.readDb
      .selectFrom('oms_instrument_faults')
      .select(['instrument', 'step', 'failures', 'set_aside_at'])
      .where('set_aside_at', 'is not', null)
      .orderBy('set_aside_at')
      .orderBy('instrument')
      .execute();
    return rows.map((row) => ({
      instrument: row.instrument,
      step: row.step,
      failures: Number(row.failures),
      setAsideAt: Number(row.set_aside_at),
    }));
  }

  /** The outbox entries not done, and when the oldest of them (by id) was created. */
  async outboxBacklog(): Promise<OutboxBacklog> {
    const row = await this.readDb
      .selectFrom('outbox')
      .where('done_at', 'is', null)
      .select((eb) => [
        eb.fn.countAll<number | string>().as('open'),
        eb
          .selectFrom('outbox as oldest')
          .select('oldest.created_at')
          .where('oldest.done_at', 'is', null)
          .orderBy('oldest.id')
          .limit(1)
          .as('oldest_created_at'),
      ])
      .executeTakeFirstOrThrow();
    return {
      open: Number(row.open),
      oldestCreatedAt: row.oldest_created_at == null ? null : Number(row.oldest_created_at),
    };
  }
}

/** The server settings that keep PostgreSQL's tables vacuumed and analyzed, as `current_setting` reads them. */
export interface MaintenanceSettings {
  autovacuum: string;
  trackCounts: string;
}

/**
 * Why the database will slow down as it is used, or null: PostgreSQL without autovacuum (or without
 * `track_counts`, which it needs). Every bid updates its order, its outbox entry and its user's counters in
 * place; without VACUUM the dead row versions stay in the tables and their indexes, and without ANALYZE the
 * statements keep plans made for the tables' first sizes. Measured: a node's database CPU per bid grew from
 * 171 to 265 us over three rounds of load, and stayed at 171-180 with a VACUUM ANALYZE before each
 * (docs/design/performance-log.md, "A database that autovacuum does not keep").
 */
export function maintenanceProblem(settings: MaintenanceSettings): string | null {
  if (settings.autovacuum !== 'on')
    return 'autovacuum is off on this PostgreSQL server: turn it on (the default), or run VACUUM ANALYZE on the database regularly';
  if (settings.trackCounts !== 'on')
    return 'track_counts is off on this PostgreSQL server, so autovacuum cannot run: turn it on (the default)';
  return null;
}

/** The maintenance settings of the store's PostgreSQL server; null on SQLite, which needs none. */
export async function maintenanceSettings(
  store: Pick<Store, 'dialect' | 'readDb'>,
): Promise<MaintenanceSettings | null> {
  if (store.dialect !== 'postgres') return null;
  const { rows } = await sql<{
    autovacuum: string;
    track_counts: string;
  }>`select current_setting('autovacuum') as autovacuum, current_setting('track_counts') as track_counts`.execute(
    store.readDb,
  );
  const row = rows[0]!;
  return { autovacuum: row.autovacuum, trackCounts: row.track_counts };
}

/**
 * Warns, at a server's or an OMS worker's start, when the database will slow down as it is used (see
 * maintenanceProblem). Advice only: a failed read of the settings stops nothing.
 */
export async function warnOfMaintenance(
  store: Pick<Store, 'dialect' | 'readDb'>,
  logger: { warn(fields: Record<string, unknown>, message: string): void },
): Promise<void> {
  const settings = await maintenanceSettings(store).catch(() => null);
  const problem = settings === null ? null : maintenanceProblem(settings);
  if (problem !== null) logger.warn({ autovacuum: settings!.autovacuum, trackCounts: settings!.trackCounts }, problem);
}
