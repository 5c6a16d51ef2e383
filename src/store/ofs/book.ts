/**
 * The sums behind an OFS issue's book (domain/ofs/issue/book.ts): its live bids, its allotments and the bids the
 * allocation took, per category and price, in one grouped query over the orders of that issue alone (the
 * index orders_issue: exchange, scrip_token; migration 0012). No order is loaded: the answer has one row
 * per category, kind of bid (live, allotted, not allotted), bid price and trade price.
 */
import { sql, type Kysely } from 'kysely';
import type { BookGroup } from '../../domain/ofs/issue/book.js';
import type { OfferBookRow } from '../../domain/ofs/offer/book.js';
import type { OfferCategory } from '../../domain/ofs/offer/offer.js';
import type { BidderCategory } from '../../domain/ofs/rules.js';
import { LIVE_STATUSES, OrderStatus } from '../../domain/orders/status.js';
import { exactSum, exactSumOf } from '../sql/exact-sum.js';
import type { Database } from '../schema/tables.js';

export interface IssueOrderSums {
  /** The live bids (what the allocation takes), by category and bid price (0: cut-off). */
  live: BookGroup[];
  /** The allotments (EXECUTED orders' traded quantities), by category and trade price. */
  allotted: BookGroup[];
  /**
   * Every bid that is live or went through the allocation (allotted, or closed by it without an allotment),
   * by category and bid price, with the quantity bid: the demand the allocation took, which stays after
   * it has run. Cancelled and rejected bids are not in it.
   */
  placed: BookGroup[];
}

/** How a bid counts in the book: live, allotted (EXECUTED), or closed by the allocation without an allotment. */
const LIVE = 0;
const ALLOTTED = 1;
const NOT_ALLOTTED = 2;

export class OfsBookRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async sums(exchange: string, scripToken: number): Promise<IssueOrderSums> {
    // Exact past 2^53 on both dialects (store/sql/exact-sum.ts).
    const rows = await this.db
      .selectFrom('orders')
      .select((eb) => [
        'category',
        eb
          .case()
          .when('status', 'in', [...LIVE_STATUSES])
          .then(eb.lit(LIVE))
          .when('status', '=', OrderStatus.EXECUTED)
          .then(eb.lit(ALLOTTED))
          .else(eb.lit(NOT_ALLOTTED))
          .end()
          .as('kind'),
        'price_paise',
        'traded_price_paise',
        ...exactSum('quantity', 'quantity'),
        ...exactSum('traded_quantity', 'traded_quantity'),
        eb.fn.countAll<number | string>().as('bids'),
      ])
      .where('exchange', '=', exchange)
      .where('scrip_token', '=', scripToken)
      // A bid the allocation closed without an allotment is CANCELLED with the allocation's reason; a bid
      // its bidder cancelled has none (oms/transitions.ts).
      .where((eb) =>
        eb.or([
          eb('status', 'in', [...LIVE_STATUSES, OrderStatus.EXECUTED]),
          eb.and([eb('status', '=', OrderStatus.CANCELLED), eb('error_reason', 'is not', null)]),
        ]),
      )
      .groupBy(['category', sql.ref('kind'), 'price_paise', 'traded_price_paise'])
      .execute();
    const sums: IssueOrderSums = { live: [], allotted: [], placed: [] };
    for (const row of rows) {
      // PostgreSQL answers sums (numeric), counts and bigints as strings.
      const category = row.category as BidderCategory;
      const kind = Number(row.kind);
      const bids = Number(row.bids);
      const bid: BookGroup = {
        category,
        pricePaise: Number(row.price_paise),
        quantity: exactSumOf(row, 'quantity'),
        bids,
      };
      sums.placed.push(bid);
      if (kind === LIVE) sums.live.push(bid);
      // An EXECUTED order has its trade price.
      if (kind === ALLOTTED)
        sums.allotted.push({
          category,
          pricePaise: Number(row.traded_price_paise),
          quantity: exactSumOf(row, 'traded_quantity'),
          bids,
        });
    }
    return sums;
  }

  /**
   * The sums behind an offer's book (domain/ofs/offer/book.ts): its bids that are live or allotted, per
   * listing, category, liveness and price, over the orders of the offer alone (the partial index
   * orders_offer, migration 0014).
   */
  async offerSums(offerId: string): Promise<OfferBookRow[]> {
    // Exact past 2^53 (store/sql/exact-sum.ts); the value of the allotments is each group's quantity times its
    // trade price, in bigint, so that no product overflows in SQL either.
    const rows = await this.db
      .selectFrom('orders')
      .select((eb) => {
        const live = eb
          .case()
          .when('status', 'in', [...LIVE_STATUSES])
          .then(eb.lit(1))
          .else(eb.lit(0))
          .end();
        return [
          'exchange',
          'scrip_token',
          'offer_category',
          'price_paise',
          'traded_price_paise',
          live.as('live'),
          ...exactSum('quantity - traded_quantity', 'open_quantity'),
          ...exactSum('traded_quantity', 'allotted_quantity'),
          eb.fn.countAll<number | string>().as('bids'),
        ];
      })
      .where('offer_id', '=', offerId)
      .where('status', 'in', [...LIVE_STATUSES, OrderStatus.EXECUTED])
      .groupBy(['exchange', 'scrip_token', 'offer_category', 'price_paise', 'traded_price_paise', sql.ref('live')])
      .execute();
    return rows.map((row) => {
      const allottedQuantity = exactSumOf(row, 'allotted_quantity');
      return {
        exchange: row.exchange,
        scripToken: Number(row.scrip_token),
        category: row.offer_category as OfferCategory,
        live: Number(row.live) === 1,
        pricePaise: Number(row.price_paise),
        openQuantity: exactSumOf(row, 'open_quantity'),
        allottedQuantity,
        allottedValuePaise: allottedQuantity * BigInt(row.traded_price_paise ?? 0),
        bids: Number(row.bids),
      };
    });
  }
}
