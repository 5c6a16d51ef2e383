/**
 * Migration 0016-user-event-ids (issue 21 row 9): an order event's id is the user's own count of order
 * events (1, 2, 3, ... per user), not the history row's id, which counts every user's events and so let
 * anyone watch the volume of all the others'.
 *
 * - `order_history.user_id`: the order's owner, on the row itself, so that a user's events are read (the
 *   stream's replay) and their webhooks found without the orders table.
 * - `order_history.user_event_id`: the user's n-th event has n; unique per user. Existing rows are
 *   numbered in the order of their ids.
 * - `user_event_counters`: the last number each user was given. A transaction that writes a user's events
 *   takes the user's row first (OrderRepository.apply), so the numbers of a user's events follow the order
 *   in which their transactions commit, without gap: the n-th is committed before the (n+1)-th.
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.alterTable('order_history').addColumn('user_id', 'text').execute();
  await db.schema.alterTable('order_history').addColumn('user_event_id', 'bigint').execute();
  // The table is append-only (migration 0005): its guard against updates steps aside for the numbering.
  if (dialect === 'postgres')
    await sql`alter table order_history disable trigger order_history_append_only`.execute(db);
  else await sql`drop trigger order_history_no_update`.execute(db);
  await sql`update order_history set user_id = (select o.user_id from orders o where o.order_id = order_history.order_id)`.execute(
    db,
  );
  await sql`update order_history set user_event_id = r.n
    from (select id, row_number() over (partition by user_id order by id) as n from order_history) r
    where r.id = order_history.id`.execute(db);
  if (dialect === 'postgres') {
    await sql`alter table order_history enable trigger order_history_append_only`.execute(db);
  } else {
    await sql`create trigger order_history_no_update before update on order_history
      begin select raise(abort, 'order_history is append-only: update refused'); end`.execute(db);
  }
  await db.schema
    .createIndex('order_history_user_event')
    .unique()
    .on('order_history')
    .columns(['user_id', 'user_event_id'])
    .execute();
  await db.schema
    .createTable('user_event_counters')
    .addColumn('user_id', 'text', (c) => c.primaryKey())
    .addColumn('last_event_id', 'bigint', (c) => c.notNull())
    .execute();
  await sql`insert into user_event_counters (user_id, last_event_id)
    select user_id, max(user_event_id) from order_history group by user_id`.execute(db);
}
