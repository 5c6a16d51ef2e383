/**
 * The registry of OFS offers under the SEBI framework (migration 0013, docs/design/ofs.md): each offer's
 * terms, its listings, how far its two days have run, and its eligible employees. An import writes offers
 * and issues of the one-listing format in one transaction, so that no instrument is both.
 */
import { sql, type Expression, type ExpressionBuilder, type Kysely, type Selectable, type SqlBool } from 'kysely';
import type { OfsIssue } from '../../domain/ofs/issue/issue.js';
import type {
  Discount,
  Offer,
  OfferListing,
  OfferRegistration,
  PrintedPortions,
} from '../../domain/ofs/offer/offer.js';

/** The offers' registry answers OfferRegistration, a domain type (order entry's rules read it). */
export type { OfferRegistration } from '../../domain/ofs/offer/offer.js';
import { userCategoryOf, type OfferState, type PublishedIndicative } from '../../domain/ofs/offer/offer.js';
import type { OfferBidder } from '../../domain/ofs/offer/rules.js';
import { sharesFromColumn } from '../sql/exact-sum.js';
import { upsertIssues } from './issues.js';
import { inOneSnapshot } from '../sql/snapshot.js';
import { executorOf, type StoreTx } from '../sql/write-tx.js';
import type { Database, OfsOfferIndicativeTable, OfsOfferListingsTable, OfsOffersTable } from '../schema/tables.js';

/** The indicative price the exchange published at one instant of T. */
/** An import the registry refuses: the message says why (an instrument of two kinds, terms fixed by an allocation). */
export class OfferConflictError extends Error {
  override name = 'OfferConflictError';
}

function discountOf(paise: number | null, basisPoints: number | null): Discount {
  if (paise !== null) return { paise: Number(paise) };
  if (basisPoints !== null) return { basisPoints: Number(basisPoints) };
  return null;
}

const nullableNumber = (value: number | null) => (value === null ? null : Number(value));

function printedPortionsOf(row: Selectable<OfsOffersTable>): PrintedPortions | null {
  if (row.printed_green_shoe === null) return null;
  return {
    greenShoe: Number(row.printed_green_shoe),
    retailReserved: Number(row.printed_retail_reserved),
    nonRetail: Number(row.printed_non_retail),
    mfIcReserved: nullableNumber(row.printed_mf_ic_reserved),
    employee: nullableNumber(row.printed_employee),
  };
}

/** The columns of printed portions (all null: none). */
function printedColumns(printed: PrintedPortions | null) {
  return {
    printed_green_shoe: printed?.greenShoe ?? null,
    printed_retail_reserved: printed?.retailReserved ?? null,
    printed_non_retail: printed?.nonRetail ?? null,
    printed_mf_ic_reserved: printed?.mfIcReserved ?? null,
    printed_employee: printed?.employee ?? null,
  };
}

function toRegistration(
  row: Selectable<OfsOffersTable>,
  listings: readonly Selectable<OfsOfferListingsTable>[],
): OfferRegistration {
  return {
    offer: {
      offerId: row.offer_id,
      symbol: row.symbol,
      listings: listings.map(toListing),
      floorPricePaise: Number(row.floor_price_paise),
      tickSizePaise: Number(row.tick_size_paise),
      baseQuantity: Number(row.base_quantity),
      greenShoeQuantity: Number(row.green_shoe_quantity),
      greenShoeExercised: Number(row.green_shoe_exercised),
      greenShoeDecidedAt: nullableNumber(row.green_shoe_decided_at),
      greenShoeDecisionBy: Number(row.green_shoe_decision_by),
      retailReservePct: Number(row.retail_reserve_pct),
      retailDiscount: discountOf(row.retail_discount_paise, row.retail_discount_bp),
      retailAllocationPrice: row.retail_allocation_price as Offer['retailAllocationPrice'],
      employeeQuantity: Number(row.employee_quantity),
      employeeGreenShoeQuantity: Number(row.employee_green_shoe_quantity),
      employeeDiscount: discountOf(row.employee_discount_paise, row.employee_discount_bp),
      printedPortions: printedPortionsOf(row),
      allocation: row.allocation as Offer['allocation'],
      tDay: { opensAt: Number(row.t_opens_at), closesAt: Number(row.t_closes_at) },
      t1Day: { opensAt: Number(row.t1_opens_at), closesAt: Number(row.t1_closes_at) },
      settlementDelayMs: nullableNumber(row.settlement_delay_ms),
    },
    progress: {
      tAllocatedAt: nullableNumber(row.t_allocated_at),
      t1AllocatedAt: nullableNumber(row.t1_allocated_at),
      cancelledAt: nullableNumber(row.cancelled_at),
    },
    tCutoffPricePaise: nullableNumber(row.t_cutoff_price_paise),
    tUnallotted: nullableNumber(row.t_unallotted),
    tProceedAt: nullableNumber(row.t_proceed_at),
    tHeldAt: nullableNumber(row.t_held_at),
    t1RetailCutoffPricePaise: nullableNumber(row.t1_retail_cutoff_price_paise),
  };
}

function indicativeFromRow(row: Selectable<OfsOfferIndicativeTable>): PublishedIndicative {
  return {
    at: Number(row.at),
    all: { pricePaise: nullableNumber(row.price_paise), quantity: sharesFromColumn(row.quantity) },
    margin100: { pricePaise: nullableNumber(row.price_h_paise), quantity: sharesFromColumn(row.quantity_h) },
    margin0: { pricePaise: nullableNumber(row.price_t_paise), quantity: sharesFromColumn(row.quantity_t) },
  };
}

/**
 * The columns of a published indicative row, its quantities as text: better-sqlite3 reads an integer past
 * 2^53 as the nearest double, and these are sums of bids (issue 47 row 3).
 */
export function indicativeColumns() {
  const text = (column: 'quantity' | 'quantity_h' | 'quantity_t') =>
    sql<string>`cast(${sql.ref(column)} as text)`.as(column);
  return [
    'offer_id',
    'at',
    'price_paise',
    'price_h_paise',
    'price_t_paise',
    text('quantity'),
    text('quantity_h'),
    text('quantity_t'),
  ] as const;
}

function toListing(row: Selectable<OfsOfferListingsTable>): OfferListing {
  return {
    exchange: row.exchange as OfferListing['exchange'],
    scripToken: Number(row.scrip_token),
    series: { RETAIL: row.series_retail, NON_RETAIL: row.series_non_retail, EMPLOYEE: row.series_employee },
    valueLimitsPaise: {
      RETAIL: nullableNumber(row.value_limit_retail_paise),
      NON_RETAIL: nullableNumber(row.value_limit_non_retail_paise),
      EMPLOYEE: nullableNumber(row.value_limit_employee_paise),
    },
  };
}

/** The columns of an offer's terms (what an import writes). */
function termsColumns(offer: Offer, now: number) {
  const discount = (d: Discount) => ({
    paise: d !== null && 'paise' in d ? d.paise : null,
    bp: d !== null && 'basisPoints' in d ? d.basisPoints : null,
  });
  const retail = discount(offer.retailDiscount);
  const employee = discount(offer.employeeDiscount);
  return {
    symbol: offer.symbol,
    floor_price_paise: offer.floorPricePaise,
    tick_size_paise: offer.tickSizePaise,
    base_quantity: offer.baseQuantity,
    green_shoe_quantity: offer.greenShoeQuantity,
    green_shoe_exercised: offer.greenShoeExercised,
    green_shoe_decision_by: offer.greenShoeDecisionBy,
    employee_green_shoe_quantity: offer.employeeGreenShoeQuantity,
    ...printedColumns(offer.printedPortions),
    retail_reserve_pct: offer.retailReservePct,
    retail_discount_paise: retail.paise,
    retail_discount_bp: retail.bp,
    retail_allocation_price: offer.retailAllocationPrice,
    employee_quantity: offer.employeeQuantity,
    employee_discount_paise: employee.paise,
    employee_discount_bp: employee.bp,
    allocation: offer.allocation,
    t_opens_at: offer.tDay.opensAt,
    t_closes_at: offer.tDay.closesAt,
    t1_opens_at: offer.t1Day.opensAt,
    t1_closes_at: offer.t1Day.closesAt,
    settlement_delay_ms: offer.settlementDelayMs,
    updated_at: now,
  };
}

/**
 * Which offers a list keeps: every one; the current ones (not finished, or finished, allocated or cancelled,
 * with its T+1 close, its allocation or its cancellation after `finishedAfter`: isCurrentOffer in
 * services/ofs-offers.ts); or those in one state at `now` (offerState).
 */
export type OfferListFilter =
  { kind: 'all' } | { kind: 'current'; finishedAfter: number } | { kind: 'state'; state: OfferState; now: number };

export interface OfferListQuery {
  filter: OfferListFilter;
  /** The page, from 1. */
  page: number;
  pageSize: number;
}

export interface OfferListPage {
  /** The page's offers, T day latest first, then by id, each with its latest indicative figures (none: undefined). */
  offers: { registration: OfferRegistration; latest: PublishedIndicative | undefined }[];
  /** How many offers the filter keeps, on all pages. */
  totalCount: number;
}

type OffersExpressions = ExpressionBuilder<Database, 'ofs_offers'>;

/**
 * offerState (src/domain/ofs/offer/offer.ts) on the stored columns: the offers in `state` at `now`. CANCELLED wins,
 * then ALLOCATED (the T+1 allocation ran); before the T allocation, ANNOUNCED until T opens and T_OPEN from
 * then; after it, T_ALLOCATED until T+1 opens and T1_OPEN from then. One rule in two languages: when
 * offerState changes, change this with it (test/store/ofs-offer-list.test.ts checks that they agree on every
 * state).
 */
export function offerStateCondition(eb: OffersExpressions, state: OfferState, now: number): Expression<SqlBool> {
  const standing = [eb('cancelled_at', 'is', null), eb('t1_allocated_at', 'is', null)];
  switch (state) {
    case 'CANCELLED':
      return eb('cancelled_at', 'is not', null);
    case 'ALLOCATED':
      return eb.and([eb('cancelled_at', 'is', null), eb('t1_allocated_at', 'is not', null)]);
    case 'ANNOUNCED':
      return eb.and([...standing, eb('t_allocated_at', 'is', null), eb('t_opens_at', '>', now)]);
    case 'T_OPEN':
      return eb.and([...standing, eb('t_allocated_at', 'is', null), eb('t_opens_at', '<=', now)]);
    case 'T_ALLOCATED':
      return eb.and([...standing, eb('t_allocated_at', 'is not', null), eb('t1_opens_at', '>', now)]);
    case 'T1_OPEN':
      return eb.and([...standing, eb('t_allocated_at', 'is not', null), eb('t1_opens_at', '<=', now)]);
  }
}

/**
 * isCurrentOffer (services/ofs-offers.ts) on the stored columns: not finished (neither cancelled nor
 * allocated on T+1: ANNOUNCED, T_OPEN, T_ALLOCATED or T1_OPEN by offerState), or its T+1 close, its T+1
 * allocation or its cancellation after `finishedAfter`.
 */
function currentCondition(eb: OffersExpressions, finishedAfter: number): Expression<SqlBool> {
  return eb.or([
    eb.and([eb('cancelled_at', 'is', null), eb('t1_allocated_at', 'is', null)]),
    eb('t1_closes_at', '>', finishedAfter),
    eb('t1_allocated_at', '>', finishedAfter),
    eb('cancelled_at', '>', finishedAfter),
  ]);
}

function listCondition(eb: OffersExpressions, filter: OfferListFilter): Expression<SqlBool> {
  switch (filter.kind) {
    case 'all':
      return eb.lit(true);
    case 'current':
      return currentCondition(eb, filter.finishedAfter);
    case 'state':
      return offerStateCondition(eb, filter.state, filter.now);
  }
}

export class OfsOfferRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async find(offerId: string, storeTx?: StoreTx): Promise<OfferRegistration | undefined> {
    const db = executorOf(this.db, storeTx);
    const row = await db.selectFrom('ofs_offers').selectAll().where('offer_id', '=', offerId).executeTakeFirst();
    if (row === undefined) return undefined;
    const listings = await db
      .selectFrom('ofs_offer_listings')
      .selectAll()
      .where('offer_id', '=', offerId)
      .orderBy('exchange')
      .execute();
    return toRegistration(row, listings);
  }

  /**
   * One page of the offers the filter keeps, T day latest first, then by id, each with its listings and its
   * latest indicative figures, and how many the filter keeps on all pages. A fixed number of statements
   * whatever the page size or the offers stored (issue 47 row 7): the page, its count, then the listings and
   * the latest figures of the page's offers, each in one statement; all in one snapshot, so that the count
   * agrees with the page.
   */
  async listPage(query: OfferListQuery): Promise<OfferListPage> {
    return inOneSnapshot(this.db, async (db) => {
      const condition = (eb: ExpressionBuilder<Database, 'ofs_offers'>) => listCondition(eb, query.filter);
      const rows = await db
        .selectFrom('ofs_offers')
        .selectAll()
        .where(condition)
        .orderBy('t_opens_at', 'desc')
        .orderBy('offer_id')
        .limit(query.pageSize)
        .offset((query.page - 1) * query.pageSize)
        .execute();
      const total = await db
        .selectFrom('ofs_offers')
        .where(condition)
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .executeTakeFirstOrThrow();
      const totalCount = Number(total.n);
      if (rows.length === 0) return { offers: [], totalCount };
      const ids = rows.map((row) => row.offer_id);
      const listings = await db
        .selectFrom('ofs_offer_listings')
        .selectAll()
        .where('offer_id', 'in', ids)
        .orderBy('offer_id')
        .orderBy('exchange')
        .execute();
      // Each offer's latest figures: the row at its greatest `at` (the primary key is offer_id, at).
      const latest = await db
        .selectFrom('ofs_offer_indicative as i')
        .select(indicativeColumns())
        .where('i.offer_id', 'in', ids)
        .where('i.at', '=', (eb) =>
          eb
            .selectFrom('ofs_offer_indicative as j')
            .select((inner) => inner.fn.max('j.at').as('at'))
            .whereRef('j.offer_id', '=', 'i.offer_id'),
        )
        .execute();
      const listingsOf = new Map<string, Selectable<OfsOfferListingsTable>[]>();
      for (const listing of listings) {
        const of = listingsOf.get(listing.offer_id);
        if (of === undefined) listingsOf.set(listing.offer_id, [listing]);
        else of.push(listing);
      }
      const latestOf = new Map(latest.map((row) => [row.offer_id, indicativeFromRow(row)]));
      return {
        offers: rows.map((row) => ({
          registration: toRegistration(row, listingsOf.get(row.offer_id) ?? []),
          latest: latestOf.get(row.offer_id),
        })),
        totalCount,
      };
    });
  }

  /** The offer an instrument is a listing of, if any. */
  async findByListing(exchange: string, scripToken: number, storeTx?: StoreTx): Promise<OfferRegistration | undefined> {
    const db = executorOf(this.db, storeTx);
    const listing = await db
      .selectFrom('ofs_offer_listings')
      .select('offer_id')
      .where('exchange', '=', exchange)
      .where('scrip_token', '=', scripToken)
      .executeTakeFirst();
    return listing && this.find(listing.offer_id, storeTx);
  }

  /** The indicative figures of every offer published after `at`, oldest first, at most `limit`. */
  async indicativeSince(at: number, limit: number): Promise<(PublishedIndicative & { offerId: string })[]> {
    const rows = await this.db
      .selectFrom('ofs_offer_indicative')
      .select(indicativeColumns())
      .where('at', '>', at)
      .orderBy('at')
      .orderBy('offer_id')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ offerId: row.offer_id, ...indicativeFromRow(row) }));
  }

  /** When the last indicative figures were published (null: never). */
  async latestIndicativeAt(): Promise<number | null> {
    const row = await this.db
      .selectFrom('ofs_offer_indicative')
      .select((eb) => eb.fn.max('at').as('at'))
      .executeTakeFirst();
    return row?.at == null ? null : Number(row.at);
  }

  /** The indicative prices the exchange published for the offer, the latest `limit`, oldest first. */
  async indicativeHistory(offerId: string, limit: number): Promise<PublishedIndicative[]> {
    const rows = await this.db
      .selectFrom('ofs_offer_indicative')
      .select(indicativeColumns())
      .where('offer_id', '=', offerId)
      .orderBy('at', 'desc')
      .limit(limit)
      .execute();
    return rows.reverse().map(indicativeFromRow);
  }

  /**
   * What the offer's rules read of these users: their category, margin type and whether the operator
   * registered them as eligible employees of the offer. Unknown users are left out.
   */
  async bidders(offerId: string, userIds: readonly string[], storeTx?: StoreTx): Promise<Map<string, OfferBidder>> {
    if (userIds.length === 0) return new Map();
    const db = executorOf(this.db, storeTx);
    const rows = await db
      .selectFrom('users as u')
      .leftJoin('ofs_offer_employees as e', (join) =>
        join.onRef('e.user_id', '=', 'u.user_id').on('e.offer_id', '=', offerId),
      )
      .select(['u.user_id', 'u.category', 'u.margin_type', 'e.user_id as employee'])
      .where('u.user_id', 'in', [...new Set(userIds)])
      .execute();
    return new Map(
      rows.map((row) => [
        row.user_id,
        {
          category: userCategoryOf(row.category) ?? 'RETAIL',
          marginType: row.margin_type === 'T' ? 'T' : 'H',
          employeeOfOffer: row.employee !== null,
        },
      ]),
    );
  }

  /**
   * Registers or updates the offers and the issues of one import, all or nothing. Refused (an
   * OfferConflictError, nothing written): an instrument that would be both an offer's listing and an
   * issue, a listing that belongs to another offer, and new terms for an offer whose T allocation has run
   * (its portions and cut-off are fixed; the green shoe has its own command until then). Re-importing an
   * offer replaces its listings.
   */
  async importAll(
    offers: readonly Offer[],
    issues: readonly OfsIssue[],
    now: number,
  ): Promise<{ updatedOffers: Set<string> }> {
    return this.db.transaction().execute(async (trx) => {
      const updatedOffers = new Set<string>();
      for (const offer of offers) {
        const existing = await trx
          .selectFrom('ofs_offers')
          .select(['offer_id', 't_allocated_at', 'cancelled_at', 'green_shoe_decided_at', 'green_shoe_exercised'])
          .where('offer_id', '=', offer.offerId)
          .executeTakeFirst();
        // A decision the operator recorded stands over the file's default.
        let decided: { green_shoe_exercised: number } | undefined;
        if (existing !== undefined) {
          if (existing.t_allocated_at !== null)
            throw new OfferConflictError(`offer ${offer.offerId}: its T allocation has run, so its terms are fixed`);
          if (existing.cancelled_at !== null) throw new OfferConflictError(`offer ${offer.offerId} was cancelled`);
          if (existing.green_shoe_decided_at !== null) {
            const exercised = Number(existing.green_shoe_exercised);
            if (exercised > offer.greenShoeQuantity) {
              throw new OfferConflictError(
                `offer ${offer.offerId}: the seller's recorded decision exercises ${exercised} shares of the green shoe, more than the file's green_shoe_quantity ${offer.greenShoeQuantity}`,
              );
            }
            decided = { green_shoe_exercised: exercised };
          }
          updatedOffers.add(offer.offerId);
        }
        for (const listing of offer.listings) {
          const other = await trx
            .selectFrom('ofs_offer_listings')
            .select('offer_id')
            .where('exchange', '=', listing.exchange)
            .where('scrip_token', '=', listing.scripToken)
            .where('offer_id', '<>', offer.offerId)
            .executeTakeFirst();
          if (other !== undefined)
            throw new OfferConflictError(
              `${listing.exchange} ${listing.scripToken} is already a listing of offer ${other.offer_id}`,
            );
          const issue = await trx
            .selectFrom('ofs_issues')
            .select('symbol')
            .where('exchange', '=', listing.exchange)
            .where('scrip_token', '=', listing.scripToken)
            .executeTakeFirst();
          if (issue !== undefined)
            throw new OfferConflictError(
              `${listing.exchange} ${listing.scripToken} is already an issue of the one-listing format (${issue.symbol})`,
            );
        }
        const terms = { ...termsColumns(offer, now), ...decided };
        await trx
          .insertInto('ofs_offers')
          .values({ offer_id: offer.offerId, ...terms })
          .onConflict((oc) => oc.column('offer_id').doUpdateSet(terms))
          .execute();
        await trx.deleteFrom('ofs_offer_listings').where('offer_id', '=', offer.offerId).execute();
        await trx
          .insertInto('ofs_offer_listings')
          .values(
            offer.listings.map((l) => ({
              exchange: l.exchange,
              scrip_token: l.scripToken,
              offer_id: offer.offerId,
              series_retail: l.series.RETAIL,
              series_non_retail: l.series.NON_RETAIL,
              series_employee: l.series.EMPLOYEE,
              value_limit_retail_paise: l.valueLimitsPaise?.RETAIL ?? null,
              value_limit_non_retail_paise: l.valueLimitsPaise?.NON_RETAIL ?? null,
              value_limit_employee_paise: l.valueLimitsPaise?.EMPLOYEE ?? null,
            })),
          )
          .execute();
      }
      for (const issue of issues) {
        const listing = await trx
          .selectFrom('ofs_offer_listings')
          .select('offer_id')
          .where('exchange', '=', issue.exchange)
          .where('scrip_token', '=', issue.scripToken)
          .executeTakeFirst();
        if (listing !== undefined)
          throw new OfferConflictError(
            `${issue.exchange} ${issue.scripToken} is already a listing of offer ${listing.offer_id}`,
          );
      }
      await upsertIssues(trx, issues, now);
      return { updatedOffers };
    });
  }

  /**
   * Records the seller's green-shoe decision (shares exercised) and, when given, the portions the notice
   * printed for it; false when the offer is unknown, cancelled, past the decision's deadline (T closed), or
   * its T allocation has run.
   */
  async setGreenShoe(
    offerId: string,
    exercised: number,
    printed: PrintedPortions | null,
    now: number,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('ofs_offers')
      .set({
        green_shoe_exercised: exercised,
        green_shoe_decided_at: now,
        ...(printed !== null && printedColumns(printed)),
        updated_at: now,
      })
      .where('offer_id', '=', offerId)
      .where('t_allocated_at', 'is', null)
      .where('cancelled_at', 'is', null)
      // Before the deadline, or while T is open.
      .where((eb) => eb.or([eb('green_shoe_decision_by', '>', now), eb('t_closes_at', '>', now)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Records, once, that the exchange held the offer's T allocation for the operator (its valid non-retail
   * demand after the single-bidder cap is short of the portion), in the exchange's transaction.
   */
  async holdTAllocation(offerId: string, now: number, storeTx?: StoreTx): Promise<void> {
    await executorOf(this.db, storeTx)
      .updateTable('ofs_offers')
      .set({ t_held_at: now })
      .where('offer_id', '=', offerId)
      .where('t_held_at', 'is', null)
      .where('t_allocated_at', 'is', null)
      .execute();
  }

  /**
   * The operator's decision on an under-subscribed T day: allot it anyway. False when the offer is
   * unknown, cancelled, or its T allocation has run.
   */
  async proceed(offerId: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('ofs_offers')
      .set({ t_proceed_at: now, updated_at: now })
      .where('offer_id', '=', offerId)
      .where('t_allocated_at', 'is', null)
      .where('cancelled_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * The operator cancels the offer (its non-retail demand fell short): every live bid is then cancelled
   * by the exchange and its block released. False when the offer is unknown, already cancelled, or fully
   * allocated.
   */
  async cancel(offerId: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('ofs_offers')
      .set({ cancelled_at: now, updated_at: now })
      .where('offer_id', '=', offerId)
      .where('cancelled_at', 'is', null)
      .where('t1_allocated_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Registers users as eligible employees of the offer (again: no change). */
  async addEmployees(offerId: string, userIds: readonly string[], now: number): Promise<void> {
    if (userIds.length === 0) return;
    await this.db
      .insertInto('ofs_offer_employees')
      .values(userIds.map((userId) => ({ offer_id: offerId, user_id: userId, registered_at: now })))
      .onConflict((oc) => oc.columns(['offer_id', 'user_id']).doNothing())
      .execute();
  }

  /** Answers how many of the users were registered. */
  async removeEmployees(offerId: string, userIds: readonly string[]): Promise<number> {
    if (userIds.length === 0) return 0;
    const result = await this.db
      .deleteFrom('ofs_offer_employees')
      .where('offer_id', '=', offerId)
      .where('user_id', 'in', [...userIds])
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async employees(offerId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('ofs_offer_employees')
      .select('user_id')
      .where('offer_id', '=', offerId)
      .orderBy('user_id')
      .execute();
    return rows.map((row) => row.user_id);
  }

  async isEmployee(offerId: string, userId: string): Promise<boolean> {
    const row = await this.db
      .selectFrom('ofs_offer_employees')
      .select('user_id')
      .where('offer_id', '=', offerId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row !== undefined;
  }
}
