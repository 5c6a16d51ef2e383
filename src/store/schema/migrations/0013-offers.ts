/**
 * Migration 0013-offers (docs/design/ofs.md): the OFS as the exchanges run it.
 *
 * - `users.category` takes the framework's categories: RETAIL, NII, MF, IC, OTHS. Every NON_RETAIL user
 *   becomes NII (individuals above Rs 2 lakh, HUFs, corporates: the category that behaves as NON_RETAIL
 *   did); the operator re-categorises institutions with `ordergate users set-category`. An issue of the
 *   old model still sees RETAIL and NON_RETAIL (store/access/users.ts maps the four non-retail kinds to it).
 * - `users.margin_type`: H (100 % margin, everyone) or T (0 % margin, an institution whose custodian
 *   confirms), set with the category.
 * - `ofs_offers`: one offer, its terms and how far its two days have run; `ofs_offer_listings`: its
 *   listings (one per exchange and scrip token, with each category's series); `ofs_offer_employees`: the
 *   users the operator registered as the offer's eligible employees.
 */
import type { Kysely } from 'kysely';
import { sql } from 'kysely';
import type { DialectName } from '../../sql/database.js';

export async function up(db: Kysely<any>, _dialect: DialectName): Promise<void> {
  await sql`update users set category = 'NII' where category = 'NON_RETAIL'`.execute(db);
  await db.schema
    .alterTable('users')
    .addColumn('margin_type', 'text', (c) => c.notNull().defaultTo('H'))
    .execute();

  await db.schema
    .createTable('ofs_offers')
    .addColumn('offer_id', 'text', (c) => c.primaryKey())
    .addColumn('symbol', 'text', (c) => c.notNull())
    .addColumn('floor_price_paise', 'bigint', (c) => c.notNull())
    .addColumn('tick_size_paise', 'bigint', (c) => c.notNull())
    .addColumn('base_quantity', 'bigint', (c) => c.notNull())
    .addColumn('green_shoe_quantity', 'bigint', (c) => c.notNull())
    .addColumn('green_shoe_exercised', 'integer', (c) => c.notNull())
    .addColumn('retail_reserve_pct', 'double precision', (c) => c.notNull())
    .addColumn('retail_discount_paise', 'bigint')
    .addColumn('retail_discount_bp', 'bigint')
    .addColumn('retail_allocation_price', 'text', (c) => c.notNull())
    .addColumn('employee_quantity', 'bigint', (c) => c.notNull())
    .addColumn('employee_discount_paise', 'bigint')
    .addColumn('employee_discount_bp', 'bigint')
    .addColumn('allocation', 'text', (c) => c.notNull())
    .addColumn('t_opens_at', 'bigint', (c) => c.notNull())
    .addColumn('t_closes_at', 'bigint', (c) => c.notNull())
    .addColumn('t1_opens_at', 'bigint', (c) => c.notNull())
    .addColumn('t1_closes_at', 'bigint', (c) => c.notNull())
    .addColumn('settlement_delay_ms', 'bigint')
    // How far the two days have run: the T allocation (with the cut-off it found and the non-retail
    // shares it left), the T+1 allocation, the operator's cancellation.
    .addColumn('t_allocated_at', 'bigint')
    .addColumn('t_cutoff_price_paise', 'bigint')
    .addColumn('t_unallotted', 'bigint')
    .addColumn('t1_allocated_at', 'bigint')
    .addColumn('cancelled_at', 'bigint')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema
    .createTable('ofs_offer_listings')
    .addColumn('exchange', 'text', (c) => c.notNull())
    .addColumn('scrip_token', 'bigint', (c) => c.notNull())
    .addColumn('offer_id', 'text', (c) => c.notNull().references('ofs_offers.offer_id'))
    .addColumn('series_retail', 'text', (c) => c.notNull())
    .addColumn('series_non_retail', 'text', (c) => c.notNull())
    .addColumn('series_employee', 'text')
    .addPrimaryKeyConstraint('ofs_offer_listings_pk', ['exchange', 'scrip_token'])
    .execute();
  await db.schema.createIndex('ofs_offer_listings_offer').on('ofs_offer_listings').column('offer_id').execute();
  await db.schema
    .createTable('ofs_offer_employees')
    .addColumn('offer_id', 'text', (c) => c.notNull().references('ofs_offers.offer_id'))
    .addColumn('user_id', 'text', (c) => c.notNull().references('users.user_id'))
    .addColumn('registered_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('ofs_offer_employees_pk', ['offer_id', 'user_id'])
    .execute();
}
