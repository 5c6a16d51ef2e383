/**
 * Migration 0020-offer-exchange-rules (issue 46; shared/spec/ofs-framework.md, "Changes" of 2026-12-06;
 * docs/design/ofs.md):
 *
 * - `ofs_offers.green_shoe_exercised` becomes a quantity (shares of the green shoe exercised; 1 was "all"):
 *   a seller may exercise the option in part. A bigint on PostgreSQL, as every quantity.
 * - `green_shoe_decided_at`: when the operator recorded the seller's decision; `green_shoe_decision_by`:
 *   its deadline, which the T allocation waits for. Offers registered before keep allotting at T's close
 *   (their deadline is T's close), as they did.
 * - `employee_green_shoe_quantity`: the employees' part of the green shoe (0 before).
 * - `printed_*`: the portions as the exchange's notice printed them, for the green shoe `printed_green_shoe`
 *   (null: none printed).
 * - `sim_exchange_events.day`: the day an allotment belongs to (T or T+1), which tells its settlement day.
 * - `oms_instrument_faults`: the OMS's failures per instrument (an offer or an issue) and step: how many
 *   in a row, the last error, when to try again, and whether it is set aside for the operator
 *   (docs/design/oms.md).
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  if (dialect === 'postgres')
    await sql`alter table ofs_offers alter column green_shoe_exercised type bigint`.execute(db);
  await sql`update ofs_offers set green_shoe_exercised = case when green_shoe_exercised = 1 then green_shoe_quantity else 0 end`.execute(
    db,
  );
  await db.schema.alterTable('ofs_offers').addColumn('green_shoe_decided_at', 'bigint').execute();
  await db.schema
    .alterTable('ofs_offers')
    .addColumn('green_shoe_decision_by', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  await sql`update ofs_offers set green_shoe_decision_by = t_closes_at`.execute(db);
  await db.schema
    .alterTable('ofs_offers')
    .addColumn('employee_green_shoe_quantity', 'bigint', (c) => c.notNull().defaultTo(0))
    .execute();
  for (const column of [
    'printed_green_shoe',
    'printed_retail_reserved',
    'printed_non_retail',
    'printed_mf_ic_reserved',
    'printed_employee',
  ]) {
    await db.schema.alterTable('ofs_offers').addColumn(column, 'bigint').execute();
  }

  await db.schema.alterTable('sim_exchange_events').addColumn('day', 'text').execute();

  await db.schema
    .createTable('oms_instrument_faults')
    // `offer:<offer_id>` or `issue:<exchange>:<scrip_token>`.
    .addColumn('instrument', 'text', (c) => c.notNull())
    // What failed: the exchange's allocation of the instrument, its indicative price, or applying its
    // events. Each step apart: one that works never clears another's failures.
    .addColumn('step', 'text', (c) => c.notNull())
    .addColumn('failures', 'integer', (c) => c.notNull())
    .addColumn('first_failed_at', 'bigint', (c) => c.notNull())
    .addColumn('last_failed_at', 'bigint', (c) => c.notNull())
    .addColumn('last_error', 'text', (c) => c.notNull())
    .addColumn('next_try_at', 'bigint', (c) => c.notNull())
    .addColumn('set_aside_at', 'bigint')
    .addPrimaryKeyConstraint('oms_instrument_faults_pk', ['instrument', 'step'])
    .execute();
}
