/**
 * The short references of our bids on a wire whose reference field is too narrow for an order id (migration
 * 0028; BSE's iBBS CP code, 16 characters): `OG` and a serial number in base 36, one per order and exchange,
 * never reused, kept so that a download naming a reference finds its order after any restart. The reference
 * is derived from the row's id, never stored apart: no crash leaves an order with a row and no reference.
 */
import type { Kysely } from 'kysely';
import type { Database } from '../schema/tables.js';

const PREFIX = 'OG';

/** The reference of the row `id`: `OG` and its base 36, upper case (at most 15 characters below 36^13). */
export function shortReferenceOf(id: number): string {
  return `${PREFIX}${id.toString(36).toUpperCase()}`;
}

/** The row id a reference names, or null for one ordergate did not make. */
export function idOfShortReference(reference: string): number | null {
  if (!/^OG[0-9A-Z]{1,13}$/.test(reference)) return null;
  const id = parseInt(reference.slice(PREFIX.length), 36);
  return Number.isSafeInteger(id) && id > 0 ? id : null;
}

export class ExchangeReferenceRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The references of these orders on the exchange, given now to those that have none; by order id. */
  async referencesOf(exchange: string, orderIds: readonly string[]): Promise<Map<string, string>> {
    const unique = [...new Set(orderIds)];
    if (unique.length === 0) return new Map();
    const known = await this.known(exchange, unique);
    const toGive = unique.filter((orderId) => !known.has(orderId));
    if (toGive.length > 0) {
      await this.db
        .insertInto('exchange_references')
        .values(toGive.map((orderId) => ({ exchange, order_id: orderId })))
        // Another worker gave one meanwhile: its stands.
        .onConflict((conflict) => conflict.columns(['exchange', 'order_id']).doNothing())
        .execute();
      for (const [orderId, reference] of await this.known(exchange, toGive)) known.set(orderId, reference);
    }
    return known;
  }

  /** The orders these references name on the exchange, by reference; one not ours is left out. */
  async ordersOf(exchange: string, references: readonly string[]): Promise<Map<string, string>> {
    const ids = references.map(idOfShortReference).filter((id): id is number => id !== null);
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('exchange_references')
      .select(['id', 'order_id'])
      .where('exchange', '=', exchange)
      .where('id', 'in', [...new Set(ids)])
      .execute();
    return new Map(rows.map((row) => [shortReferenceOf(Number(row.id)), row.order_id]));
  }

  /** The references these orders have on the exchange (none given: one without is left out); by order id. */
  async known(exchange: string, orderIds: readonly string[]): Promise<Map<string, string>> {
    if (orderIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom('exchange_references')
      .select(['id', 'order_id'])
      .where('exchange', '=', exchange)
      .where('order_id', 'in', orderIds)
      .execute();
    return new Map(rows.map((row) => [row.order_id, shortReferenceOf(Number(row.id))]));
  }
}
