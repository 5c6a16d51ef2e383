/**
 * The OMS's failures per instrument (migration 0020, docs/design/oms.md): one row while an instrument's
 * work keeps failing (how many times in a row, the last error, when to try again), set aside once it has
 * failed too often, until the operator takes it back (`ordergate oms retry`). No row: nothing is wrong.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { Database, OmsInstrumentFaultsTable } from './tables.js';

export interface InstrumentFault {
  instrument: string;
  /** What failed last: allocation, indicative, events. */
  step: string;
  failures: number;
  firstFailedAt: number;
  lastFailedAt: number;
  lastError: string;
  nextTryAt: number;
  /** When it was set aside for the operator; null: it is still tried. */
  setAsideAt: number | null;
}

function faultFromRow(row: Selectable<OmsInstrumentFaultsTable>): InstrumentFault {
  return {
    instrument: row.instrument,
    step: row.step,
    failures: Number(row.failures),
    firstFailedAt: Number(row.first_failed_at),
    lastFailedAt: Number(row.last_failed_at),
    lastError: row.last_error,
    nextTryAt: Number(row.next_try_at),
    setAsideAt: row.set_aside_at === null ? null : Number(row.set_aside_at),
  };
}

/**
 * SQL of a sim_exchange_bids row `b`: its instrument's key, as src/domain/instruments.ts builds it. The
 * exchange's events of a set-aside instrument wait with it (store/sim-exchange.ts).
 */
export const BID_INSTRUMENT_SQL = sql<string>`case when b.offer_id is not null then 'offer:' || b.offer_id else 'issue:' || b.exchange || ':' || cast(b.scrip_token as text) end`;

export class InstrumentFaultRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Every instrument with a failure on record, set aside first, then by when it last failed. */
  async all(): Promise<InstrumentFault[]> {
    const rows = await this.db.selectFrom('oms_instrument_faults').selectAll().orderBy('instrument').execute();
    return rows
      .map(faultFromRow)
      .sort(
        (a, b) => Number(b.setAsideAt !== null) - Number(a.setAsideAt !== null) || b.lastFailedAt - a.lastFailedAt || (a.instrument < b.instrument ? -1 : 1),
      );
  }

  /** Records the fault as it now stands (the guard counts the failures). */
  async record(fault: InstrumentFault): Promise<void> {
    const values = {
      step: fault.step,
      failures: fault.failures,
      first_failed_at: fault.firstFailedAt,
      last_failed_at: fault.lastFailedAt,
      last_error: fault.lastError,
      next_try_at: fault.nextTryAt,
      set_aside_at: fault.setAsideAt,
    };
    await this.db
      .insertInto('oms_instrument_faults')
      .values({ instrument: fault.instrument, ...values })
      .onConflict((oc) => oc.column('instrument').doUpdateSet(values))
      .execute();
  }

  /** Forgets the instrument's failures: it worked, or the operator takes it back. Answers whether there were any. */
  async clear(instrument: string): Promise<boolean> {
    const result = await this.db.deleteFrom('oms_instrument_faults').where('instrument', '=', instrument).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** How many instruments are set aside (the health endpoint and the metrics read it). */
  async setAsideCount(): Promise<number> {
    const row = await this.db
      .selectFrom('oms_instrument_faults')
      .select((eb) => eb.fn.countAll<number | string>().as('count'))
      .where('set_aside_at', 'is not', null)
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
}
