/**
 * Migration 0012-operators (docs/design/console-api.md): `users.operator_since`, when the operator made the
 * user an operator (`ordergate users add --operator`, `ordergate users set-operator`); null: not one. An
 * operator may read any OFS issue's book of demand (GET /operator/v1/ofs/{exchange}/{scrip_token}/book).
 * Every existing user starts as a non-operator.
 *
 * `orders_issue` (exchange, scrip_token): the book sums the orders of one issue (store/ofs/book.ts) without
 * reading those of every other issue. 0006 dropped 0002's index on (exchange, scrip_token, status) because
 * every status change rewrote it; this one holds no column an order change writes, so only a new order adds
 * an entry (at the end of its issue's range), and on PostgreSQL status updates stay HOT.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await db.schema.alterTable('users').addColumn('operator_since', 'bigint').execute();
  await db.schema.createIndex('orders_issue').on('orders').columns(['exchange', 'scrip_token']).execute();
}
