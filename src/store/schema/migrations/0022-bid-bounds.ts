/**
 * Migration 0022-bid-bounds (issue 47 row 3; docs/design/ofs.md, "Bounds on a bid"):
 *
 * - `users.zero_margin_limit_paise`: the most a client's live 0 %-margin bids may total, at their prices,
 *   as the operator sets it with the custodian arrangement (`ordergate users zero-margin-limit`); null:
 *   none set, and no 0 %-margin bid is taken.
 * - `ofs_offer_listings.value_limit_*_paise`: each series' order value upper limit, as the exchange sets
 *   it for the offer (NSE's `orderValueUpperLimit`), imported until the exchange link reads it; null: none.
 * - `ofs_offers.t_held_at`: when the exchange held the T allocation for the operator, the valid non-retail
 *   demand after the single-bidder cap being short of the non-retail portion; null: not held. What the
 *   offer's read calls show as the wait, so that they say what the exchange decided.
 */
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('users').addColumn('zero_margin_limit_paise', 'bigint').execute();
  await db.schema.alterTable('ofs_offers').addColumn('t_held_at', 'bigint').execute();
  for (const series of ['retail', 'non_retail', 'employee']) {
    await db.schema.alterTable('ofs_offer_listings').addColumn(`value_limit_${series}_paise`, 'bigint').execute();
  }
}
