/**
 * Migration 0028-exchange-references (issue 50; docs/design/exchange-links.md, "Issue 50"): the short
 * references ordergate gives its bids on a wire whose reference field is too narrow for an order id (BSE's
 * iBBS client/CP code: 16 characters; the order id is 36). One per order and exchange, never reused, so
 * that a download naming a reference finds its order after any restart.
 *
 * - `exchange_references`: `id` (serial: the reference is `OG` and its base 36, derived, never stored), the
 *   exchange segment, the order; one per order and exchange.
 */
import type { Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await serialKeyTable(db, dialect, 'exchange_references')
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('order_id', 'text', (c) => c.notNull())
    .addUniqueConstraint('exchange_references_order', ['exchange', 'order_id'])
    .execute();
}
