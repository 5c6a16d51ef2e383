/**
 * The OMS's failures per instrument and step (migration 0020, docs/design/oms.md): one row while an
 * instrument's step keeps failing (how many times in a row, the last error, when to try again), set aside
 * once it has failed too often, until the operator takes it back (`ordergate oms retry`). No row: nothing
 * is wrong. Several OMS workers, on several nodes, write here: a failure is counted in one transaction
 * with the row locked, so that none is lost and a set-aside stays set aside.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import type { DialectName } from '../sql/database.js';
import type { Database, OmsInstrumentFaultsTable } from '../schema/tables.js';

export interface InstrumentFault {
  instrument: string;
  /** What failed: allocation, indicative, events. */
  step: string;
  failures: number;
  firstFailedAt: number;
  lastFailedAt: number;
  lastError: string;
  nextTryAt: number;
  /** When it was set aside for the operator; null: it is still tried. */
  setAsideAt: number | null;
}

/** When a failure sets an instrument's step aside, and how long it pauses before the next try. */
export interface FaultPolicy {
  /** Failures in a row after which the step is set aside. */
  maxTries: number;
  /** The pause after the first failure; it doubles with each failure after. */
  firstRetryMs: number;
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
 * SQL of a sim_exchange_bids row `b`: its instrument's key, as src/domain/ofs/instrument-keys.ts builds it. The
 * exchange's events of an instrument whose events are set aside wait with it (store/ofs/sim-exchange.ts).
 */
export const BID_INSTRUMENT_SQL = sql<string>`case when b.offer_id is not null then 'offer:' || b.offer_id else 'issue:' || b.exchange || ':' || cast(b.scrip_token as text) end`;

export class InstrumentFaultRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** Every instrument's step with a failure on record, set aside first, then the latest failure first. */
  async all(): Promise<InstrumentFault[]> {
    const rows = await this.db.selectFrom('oms_instrument_faults').selectAll().execute();
    return rows
      .map(faultFromRow)
      .sort(
        (a, b) =>
          Number(b.setAsideAt !== null) - Number(a.setAsideAt !== null) ||
          b.lastFailedAt - a.lastFailedAt ||
          (a.instrument < b.instrument ? -1 : a.instrument > b.instrument ? 1 : a.step < b.step ? -1 : 1),
      );
  }

  /**
   * Counts one more failure of the instrument's step at `now`, in one transaction with its row locked:
   * the pause before the next try doubles, and the failure that reaches `policy.maxTries` sets it aside
   * (a step set aside stays so). Answers the row as it now stands.
   */
  async recordFailure(
    instrument: string,
    step: string,
    error: string,
    now: number,
    policy: FaultPolicy,
  ): Promise<InstrumentFault> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('oms_instrument_faults')
        .values({
          instrument,
          step,
          failures: 0,
          first_failed_at: now,
          last_failed_at: now,
          last_error: error,
          next_try_at: now,
          set_aside_at: null,
        })
        .onConflict((oc) => oc.columns(['instrument', 'step']).doNothing())
        .execute();
      const locked = trx
        .selectFrom('oms_instrument_faults')
        .selectAll()
        .where('instrument', '=', instrument)
        .where('step', '=', step);
      // SQLite's one writer holds the whole database; PostgreSQL locks the row.
      const before = faultFromRow(
        await (this.dialect === 'postgres' ? locked.forUpdate() : locked).executeTakeFirstOrThrow(),
      );
      const failures = before.failures + 1;
      const fault: InstrumentFault = {
        ...before,
        failures,
        lastFailedAt: now,
        lastError: error,
        nextTryAt: now + policy.firstRetryMs * 2 ** (failures - 1),
        setAsideAt: before.setAsideAt ?? (failures >= policy.maxTries ? now : null),
      };
      await trx
        .updateTable('oms_instrument_faults')
        .set({
          failures: fault.failures,
          last_failed_at: fault.lastFailedAt,
          last_error: fault.lastError,
          next_try_at: fault.nextTryAt,
          set_aside_at: fault.setAsideAt,
        })
        .where('instrument', '=', instrument)
        .where('step', '=', step)
        .execute();
      return fault;
    });
  }

  /**
   * Forgets the failures of the instrument's step (it worked), or of all its steps (the operator takes it
   * back). Answers whether there were any.
   */
  async clear(instrument: string, step?: string): Promise<boolean> {
    let query = this.db.deleteFrom('oms_instrument_faults').where('instrument', '=', instrument);
    if (step !== undefined) query = query.where('step', '=', step);
    const result = await query.executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
