/**
 * The simulated OFS exchange's own book (sim_exchange_bids) and the events it owes the OMS
 * (sim_exchange_events). Only src/oms/simulated-exchange.ts uses it.
 */
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, SimExchangeBidsTable, SimExchangeEventsTable } from './tables.js';

export type SimBidRow = Selectable<SimExchangeBidsTable>;
export type SimEventRow = Selectable<SimExchangeEventsTable>;

export interface NewSimBid {
  orderId: string;
  exchangeOrderId: string;
  exchange: string;
  scripToken: number;
  category: string;
  orderType: string;
  pricePaise: number;
  quantity: number;
}

export interface SimBidTerms {
  orderType: string;
  pricePaise: number;
  quantity: number;
}

export interface NewSimEvent {
  orderId: string;
  kind: 'ALLOTTED' | 'NOT_ALLOTTED';
  quantity: number;
  pricePaise: number | null;
  reason: string;
}

/** An issue whose two windows have closed and that has not been allocated. */
export interface DueIssue {
  exchange: string;
  scripToken: number;
}

type Db = Kysely<Database> | Transaction<Database>;

export class SimExchangeRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Pass `db` to read inside a transaction. */
  async findBid(orderId: string, db: Db = this.db): Promise<SimBidRow | undefined> {
    return db.selectFrom('sim_exchange_bids').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  }

  /**
   * Records a received placement: a new bid, or one more transmission of a bid already in the book (which
   * keeps its exchange order id and terms).
   */
  async receiveBid(trx: Transaction<Database>, bid: NewSimBid, now: number): Promise<void> {
    await trx
      .insertInto('sim_exchange_bids')
      .values({
        order_id: bid.orderId,
        exchange_order_id: bid.exchangeOrderId,
        exchange: bid.exchange,
        scrip_token: bid.scripToken,
        category: bid.category,
        order_type: bid.orderType,
        price_paise: bid.pricePaise,
        quantity: bid.quantity,
        status: 'LIVE',
        transmissions: 1,
        received_at: now,
        updated_at: now,
      })
      .onConflict((oc) =>
        oc.column('order_id').doUpdateSet((eb) => ({ transmissions: eb('sim_exchange_bids.transmissions', '+', 1) })),
      )
      .execute();
  }

  /** Counts one more transmission of a bid already in the book. */
  async countRetransmission(trx: Transaction<Database>, orderId: string): Promise<void> {
    await trx
      .updateTable('sim_exchange_bids')
      .set((eb) => ({ transmissions: eb('transmissions', '+', 1) }))
      .where('order_id', '=', orderId)
      .execute();
  }

  /** Changes the terms of a bid that is still live; answers false when it is not. */
  async changeLiveBid(trx: Transaction<Database>, orderId: string, terms: SimBidTerms, now: number): Promise<boolean> {
    const result = await trx
      .updateTable('sim_exchange_bids')
      .set({ order_type: terms.orderType, price_paise: terms.pricePaise, quantity: terms.quantity, updated_at: now })
      .where('order_id', '=', orderId)
      .where('status', '=', 'LIVE')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Moves a bid from `from` to `to`; answers false when it was not in `from`. */
  async setStatus(trx: Transaction<Database>, orderId: string, from: string, to: string, now: number): Promise<boolean> {
    const result = await trx
      .updateTable('sim_exchange_bids')
      .set({ status: to, updated_at: now })
      .where('order_id', '=', orderId)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async issuesDueForAllocation(now: number): Promise<DueIssue[]> {
    const rows = await this.db
      .selectFrom('ofs_issues')
      .select(['exchange', 'scrip_token'])
      .where('allocated_at', 'is', null)
      .where('non_retail_closes_at', '<=', now)
      .where('retail_closes_at', '<=', now)
      .orderBy('exchange')
      .orderBy('scrip_token')
      .execute();
    return rows.map((row) => ({ exchange: row.exchange, scripToken: Number(row.scrip_token) }));
  }

  /**
   * Marks an issue as allocated, only if nobody has and its windows have both closed: a conditional
   * UPDATE, so that of several concurrent callers exactly one gets true and runs the allocation.
   */
  async claimAllocation(trx: Transaction<Database>, issue: DueIssue, now: number): Promise<boolean> {
    const result = await trx
      .updateTable('ofs_issues')
      .set({ allocated_at: now })
      .where('exchange', '=', issue.exchange)
      .where('scrip_token', '=', issue.scripToken)
      .where('allocated_at', 'is', null)
      .where('non_retail_closes_at', '<=', now)
      .where('retail_closes_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async liveBids(trx: Transaction<Database>, issue: DueIssue): Promise<SimBidRow[]> {
    return trx
      .selectFrom('sim_exchange_bids')
      .selectAll()
      .where('exchange', '=', issue.exchange)
      .where('scrip_token', '=', issue.scripToken)
      .where('status', '=', 'LIVE')
      .orderBy('received_at')
      .orderBy('order_id')
      .execute();
  }

  async insertEvent(trx: Transaction<Database>, event: NewSimEvent, now: number): Promise<void> {
    await trx
      .insertInto('sim_exchange_events')
      .values({
        order_id: event.orderId,
        kind: event.kind,
        quantity: event.quantity,
        price_paise: event.pricePaise,
        reason: event.reason,
        created_at: now,
        delivered_at: null,
      })
      .execute();
  }

  async undeliveredEvents(limit: number): Promise<SimEventRow[]> {
    return this.db.selectFrom('sim_exchange_events').selectAll().where('delivered_at', 'is', null).orderBy('id').limit(limit).execute();
  }

  async markDelivered(ids: readonly number[], now: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable('sim_exchange_events')
      .set({ delivered_at: now })
      .where('id', 'in', ids)
      .where('delivered_at', 'is', null)
      .execute();
  }
}
