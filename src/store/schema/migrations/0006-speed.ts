/**
 * Migration 0006-speed (docs/design/performance.md): what makes a bid's cost flat as orders grow.
 *
 * - `retail_exposure`: each user's live retail bids per OFS issue as running totals (the value of its
 *   price bids and the quantity of its cut-off bids), kept by OrderRepository.apply in the transaction of
 *   every order change, so that the Rs 2,00,000 check reads one row per issue of the symbol instead of
 *   every live bid. Filled here from the live retail orders already stored.
 * - The two order indexes on status (by user and symbol, by issue) go: the retail check no longer reads
 *   orders, nothing else reads them, and every status change of the OMS rewrote both.
 * - `order_history.request_id` is indexed only where it is set: the OMS's own rows (two in three) have
 *   none, and the audit trail looks rows up only by a request id.
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema
    .createTable('retail_exposure')
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('scrip_token', 'bigint', (c) => c.notNull())
    .addColumn('price_value_paise', 'bigint', (c) => c.notNull())
    .addColumn('cutoff_quantity', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('retail_exposure_pk', ['user_id', 'symbol', 'exchange', 'scrip_token'])
    .execute();
  await sql`
    insert into retail_exposure (user_id, symbol, exchange, scrip_token, price_value_paise, cutoff_quantity)
    select user_id, symbol, exchange, scrip_token,
      sum(case when order_type = 'RL-MKT' then 0 else quantity * price_paise end),
      sum(case when order_type = 'RL-MKT' then quantity else 0 end)
    from orders
    where category = 'RETAIL' and status in ('OMSXMITTED', 'EXXMITTED', 'PENDING')
    group by user_id, symbol, exchange, scrip_token`.execute(db);

  await db.schema.dropIndex('orders_user_symbol_status').execute();
  await db.schema.dropIndex('orders_issue_status').execute();

  await db.schema.dropIndex('order_history_request').execute();
  await db.schema
    .createIndex('order_history_request')
    .on('order_history')
    .column('request_id')
    .where(sql.ref('request_id'), 'is not', null)
    .execute();
}
