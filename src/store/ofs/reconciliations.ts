/**
 * Reconciliation's reports and the operator's requests for one (migration 0029; docs/reconciliation.md).
 * A request is a row QUEUED; the node holding the exchange session claims it under a short lease, runs it
 * and writes its report in the same row (DONE, or FAILED with the reason). A close's run is written whole
 * at once, once per close and listing (`close_key` is unique): two nodes that both ran it keep the first.
 * Also the reads a run needs: our orders of a listing (with whether work for the OMS still waits on them),
 * and the closes due for a run.
 */
import { sql, type Kysely, type Selectable } from 'kysely';
import {
  bookAgeNote,
  DIFFERENCE_KINDS,
  type Difference,
  type DifferenceKind,
  type OurBid,
  type Reconciliation,
} from '../../domain/ofs/reconciliation.js';
import type { Database, OfsReconciliationsTable } from '../schema/tables.js';

export type ReconciliationTrigger = 'close-T' | 'close-T1' | 'operator';
export type ReconciliationState = 'QUEUED' | 'DONE' | 'FAILED';

/** One listing of an offer, as a run reads it. */
export interface ReconciliationListing {
  offerId: string;
  exchange: string;
  symbol: string;
}

/** A request or a report. */
export interface ReconciliationReport extends ReconciliationListing {
  id: number;
  trigger: ReconciliationTrigger;
  requestedBy: string | null;
  requestedAt: number;
  state: ReconciliationState;
  /** When it ran; null while queued. */
  runAt: number | null;
  /** When the exchange wrote the book it compared (a download's time, or when it was read); null: not run. */
  bookAsOf: number | null;
  /** The run's figures (DONE); null otherwise. */
  result: Omit<Reconciliation, 'differences'> | null;
  differences: Difference[];
  /** Why it failed (FAILED); null otherwise. */
  error: string | null;
  /**
   * What the report says of its book (DONE): its age when it was written at least STALE_BOOK_MS before the
   * run (orders changed since were left out, counted in flight); null otherwise.
   */
  note: string | null;
}

/** A close due for a run: a listing whose day closed, with no report of that close yet. */
export interface DueClose extends ReconciliationListing {
  trigger: 'close-T' | 'close-T1';
  closedAt: number;
}

type Row = Selectable<OfsReconciliationsTable>;

const num = (value: number | string | null): number | null => (value === null ? null : Number(value));

function reportOf(row: Row): ReconciliationReport {
  const counts = row.counts_json === null ? null : (JSON.parse(row.counts_json) as Record<DifferenceKind, number>);
  return {
    id: Number(row.id),
    offerId: row.offer_id,
    exchange: row.exchange,
    symbol: row.symbol,
    trigger: row.trigger as ReconciliationTrigger,
    requestedBy: row.requested_by,
    requestedAt: Number(row.requested_at),
    state: row.state as ReconciliationState,
    runAt: num(row.run_at),
    bookAsOf: num(row.book_as_of),
    result:
      row.state !== 'DONE' || counts === null
        ? null
        : {
            ours: Number(row.ours_count),
            book: Number(row.book_count),
            matched: Number(row.matched_count),
            inFlight: Number(row.in_flight_count),
            counts: Object.fromEntries(DIFFERENCE_KINDS.map((kind) => [kind, counts[kind] ?? 0])) as Record<
              DifferenceKind,
              number
            >,
          },
    differences: row.differences_json === null ? [] : (JSON.parse(row.differences_json) as Difference[]),
    error: row.error,
    note:
      row.state === 'DONE' && row.book_as_of !== null && row.run_at !== null
        ? bookAgeNote(Number(row.book_as_of), Number(row.run_at))
        : null,
  };
}

/** The columns of a run's result. */
function resultColumns(result: Reconciliation, bookAsOf: number, runAt: number) {
  return {
    state: 'DONE',
    run_at: runAt,
    book_as_of: bookAsOf,
    ours_count: result.ours,
    book_count: result.book,
    matched_count: result.matched,
    in_flight_count: result.inFlight,
    differences_count: result.differences.length,
    counts_json: JSON.stringify(result.counts),
    differences_json: JSON.stringify(result.differences),
    error: null,
  } as const;
}

export const closeKeyOf = (listing: ReconciliationListing, trigger: 'close-T' | 'close-T1') =>
  `${listing.offerId}|${listing.exchange}|${trigger}`;

export class ReconciliationRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The listings of an offer (its symbol on each exchange); empty: no such offer. */
  async listings(offerId: string): Promise<ReconciliationListing[]> {
    const rows = await this.db
      .selectFrom('ofs_offer_listings as l')
      .innerJoin('ofs_offers as o', 'o.offer_id', 'l.offer_id')
      .select(['l.offer_id', 'l.exchange', 'o.symbol'])
      .where('l.offer_id', '=', offerId)
      .orderBy('l.exchange')
      .execute();
    // One run per exchange: an offer lists one symbol on each.
    const seen = new Set<string>();
    return rows.flatMap((row) =>
      seen.has(row.exchange)
        ? []
        : (seen.add(row.exchange), [{ offerId: row.offer_id, exchange: row.exchange, symbol: row.symbol }]),
    );
  }

  /** Queues the operator's request for each listing; answers the requests. */
  async request(
    listings: readonly ReconciliationListing[],
    requestedBy: string | null,
    now: number,
  ): Promise<ReconciliationReport[]> {
    if (listings.length === 0) return [];
    const rows = await this.db
      .insertInto('ofs_reconciliations')
      .values(
        listings.map((listing) => ({
          offer_id: listing.offerId,
          exchange: listing.exchange,
          symbol: listing.symbol,
          trigger: 'operator',
          close_key: null,
          requested_by: requestedBy,
          requested_at: now,
          state: 'QUEUED',
        })),
      )
      .returningAll()
      .execute();
    return rows.map(reportOf).sort((a, b) => a.id - b.id);
  }

  /**
   * Claims the queued requests whose lease is free (never claimed, or its holder's ran out: a node that
   * died mid-run), for `holder` until `until`.
   */
  async claimQueued(holder: string, now: number, until: number, limit = 20): Promise<ReconciliationReport[]> {
    const candidates = await this.db
      .selectFrom('ofs_reconciliations')
      .select('id')
      .where('state', '=', 'QUEUED')
      .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
      .orderBy('id')
      .limit(limit)
      .execute();
    const claimed: ReconciliationReport[] = [];
    for (const { id } of candidates) {
      const row = await this.db
        .updateTable('ofs_reconciliations')
        .set({ claimed_by: holder, claimed_until: until })
        .where('id', '=', Number(id))
        .where('state', '=', 'QUEUED')
        .where((eb) => eb.or([eb('claimed_until', 'is', null), eb('claimed_until', '<', now)]))
        .returningAll()
        .executeTakeFirst();
      if (row !== undefined) claimed.push(reportOf(row));
    }
    return claimed;
  }

  /** A claimed request's report. */
  async complete(id: number, result: Reconciliation, bookAsOf: number, runAt: number): Promise<void> {
    await this.db
      .updateTable('ofs_reconciliations')
      .set(resultColumns(result, bookAsOf, runAt))
      .where('id', '=', id)
      .where('state', '=', 'QUEUED')
      .execute();
  }

  /** A claimed request that could not run, and why. */
  async fail(id: number, error: string, runAt: number): Promise<void> {
    await this.db
      .updateTable('ofs_reconciliations')
      .set({ state: 'FAILED', run_at: runAt, error })
      .where('id', '=', id)
      .where('state', '=', 'QUEUED')
      .execute();
  }

  /** A close's run, written once per close and listing; answers false when another was written first. */
  async recordClose(
    listing: ReconciliationListing,
    trigger: 'close-T' | 'close-T1',
    result: Reconciliation,
    bookAsOf: number,
    runAt: number,
  ): Promise<boolean> {
    const inserted = await this.db
      .insertInto('ofs_reconciliations')
      .values({
        offer_id: listing.offerId,
        exchange: listing.exchange,
        symbol: listing.symbol,
        trigger,
        close_key: closeKeyOf(listing, trigger),
        requested_by: null,
        requested_at: runAt,
        ...resultColumns(result, bookAsOf, runAt),
      })
      .onConflict((conflict) => conflict.column('close_key').doNothing())
      .executeTakeFirst();
    return Number(inserted.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /**
   * The closes due for a run at `now`: each listing of an offer whose T (or T+1) closed at least `afterMs`
   * ago and at most `lookbackMs` ago, with no report of that close yet.
   */
  async dueCloses(now: number, afterMs: number, lookbackMs: number): Promise<DueClose[]> {
    const rows = await this.db
      .selectFrom('ofs_offer_listings as l')
      .innerJoin('ofs_offers as o', 'o.offer_id', 'l.offer_id')
      .select(['l.offer_id', 'l.exchange', 'o.symbol', 'o.t_closes_at', 'o.t1_closes_at'])
      .where((eb) =>
        eb.or([
          eb.between('o.t_closes_at', now - lookbackMs, now - afterMs),
          eb.between('o.t1_closes_at', now - lookbackMs, now - afterMs),
        ]),
      )
      .orderBy('o.t_closes_at')
      .orderBy('l.offer_id')
      .orderBy('l.exchange')
      .execute();
    const due: DueClose[] = [];
    const seen = new Set<string>();
    for (const row of rows) {
      const listing = { offerId: row.offer_id, exchange: row.exchange, symbol: row.symbol };
      for (const [trigger, closedAt] of [
        ['close-T', Number(row.t_closes_at)],
        ['close-T1', Number(row.t1_closes_at)],
      ] as const) {
        const key = closeKeyOf(listing, trigger);
        if (seen.has(key) || closedAt > now - afterMs || closedAt < now - lookbackMs) continue;
        seen.add(key);
        due.push({ ...listing, trigger, closedAt });
      }
    }
    if (due.length === 0) return [];
    const done = new Set(
      (
        await this.db
          .selectFrom('ofs_reconciliations')
          .select('close_key')
          .where(
            'close_key',
            'in',
            due.map((close) => closeKeyOf(close, close.trigger)),
          )
          .execute()
      ).map((row) => row.close_key),
    );
    return due.filter((close) => !done.has(closeKeyOf(close, close.trigger)));
  }

  /** Our orders of one listing of an offer, as reconciliation reads them. */
  async ourBids(offerId: string, exchange: string): Promise<OurBid[]> {
    const rows = await this.db
      .selectFrom('orders as o')
      .select([
        'o.order_id',
        'o.status',
        'o.order_type',
        'o.price_paise',
        'o.quantity',
        'o.exchange_order_id',
        'o.carried_forward_at',
        'o.updated_at',
      ])
      .select((eb) =>
        eb
          .exists(
            eb
              .selectFrom('outbox as x')
              .select(sql`1`.as('one'))
              .whereRef('x.order_id', '=', 'o.order_id')
              .where('x.done_at', 'is', null),
          )
          .as('in_flight'),
      )
      .where('o.offer_id', '=', offerId)
      .where('o.exchange', '=', exchange)
      .orderBy('o.order_id')
      .execute();
    return rows.map((row) => ({
      orderId: row.order_id,
      status: row.status,
      orderType: row.order_type,
      pricePaise: Number(row.price_paise),
      quantity: Number(row.quantity),
      exchangeOrderId: row.exchange_order_id,
      carriedForward: row.carried_forward_at !== null,
      inFlight: row.in_flight === true || Number(row.in_flight) === 1,
      updatedAt: Number(row.updated_at),
    }));
  }

  async find(id: number): Promise<ReconciliationReport | undefined> {
    const row = await this.db.selectFrom('ofs_reconciliations').selectAll().where('id', '=', id).executeTakeFirst();
    return row === undefined ? undefined : reportOf(row);
  }

  /** An offer's reports and requests, newest first (one exchange's, when named), at most `limit`. */
  async list(offerId: string, options: { exchange?: string; limit?: number } = {}): Promise<ReconciliationReport[]> {
    let query = this.db.selectFrom('ofs_reconciliations').selectAll().where('offer_id', '=', offerId);
    if (options.exchange !== undefined) query = query.where('exchange', '=', options.exchange);
    const rows = await query
      .orderBy('id', 'desc')
      .limit(options.limit ?? 50)
      .execute();
    return rows.map(reportOf);
  }

  /**
   * The differences per exchange and kind in the latest report (DONE) of each listing whose report ran at
   * or after `since`: what the metric shows.
   */
  async latestCounts(since: number): Promise<{ exchange: string; kind: DifferenceKind; count: number }[]> {
    const rows = await this.db
      .selectFrom('ofs_reconciliations as r')
      .select(['r.exchange', 'r.counts_json'])
      .where('r.state', '=', 'DONE')
      .where('r.run_at', '>=', since)
      .where((eb) =>
        eb(
          'r.id',
          '=',
          eb
            .selectFrom('ofs_reconciliations as s')
            .select((s) => s.fn.max('s.id').as('latest'))
            .whereRef('s.offer_id', '=', 'r.offer_id')
            .whereRef('s.exchange', '=', 'r.exchange')
            .where('s.state', '=', 'DONE'),
        ),
      )
      .execute();
    const sums = new Map<string, Map<DifferenceKind, number>>();
    for (const row of rows) {
      const counts = JSON.parse(row.counts_json ?? '{}') as Partial<Record<DifferenceKind, number>>;
      let byKind = sums.get(row.exchange);
      if (byKind === undefined) sums.set(row.exchange, (byKind = new Map(DIFFERENCE_KINDS.map((kind) => [kind, 0]))));
      for (const kind of DIFFERENCE_KINDS) byKind.set(kind, byKind.get(kind)! + (counts[kind] ?? 0));
    }
    return [...sums].flatMap(([exchange, byKind]) => [...byKind].map(([kind, count]) => ({ exchange, kind, count })));
  }
}
