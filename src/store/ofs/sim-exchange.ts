/**
 * The simulated OFS exchange's own book (sim_exchange_bids) and the events it owes the OMS
 * (sim_exchange_events). src/oms/simulated-exchange.ts uses it, and the exchange simulator's wire
 * (src/exchange-sim/) reads it: the registry's listings by symbol, the book with its symbols, the events of
 * one exchange after a sequence number (SimEventHorizon says how far they are complete).
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import { indicativeColumns } from './offers.js';
import { sharesFromColumn, storableShares } from '../sql/exact-sum.js';
import type { IndicativePrice } from '../../domain/ofs/offer/offer.js';
import { BulkInsert, BulkUpdate, intColumn, queryWithList, selectWithList, textColumn } from '../sql/bulk.js';
import type { DialectName } from '../sql/database.js';
import { prepareQuery } from '../sql/prepared.js';
import { BID_INSTRUMENT_SQL } from './instrument-faults.js';
import type { Database, SimExchangeBidsTable, SimExchangeEventsTable } from '../schema/tables.js';
import { executorOf, openTx, type StoreTx } from '../sql/write-tx.js';

type SimBidRow = Selectable<SimExchangeBidsTable>;
type SimEventRow = Selectable<SimExchangeEventsTable>;

export interface NewSimBid {
  orderId: string;
  exchangeOrderId: string;
  exchange: string;
  scripToken: number;
  category: string;
  orderType: string;
  pricePaise: number;
  quantity: number;
  /** A bid in an offer: its offer, bidder and margin type (null on an issue's bids); `category` is then the offer category. */
  offerId: string | null;
  userId: string | null;
  marginType: string | null;
}

export interface SimBidTerms {
  orderType: string;
  pricePaise: number;
  quantity: number;
}

export interface NewSimEvent {
  orderId: string;
  /** ALLOTTED and NOT_ALLOTTED finish the bid; PART_ALLOTTED and NOTE (an offer's T allocation) leave it live. */
  kind: 'ALLOTTED' | 'NOT_ALLOTTED' | 'PART_ALLOTTED' | 'NOTE';
  quantity: number;
  pricePaise: number | null;
  reason: string;
  /** An offer's allotment: the day it belongs to (its settlement day follows); null otherwise. */
  day: 'T' | 'T+1' | null;
}

/** A bid in the exchange's book. */
export interface SimBid extends NewSimBid {
  /** LIVE, CANCELLED, ALLOTTED or NOT_ALLOTTED. */
  status: string;
  /** How many times a placement of this order reached the exchange (1 unless the OMS resent it). */
  transmissions: number;
  receivedAt: number;
  updatedAt: number;
  /** Shares allotted on T (an offer's non-retail bid). */
  tAllotted: number;
  carriedForward: boolean;
}

/** An allocation event the exchange owes the OMS. */
export interface SimEvent extends NewSimEvent {
  id: number;
  deliveredAt: number | null;
}

function bidFromRow(row: SimBidRow): SimBid {
  return {
    orderId: row.order_id,
    exchangeOrderId: row.exchange_order_id,
    exchange: row.exchange,
    scripToken: Number(row.scrip_token),
    category: row.category,
    orderType: row.order_type,
    pricePaise: Number(row.price_paise),
    quantity: Number(row.quantity),
    status: row.status,
    transmissions: Number(row.transmissions),
    receivedAt: Number(row.received_at),
    updatedAt: Number(row.updated_at),
    offerId: row.offer_id,
    userId: row.user_id,
    marginType: row.margin_type,
    tAllotted: Number(row.t_allotted),
    carriedForward: Number(row.carried_forward) === 1,
  };
}

function eventFromRow(row: SimEventRow): SimEvent {
  return {
    id: Number(row.id),
    orderId: row.order_id,
    kind: row.kind as SimEvent['kind'],
    quantity: Number(row.quantity),
    pricePaise: row.price_paise === null ? null : Number(row.price_paise),
    reason: row.reason,
    day: row.day === 'T' || row.day === 'T+1' ? row.day : null,
    deliveredAt: row.delivered_at === null ? null : Number(row.delivered_at),
  };
}

/** What an offer's allocation makes of a bid: its status at the exchange (LIVE: carried on) and its T allotment. */
export interface OfferBidOutcome {
  orderId: string;
  status: 'LIVE' | 'ALLOTTED' | 'NOT_ALLOTTED';
  tAllotted: number;
}

/** An issue whose two windows have closed and that has not been allocated. */
export interface DueIssue {
  exchange: string;
  scripToken: number;
}

/**
 * A listing of the registry as the exchange simulator's wire names it, by exchange and symbol: an issue of
 * the one-listing model, or a listing of an offer.
 */
export interface SimListing {
  exchange: string;
  scripToken: number;
  symbol: string;
  /** The offer of a listing of SEBI's framework; null: an issue of the one-listing model. */
  offerId: string | null;
  /** When its last bidding session closes (an issue's later window, an offer's T+1). */
  closesAt: number;
  /** Allocated in full or cancelled: it takes nothing more. */
  finished: boolean;
}

/** A bid of the book with the symbol of its listing (the wire names securities by symbol). */
export interface SimBookEntry extends SimBid {
  symbol: string | null;
}

/** An event of the book's bids on one exchange, as the message stream sends it. */
export interface SimStreamEvent extends NewSimEvent {
  id: number;
  exchangeOrderId: string;
}

const FIND_BIDS = {
  sqlite: 'select * from sim_exchange_bids where order_id in (select value from json_each(?))',
  postgres: 'select * from sim_exchange_bids where order_id = any($1::text[])',
};

type ReceivedBid = NewSimBid & { now: number };

/**
 * What the exchange asks at every OMS pass (every 50 ms while there is work, every 250 ms at rest): built
 * and compiled once (see prepared.ts), so that a pass costs the statements' own work only.
 */
function pollQueries(db: Kysely<Database>) {
  return {
    issuesDue: prepareQuery((p: { now: number }) =>
      db
        .selectFrom('ofs_issues')
        .select(['exchange', 'scrip_token'])
        .where('allocated_at', 'is', null)
        .where('non_retail_closes_at', '<=', p.now)
        .where('retail_closes_at', '<=', p.now)
        .orderBy('exchange')
        .orderBy('scrip_token'),
    ),
    offersDue: prepareQuery((p: { now: number }) =>
      db
        .selectFrom('ofs_offers')
        .select('offer_id')
        .where((eb) =>
          eb.or([
            eb.and([eb('cancelled_at', 'is', null), eb('t_allocated_at', 'is', null), eb('t_closes_at', '<=', p.now)]),
            eb.and([
              eb('cancelled_at', 'is', null),
              eb('t_allocated_at', 'is not', null),
              eb('t1_allocated_at', 'is', null),
              eb('t1_closes_at', '<=', p.now),
            ]),
            eb.and([
              eb('cancelled_at', 'is not', null),
              eb.exists(
                eb
                  .selectFrom('sim_exchange_bids as b')
                  .select('b.order_id')
                  .whereRef('b.offer_id', '=', 'ofs_offers.offer_id')
                  .where('b.status', '=', 'LIVE'),
              ),
            ]),
          ]),
        )
        .orderBy('offer_id'),
    ),
    offersBiddingOnT: prepareQuery((p: { now: number }) =>
      db
        .selectFrom('ofs_offers')
        .select('offer_id')
        .where('t_opens_at', '<=', p.now)
        .where('t_allocated_at', 'is', null)
        .where('cancelled_at', 'is', null)
        .orderBy('offer_id'),
    ),
    // The events of an instrument whose events the OMS set aside wait with it, so that they never fill a poll.
    undeliveredEvents: prepareQuery((p: { limit: number }) =>
      db
        .selectFrom('sim_exchange_events as e')
        .selectAll('e')
        .where('e.delivered_at', 'is', null)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('sim_exchange_bids as b')
                .innerJoin('oms_instrument_faults as f', (join) => join.on('f.instrument', '=', BID_INSTRUMENT_SQL))
                .select('b.order_id')
                .whereRef('b.order_id', '=', 'e.order_id')
                .where('f.step', '=', 'events')
                .where('f.set_aside_at', 'is not', null),
            ),
          ),
        )
        .orderBy('e.id')
        .limit(p.limit),
    ),
  };
}

export class SimExchangeRepository {
  private readonly insertBids = new BulkInsert<ReceivedBid>(
    'sim_exchange_bids',
    [
      textColumn('order_id', (b) => b.orderId),
      textColumn('exchange_order_id', (b) => b.exchangeOrderId),
      textColumn('exchange', (b) => b.exchange),
      intColumn('scrip_token', (b) => b.scripToken),
      textColumn('category', (b) => b.category),
      textColumn('order_type', (b) => b.orderType),
      intColumn('price_paise', (b) => b.pricePaise),
      intColumn('quantity', (b) => b.quantity),
      textColumn('status', () => 'LIVE'),
      intColumn('transmissions', () => 1),
      intColumn('received_at', (b) => b.now),
      intColumn('updated_at', (b) => b.now),
      textColumn('offer_id', (b) => b.offerId),
      textColumn('user_id', (b) => b.userId),
      textColumn('margin_type', (b) => b.marginType),
    ],
    'on conflict (order_id) do update set transmissions = sim_exchange_bids.transmissions + 1',
  );
  private readonly settleBids = new BulkUpdate<{ orderId: string; status: string; now: number }>(
    'sim_exchange_bids',
    textColumn('order_id', (b) => b.orderId),
    [textColumn('status', (b) => b.status), intColumn('updated_at', (b) => b.now)],
  );
  private readonly settleOfferBids = new BulkUpdate<OfferBidOutcome & { now: number }>(
    'sim_exchange_bids',
    textColumn('order_id', (b) => b.orderId),
    [
      textColumn('status', (b) => b.status),
      intColumn('t_allotted', (b) => b.tAllotted),
      intColumn('updated_at', (b) => b.now),
    ],
  );
  private readonly insertEvents = new BulkInsert<NewSimEvent & { now: number }>('sim_exchange_events', [
    textColumn('order_id', (e) => e.orderId),
    textColumn('kind', (e) => e.kind),
    intColumn('quantity', (e) => e.quantity),
    intColumn('price_paise', (e) => e.pricePaise),
    textColumn('reason', (e) => e.reason),
    intColumn('created_at', (e) => e.now),
    textColumn('day', (e) => e.day),
  ]);

  private readonly polls: ReturnType<typeof pollQueries>;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {
    this.polls = pollQueries(db);
  }

  /** Pass `db` to read inside a transaction. */
  async findBid(orderId: string, storeTx?: StoreTx): Promise<SimBid | undefined> {
    const db = executorOf(this.db, storeTx);
    const row = await db.selectFrom('sim_exchange_bids').selectAll().where('order_id', '=', orderId).executeTakeFirst();
    return row && bidFromRow(row);
  }

  /**
   * Records received placements: new bids, or one more transmission of a bid already in the book (which
   * keeps its exchange order id and terms).
   */
  async receiveBids(storeTx: StoreTx, bids: readonly NewSimBid[], now: number): Promise<void> {
    const tx = openTx(storeTx);
    await this.insertBids.run(
      tx,
      bids.map((bid) => ({ ...bid, now })),
    );
  }

  /** The bids of these orders; `tx` to read them in a transaction. */
  async findBids(orderIds: readonly string[], storeTx?: StoreTx): Promise<SimBid[]> {
    const tx = storeTx && openTx(storeTx);
    if (orderIds.length === 0) return [];
    const rows = await (tx
      ? queryWithList<SimBidRow>(tx, FIND_BIDS, orderIds)
      : selectWithList<SimBidRow>(this.db, this.dialect, FIND_BIDS, orderIds));
    return rows.map(bidFromRow);
  }

  /** Changes the terms of a bid that is still live; answers false when it is not. */
  async changeLiveBid(storeTx: StoreTx, orderId: string, terms: SimBidTerms, now: number): Promise<boolean> {
    const trx = openTx(storeTx).trx;
    const result = await trx
      .updateTable('sim_exchange_bids')
      .set({ order_type: terms.orderType, price_paise: terms.pricePaise, quantity: terms.quantity, updated_at: now })
      .where('order_id', '=', orderId)
      .where('status', '=', 'LIVE')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Moves a bid from `from` to `to`; answers false when it was not in `from`. */
  async setStatus(storeTx: StoreTx, orderId: string, from: string, to: string, now: number): Promise<boolean> {
    const trx = openTx(storeTx).trx;
    const result = await trx
      .updateTable('sim_exchange_bids')
      .set({ status: to, updated_at: now })
      .where('order_id', '=', orderId)
      .where('status', '=', from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async issuesDueForAllocation(now: number): Promise<DueIssue[]> {
    const rows = await this.polls.issuesDue.execute(this.db, { now });
    return rows.map((row) => ({ exchange: row.exchange, scripToken: Number(row.scrip_token) }));
  }

  /**
   * Marks an issue as allocated, only if nobody has and its windows have both closed: a conditional
   * UPDATE, so that of several concurrent callers exactly one gets true and runs the allocation.
   */
  async claimAllocation(storeTx: StoreTx, issue: DueIssue, now: number): Promise<boolean> {
    const trx = openTx(storeTx).trx;
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

  /**
   * The live bids of the issue, locked until the transaction ends (PostgreSQL: a cancellation that comes
   * meanwhile waits, then finds the bid settled).
   */
  async liveBids(storeTx: StoreTx, issue: DueIssue): Promise<SimBid[]> {
    const trx = openTx(storeTx).trx;
    const query = trx
      .selectFrom('sim_exchange_bids')
      .selectAll()
      .where('exchange', '=', issue.exchange)
      .where('scrip_token', '=', issue.scripToken)
      .where('status', '=', 'LIVE')
      .orderBy('received_at')
      .orderBy('order_id');
    // SQLite's one writer holds the whole database; PostgreSQL locks the rows.
    return (await (this.dialect === 'postgres' ? query.forUpdate() : query).execute()).map(bidFromRow);
  }

  /** Settles the bids of an allocation (read live and locked in the same transaction) and records their events. */
  async settleAll(storeTx: StoreTx, events: readonly NewSimEvent[], now: number): Promise<void> {
    const tx = openTx(storeTx);
    await this.settleBids.run(
      tx,
      events.map((event) => ({ orderId: event.orderId, status: event.kind, now })),
    );
    await this.insertEvents.run(
      tx,
      events.map((event) => ({ ...event, now })),
    );
  }

  /**
   * The offers with work due at `now`: a T allocation (T closed, not yet run), a T+1 allocation (T+1
   * closed), or a cancelled offer with live bids still to cancel.
   */
  async offersDue(now: number): Promise<string[]> {
    const rows = await this.polls.offersDue.execute(this.db, { now });
    return rows.map((row) => row.offer_id);
  }

  /** The offers whose T session has opened and whose T allocation has not run: the exchange publishes their indicative price. */
  async offersBiddingOnT(now: number): Promise<string[]> {
    const rows = await this.polls.offersBiddingOnT.execute(this.db, { now });
    return rows.map((row) => row.offer_id);
  }

  /** The live bids of the offer as the indicative price reads them (no lock: a published figure). */
  async offerBook(
    offerId: string,
  ): Promise<{ category: string; marginType: string | null; pricePaise: number; quantity: number }[]> {
    const rows = await this.db
      .selectFrom('sim_exchange_bids')
      .select(['category', 'margin_type', 'price_paise', 'quantity'])
      .where('offer_id', '=', offerId)
      .where('status', '=', 'LIVE')
      .execute();
    return rows.map((row) => ({
      category: row.category,
      marginType: row.margin_type,
      pricePaise: Number(row.price_paise),
      quantity: Number(row.quantity),
    }));
  }

  /** Publishes the offer's indicative figures at `now`, unless they are what was published last. */
  async publishIndicative(offerId: string, figures: IndicativePrice, now: number): Promise<boolean> {
    const last = await this.db
      .selectFrom('ofs_offer_indicative')
      .select(indicativeColumns())
      .where('offer_id', '=', offerId)
      .orderBy('at', 'desc')
      .limit(1)
      .executeTakeFirst();
    // Quantities as the digits of their bigints: exact past 2^53 (issue 47 row 3), up to the largest the
    // column holds on both dialects (2^63 - 1 shares, shown as that beyond it).
    const row = {
      offer_id: offerId,
      at: now,
      price_paise: figures.all.pricePaise,
      quantity: storableShares(figures.all.quantity),
      price_h_paise: figures.margin100.pricePaise,
      quantity_h: storableShares(figures.margin100.quantity),
      price_t_paise: figures.margin0.pricePaise,
      quantity_t: storableShares(figures.margin0.quantity),
    };
    const same = (a: number | null, b: number | null) => (a === null ? b === null : b !== null && Number(b) === a);
    const sameShares = (a: string, b: number | string) => BigInt(a) === sharesFromColumn(b);
    if (
      last !== undefined &&
      (Number(last.at) >= now ||
        (same(row.price_paise, last.price_paise) &&
          sameShares(row.quantity, last.quantity) &&
          same(row.price_h_paise, last.price_h_paise) &&
          sameShares(row.quantity_h, last.quantity_h) &&
          same(row.price_t_paise, last.price_t_paise) &&
          sameShares(row.quantity_t, last.quantity_t)))
    ) {
      return false;
    }
    // Two exchanges' pollers publishing at the same instant: the first one's row stands.
    await this.db
      .insertInto('ofs_offer_indicative')
      .values(row)
      .onConflict((oc) => oc.columns(['offer_id', 'at']).doNothing())
      .execute();
    return true;
  }

  /** The live bids of the offer, on every listing, locked until the transaction ends (see liveBids). */
  async liveOfferBids(storeTx: StoreTx, offerId: string): Promise<SimBid[]> {
    const trx = openTx(storeTx).trx;
    const query = trx
      .selectFrom('sim_exchange_bids')
      .selectAll()
      .where('offer_id', '=', offerId)
      .where('status', '=', 'LIVE')
      .orderBy('received_at')
      .orderBy('order_id');
    return (await (this.dialect === 'postgres' ? query.forUpdate() : query).execute()).map(bidFromRow);
  }

  /** Shares allotted on T per bidder in the offer (the single-bidder cap counts them on T+1). */
  async tAllottedByBidder(storeTx: StoreTx, offerId: string): Promise<Map<string, number>> {
    const trx = openTx(storeTx).trx;
    const rows = await trx
      .selectFrom('sim_exchange_bids')
      .select(['user_id', (eb) => eb.fn.sum<number>('t_allotted').as('allotted')])
      .where('offer_id', '=', offerId)
      .where('t_allotted', '>', 0)
      .groupBy('user_id')
      .execute();
    return new Map(rows.map((row) => [row.user_id ?? '', Number(row.allotted)]));
  }

  /**
   * Claims the offer's T allocation and records what it found (the cut-off, the shares left): a
   * conditional UPDATE, so that of several concurrent callers exactly one runs it, and only on the
   * green-shoe decision the allocation was computed on (a decision recorded meanwhile changes the
   * portions: the claim fails, and the next pass allots on the new one).
   */
  async claimTAllocation(
    storeTx: StoreTx,
    offerId: string,
    found: { cutoffPricePaise: number; unallotted: number },
    decision: { greenShoeExercised: number; greenShoeDecidedAt: number | null },
    now: number,
  ): Promise<boolean> {
    const result = await openTx(storeTx)
      .trx.updateTable('ofs_offers')
      .set({
        t_allocated_at: now,
        t_cutoff_price_paise: found.cutoffPricePaise,
        t_unallotted: found.unallotted,
        updated_at: now,
      })
      .where('offer_id', '=', offerId)
      .where('t_allocated_at', 'is', null)
      .where('cancelled_at', 'is', null)
      .where('t_closes_at', '<=', now)
      .where('green_shoe_exercised', '=', decision.greenShoeExercised)
      .where('green_shoe_decided_at', decision.greenShoeDecidedAt === null ? 'is' : '=', decision.greenShoeDecidedAt)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Claims the offer's T+1 allocation and records the retail cut-off it found (see claimTAllocation). */
  async claimT1Allocation(
    storeTx: StoreTx,
    offerId: string,
    retailCutoffPricePaise: number,
    now: number,
  ): Promise<boolean> {
    const result = await openTx(storeTx)
      .trx.updateTable('ofs_offers')
      .set({ t1_allocated_at: now, t1_retail_cutoff_price_paise: retailCutoffPricePaise, updated_at: now })
      .where('offer_id', '=', offerId)
      .where('t_allocated_at', 'is not', null)
      .where('t1_allocated_at', 'is', null)
      .where('cancelled_at', 'is', null)
      .where('t1_closes_at', '<=', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The outcomes of an offer's allocation (bids read live and locked in the same transaction) and their events. */
  async settleOffer(
    storeTx: StoreTx,
    outcomes: readonly OfferBidOutcome[],
    events: readonly NewSimEvent[],
    now: number,
  ): Promise<void> {
    const tx = openTx(storeTx);
    await this.settleOfferBids.run(
      tx,
      outcomes.map((outcome) => ({ ...outcome, now })),
    );
    await this.insertEvents.run(
      tx,
      events.map((event) => ({ ...event, now })),
    );
  }

  /** Marks a live bid carried forward, with the terms it is carried forward at; answers false when it is not live. */
  async carryForward(storeTx: StoreTx, orderId: string, terms: SimBidTerms, now: number): Promise<boolean> {
    const result = await openTx(storeTx)
      .trx.updateTable('sim_exchange_bids')
      .set({
        carried_forward: 1,
        order_type: terms.orderType,
        price_paise: terms.pricePaise,
        quantity: terms.quantity,
        updated_at: now,
      })
      .where('order_id', '=', orderId)
      .where('status', '=', 'LIVE')
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * The listings of `exchange` named `symbol` (every one: an issue of that symbol may be registered again
   * for a later sale, and an offer's listing carries the offer's symbol), or of every symbol when it is null.
   */
  async listings(exchange: string, symbol: string | null): Promise<SimListing[]> {
    let issues = this.db
      .selectFrom('ofs_issues')
      .select(['exchange', 'scrip_token', 'symbol', 'non_retail_closes_at', 'retail_closes_at', 'allocated_at'])
      .where('exchange', '=', exchange);
    let offers = this.db
      .selectFrom('ofs_offer_listings as l')
      .innerJoin('ofs_offers as o', 'o.offer_id', 'l.offer_id')
      .select([
        'l.exchange',
        'l.scrip_token',
        'o.symbol',
        'o.offer_id',
        'o.t1_closes_at',
        'o.t1_allocated_at',
        'o.cancelled_at',
      ])
      .where('l.exchange', '=', exchange);
    if (symbol !== null) {
      issues = issues.where('symbol', '=', symbol);
      offers = offers.where('o.symbol', '=', symbol);
    }
    const [issueRows, offerRows] = await Promise.all([issues.execute(), offers.execute()]);
    return [
      ...issueRows.map((row) => ({
        exchange: row.exchange,
        scripToken: Number(row.scrip_token),
        symbol: row.symbol,
        offerId: null,
        closesAt: Math.max(Number(row.non_retail_closes_at), Number(row.retail_closes_at)),
        finished: row.allocated_at !== null,
      })),
      ...offerRows.map((row) => ({
        exchange: row.exchange,
        scripToken: Number(row.scrip_token),
        symbol: row.symbol,
        offerId: row.offer_id,
        closesAt: Number(row.t1_closes_at),
        finished: row.t1_allocated_at !== null || row.cancelled_at !== null,
      })),
    ];
  }

  /** The bids of these orders with their listings' symbols (null: the listing is no longer registered). */
  async findBookEntries(orderIds: readonly string[]): Promise<SimBookEntry[]> {
    if (orderIds.length === 0) return [];
    return bookEntriesOf(await this.bookEntryQuery().where('b.order_id', 'in', orderIds).execute());
  }

  /** The book's bids joined to their listing's symbol (an issue's or an offer's). */
  private bookEntryQuery() {
    return this.db
      .selectFrom('sim_exchange_bids as b')
      .leftJoin('ofs_issues as i', (join) =>
        join.onRef('i.exchange', '=', 'b.exchange').onRef('i.scrip_token', '=', 'b.scrip_token'),
      )
      .leftJoin('ofs_offers as o', 'o.offer_id', 'b.offer_id')
      .selectAll('b')
      .select(['i.symbol as issue_symbol', 'o.symbol as offer_symbol']);
  }

  /**
   * Every bid of `exchange` in the listings named `symbol` (an issue's, an offer's), whoever placed it: the
   * book a member's reconciliation reads. In the order the exchange received them.
   */
  async bookOfSymbol(exchange: string, symbol: string): Promise<SimBookEntry[]> {
    const rows = await this.bookEntryQuery()
      .where('b.exchange', '=', exchange)
      .where((eb) =>
        eb.or([
          eb.and([eb('b.offer_id', 'is', null), eb('i.symbol', '=', symbol)]),
          eb.and([eb('b.offer_id', 'is not', null), eb('o.symbol', '=', symbol)]),
        ]),
      )
      .orderBy('b.received_at')
      .orderBy('b.order_id')
      .execute();
    return bookEntriesOf(rows);
  }

  /**
   * The events of the bids of `exchange` with `afterId` < id <= `upToId`, oldest first, at most `limit`,
   * delivered or not (the stream of the exchange simulator replays them; it marks none delivered).
   */
  async eventsAfter(exchange: string, afterId: number, upToId: number, limit: number): Promise<SimStreamEvent[]> {
    const rows = await this.db
      .selectFrom('sim_exchange_events as e')
      .innerJoin('sim_exchange_bids as b', 'b.order_id', 'e.order_id')
      .selectAll('e')
      .select('b.exchange_order_id')
      .where('b.exchange', '=', exchange)
      .where('e.id', '>', afterId)
      .where('e.id', '<=', upToId)
      .orderBy('e.id')
      .limit(limit)
      .execute();
    return rows.map((row) => {
      const { deliveredAt: _delivered, ...event } = eventFromRow(row);
      return { ...event, exchangeOrderId: row.exchange_order_id };
    });
  }

  async undeliveredEvents(limit: number): Promise<SimEvent[]> {
    const rows = await this.polls.undeliveredEvents.execute(this.db, { limit });
    return rows.map(eventFromRow);
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

/** Ids read per step of a horizon. */
const HORIZON_STEP = 1_000;

/**
 * How far the events (sim_exchange_events) are complete: the highest id up to which every event is
 * committed or never will be, so that a reader that takes them in id order up to it never passes an event
 * that commits later with a smaller id. On SQLite, one writer at a time, that is the newest id. On
 * PostgreSQL an id is taken at the insert, not at the commit: two allocations (two instruments, or two
 * exchanges' steps on one database) may commit in either order. There the horizon stops before a missing
 * id until every transaction that may still fill it (each took its transaction id before its event ids:
 * Store.writeTransaction) has ended; what did not commit by then is passed over. The same rule as the
 * order events' horizon (src/store/orders/events.ts), on this table. One per reader: it keeps its position.
 */
export class SimEventHorizon {
  private position: number;
  private gap: { from: number; xmax: bigint } | null = null;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    /** Where it starts: the reader's position (ids up to it are behind the reader already). */
    start = 0,
  ) {
    this.position = start;
  }

  get value(): number {
    return this.position;
  }

  /** Moves the horizon as far as it can go now, and answers it. */
  async advance(): Promise<number> {
    if (this.dialect === 'sqlite') {
      const row = await this.db
        .selectFrom('sim_exchange_events')
        .select((eb) => eb.fn.max('id').as('latest'))
        .executeTakeFirst();
      this.position = Math.max(this.position, row?.latest == null ? 0 : Number(row.latest));
      return this.position;
    }
    // A gap seen for the first time is looked at once more at once, in a new snapshot: most are settled by then.
    let lookedAgain = false;
    for (;;) {
      const result = await sql<{ xmin: string; xmax: string; id: number | null }>`
        select s.xmin, s.xmax, e.id
        from (select pg_snapshot_xmin(pg_current_snapshot())::text as xmin, pg_snapshot_xmax(pg_current_snapshot())::text as xmax) s
        left join lateral (select id from sim_exchange_events where id > ${this.position} order by id limit ${HORIZON_STEP}) e on true
        order by e.id`.execute(this.db);
      const first = result.rows[0]!;
      const xmin = BigInt(first.xmin);
      const xmax = BigInt(first.xmax);
      const ids = result.rows.filter((row) => row.id !== null).map((row) => Number(row.id));
      let next = this.position;
      let newGap = false;
      for (const id of ids) {
        if (id !== next + 1) {
          // Ids next+1 .. id-1 are missing: settled once every transaction that might fill them has ended.
          if (this.gap === null || this.gap.from !== next + 1) {
            this.gap = { from: next + 1, xmax };
            newGap = true;
          }
          if (xmin < this.gap.xmax) break;
          this.gap = null;
        }
        next = id;
      }
      this.position = next;
      if (this.gap !== null && newGap && !lookedAgain) {
        lookedAgain = true;
        continue;
      }
      if (ids.length < HORIZON_STEP || this.gap !== null) return this.position;
    }
  }
}

/** Book rows as entries: the symbol of the listing the bid is in (null: no longer registered). */
function bookEntriesOf(
  rows: readonly (Parameters<typeof bidFromRow>[0] & { issue_symbol: string | null; offer_symbol: string | null })[],
): SimBookEntry[] {
  return rows.map((row) => ({
    ...bidFromRow(row),
    symbol: (row.offer_id === null ? row.issue_symbol : row.offer_symbol) ?? null,
  }));
}
