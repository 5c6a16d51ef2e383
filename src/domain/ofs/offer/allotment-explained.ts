/**
 * "The allotment explained" (issue 51; docs/design/ofs.md, "The allotment explained"): for one bidder, each
 * of their bids in one offer, what it bid, what it was allotted on each day and why the rest was not, what
 * it paid, what its funds did and when it settles.
 *
 * The exchanges (NSE e-OFS, BSE iBBS) report an allotment without a reason, so the WHY is derived here from
 * public facts and the bid's own record, never from an exchange's (or the simulator's) words:
 * - the day of an allotment: a retail or employee bid is allotted on T+1 only; a non-retail bid's allotment
 *   applied before T+1's close belongs to T, after it to T+1 (as the OMS dates an allocation file's rows);
 * - whether a day's allocation has run for the bid: the offer's record of it, an allotment on that day, or
 *   a change the exchange made to the bid after that day's close (its allocation's report);
 * - the bid's price and quantity as they stood at T's close (a carry-forward may revise them) against the
 *   T-day cut-off; a retail bid's (a cut-off bid at the T-day cut-off) against the retail cut-off;
 * - the single-bidder cap: the bidder's allotments over all their non-retail bids in the offer (MF and IC
 *   exempt), through that day, reach portions.single_bidder_cap;
 * - carried forward or not; cancelled by the bidder (they asked) or with the offer; rejected (its reason,
 *   without error codes).
 * Pure: no I/O, no clock but `now`.
 */
import { formatRupees, IST_OFFSET_MS } from '../rules.js';
import { settlementInstant, type TradingCalendar } from '../trading-calendar.js';
import {
  discountedPricePaise,
  isMfIc,
  isNonRetailCategory,
  offerPortions,
  offerState,
  type MarginType,
  type OfferCategory,
  type OfferRegistration,
  type OfferState,
} from './offer.js';

export const ALLOTMENT_OUTCOMES = [
  'AWAITING',
  'ALLOTTED',
  'PART_ALLOTTED',
  'NOT_ALLOTTED',
  'REJECTED',
  'CANCELLED',
] as const;
export type AllotmentOutcome = (typeof ALLOTMENT_OUTCOMES)[number];

export const ALLOTMENT_REASONS = [
  'AWAITING_ALLOCATION',
  'ALLOTTED_IN_FULL',
  'PROPORTIONATE',
  'PRICE_PRIORITY',
  'SINGLE_BIDDER_CAP',
  'BELOW_CUTOFF',
  'BELOW_RETAIL_CUTOFF',
  'NOT_CARRIED_FORWARD',
  'NOTHING_LEFT_FOR_CARRIED_FORWARD',
  'REJECTED',
  'CANCELLED',
  'OFFER_CANCELLED',
] as const;
export type AllotmentReason = (typeof ALLOTMENT_REASONS)[number];

export type OfferDay = 'T' | 'T+1';

/** One allotment of a bid (its trade): shares, price, when the OMS applied it and when it settles. */
export interface BidAllotment {
  quantity: number;
  pricePaise: number;
  at: number;
  settlesAt: number;
}

/** One change of the bid (its history row): its terms after it, who made it and when. */
export interface BidChange {
  at: number;
  status: string;
  quantity: number;
  pricePaise: number;
  /** "exchange", "oms", the user; null on rows older than the audit trail. */
  actor: string | null;
}

/** One funds ledger row of the bid. */
export interface BidFundsEntry {
  kind: 'BLOCK' | 'RELEASE' | 'DEBIT';
  amountPaise: number;
  at: number;
}

/** One of the bidder's orders in the offer, with what happened to it. */
export interface ExplainedBidInput {
  orderId: string;
  exchange: string;
  symbol: string;
  series: string;
  category: OfferCategory;
  marginType: MarginType;
  status: string;
  /** The bid as it stands now; 0: a cut-off bid. */
  pricePaise: number;
  quantity: number;
  carriedForward: boolean;
  /** The bidder asked to cancel it. */
  cancelRequested: boolean;
  errorReason: string | null;
  createdAt: number;
  /** Its last change: when a finished bid finished. */
  updatedAt: number;
  /** What it blocks now (null: not funds-checked). */
  fundsBlockedPaise: number | null;
  allotments: readonly BidAllotment[];
  /** Oldest first. */
  changes: readonly BidChange[];
  funds: readonly BidFundsEntry[];
}

export interface ExplainedDay {
  day: OfferDay;
  bid_quantity: number;
  allotted_quantity: number;
  price: number | null;
  value: number;
  reason: AllotmentReason;
  explanation: string;
  settles_at: string | null;
}

export interface ExplainedBid {
  order_id: string;
  exchange: string;
  symbol: string;
  series: string;
  bid_category: OfferCategory;
  margin_type: MarginType;
  status: string;
  price: number | null;
  quantity: number;
  carried_forward: boolean;
  outcome: AllotmentOutcome;
  allotted_quantity: number;
  not_allotted_quantity: number;
  average_price: number | null;
  days: ExplainedDay[];
  funds: { blocked: number; debited: number; released: number };
  explanation: string;
}

export interface AllotmentExplained {
  server_time: string;
  offer_id: string;
  state: OfferState;
  allocated: { t_day: boolean; t1_day: boolean };
  t_cutoff_price: number | null;
  retail_cutoff_price: number | null;
  retail_price: number | null;
  employee_price: number | null;
  t1_opens_at: string;
  settlement_dates: { t_day: string; t1_day: string } | null;
  bids: ExplainedBid[];
  totals: {
    bid_quantity: number;
    allotted_quantity: number;
    not_allotted_quantity: number;
    blocked: number;
    debited: number;
    released: number;
  };
}

const REJECTED_STATUSES = new Set(['OMSREJECT', 'ORDERERROR']);
const LIVE_STATUSES = new Set(['OMSXMITTED', 'EXXMITTED', 'PENDING']);

const rupees = (paise: number | bigint) => Number(paise) / 100;
const iso = (ms: number) => new Date(ms).toISOString();

/** 6000 -> "6,000"; 1234567 -> "12,34,567" (the Indian grouping). */
export function indianNumber(n: number | bigint): string {
  const text = BigInt(n) < 0n ? (-BigInt(n)).toString() : BigInt(n).toString();
  const lastThree = text.slice(-3);
  const rest = text.slice(0, -3).replace(/\B(?=(\d{2})+$)/g, ',');
  return `${BigInt(n) < 0n ? '-' : ''}${rest === '' ? lastThree : `${rest},${lastThree}`}`;
}

/** Paise as "Rs 2,52,500.00": the project's way of writing rupees (rules.ts), in messages and the console alike. */
export const indianRupees = (paise: number | bigint): string => formatRupees(paise);

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An instant in India time: "Wed 2 Dec 13:30 IST". */
export function istTime(ms: number): string {
  const d = new Date(ms + IST_OFFSET_MS);
  const hh = String(d.getUTCHours()).padStart(2, '0');
  const mm = String(d.getUTCMinutes()).padStart(2, '0');
  return `${WEEKDAYS[d.getUTCDay()]} ${d.getUTCDate()} ${MONTHS[d.getUTCMonth()]} ${hh}:${mm} IST`;
}

/** A rejection's reason in a trader's words: no error codes ("(e-380)", "e-380:"). */
export function withoutErrorCodes(reason: string): string {
  return reason
    .replace(/\s*\(e-\d{3}\)/g, '')
    .replace(/\be-\d{3}:?\s*/g, '')
    .trim();
}

interface DayFacts {
  day: OfferDay;
  bidQuantity: number;
  allotted: number;
  valuePaise: bigint;
  debitPaise: number;
  settlesAt: number | null;
  reason: AllotmentReason;
}

/**
 * The allotment explained: the offer's figures and each bid of the caller's in it, oldest first, with
 * each day's allotment and its reason, the funds and the totals.
 */
export function explainAllotment(
  registration: OfferRegistration,
  bids: readonly ExplainedBidInput[],
  calendar: TradingCalendar,
  now: number,
): AllotmentExplained {
  const { offer, progress, tCutoffPricePaise: tCutoff, t1RetailCutoffPricePaise: retailCutoff } = registration;
  const portions = offerPortions(offer);
  const tClose = offer.tDay.closesAt;
  const t1Close = offer.t1Day.closesAt;
  const sorted = [...bids].sort((a, b) => a.createdAt - b.createdAt || (a.orderId < b.orderId ? -1 : 1));

  const dayOf = (bid: ExplainedBidInput, allotment: BidAllotment): OfferDay =>
    !isNonRetailCategory(bid.category) || allotment.at >= t1Close ? 'T+1' : 'T';
  const allottedOn = (bid: ExplainedBidInput, day: OfferDay) =>
    bid.allotments.filter((a) => dayOf(bid, a) === day).reduce((sum, a) => sum + a.quantity, 0);
  /** The exchange reported on the bid after the day's close: the day's allocation (or its end) reached it. */
  const exchangeSpokeAfter = (bid: ExplainedBidInput, close: number) =>
    bid.changes.some((c) => c.actor === 'exchange' && c.at >= close);

  // Whether each day's allocation has run: the offer's record, or what the caller's bids show of it.
  const tRun =
    progress.tAllocatedAt !== null ||
    sorted.some(
      (bid) =>
        bid.allotments.some((a) => dayOf(bid, a) === 'T') ||
        (isNonRetailCategory(bid.category) && (bid.carriedForward || exchangeSpokeAfter(bid, tClose))),
    );
  const t1Run =
    progress.t1AllocatedAt !== null ||
    sorted.some((bid) => bid.allotments.some((a) => dayOf(bid, a) === 'T+1') || exchangeSpokeAfter(bid, t1Close));

  // The single-bidder cap counts the non-retail allotments of bidders other than MF and IC.
  const capped = (day: OfferDay) =>
    sorted
      .filter((bid) => isNonRetailCategory(bid.category) && !isMfIc(bid.category))
      .reduce((sum, bid) => sum + allottedOn(bid, 'T') + (day === 'T+1' ? allottedOn(bid, 'T+1') : 0), 0) >=
    portions.singleBidderCap;

  const settlementDates =
    offer.settlementDelayMs !== null
      ? null
      : { tDay: settlementInstant(calendar, tClose), t1Day: settlementInstant(calendar, t1Close) };

  const explained = sorted.map((bid) => {
    const rejected = REJECTED_STATUSES.has(bid.status);
    const live = LIVE_STATUSES.has(bid.status);
    const nonRetail = isNonRetailCategory(bid.category);
    /** The bid's terms as they stood at an instant (its last change by then; else as placed, else now). */
    const termsAt = (at: number) => {
      const before = bid.changes.filter((c) => c.at <= at).at(-1) ?? bid.changes[0];
      return before === undefined
        ? { quantity: bid.quantity, pricePaise: bid.pricePaise }
        : { quantity: before.quantity, pricePaise: before.pricePaise };
    };
    const finishedBy = (close: number) => !live && bid.updatedAt < close;

    const facts = (day: OfferDay, bidQuantity: number, reason: AllotmentReason): DayFacts => {
      const allotments = bid.allotments.filter((a) => dayOf(bid, a) === day);
      const times = new Set(allotments.map((a) => a.at));
      return {
        day,
        bidQuantity,
        allotted: allotments.reduce((sum, a) => sum + a.quantity, 0),
        valuePaise: allotments.reduce((sum, a) => sum + BigInt(a.quantity) * BigInt(a.pricePaise), 0n),
        debitPaise: bid.funds
          .filter((f) => f.kind === 'DEBIT' && times.has(f.at))
          .reduce((sum, f) => sum + f.amountPaise, 0),
        settlesAt: allotments.length === 0 ? null : Math.max(...allotments.map((a) => a.settlesAt)),
        reason,
      };
    };

    /** Why a day's allocation gave the bid nothing, or less than it asked, or nothing yet. */
    const reasonOf = (day: OfferDay, bidQuantity: number, pricePaise: number): AllotmentReason => {
      const close = day === 'T' ? tClose : t1Close;
      const allotted = allottedOn(bid, day);
      const reported = allotted > 0 || exchangeSpokeAfter(bid, close);
      // A live bid the day's allocation has not reported on waits for it, whatever the offer says.
      const run = reported || ((day === 'T' ? tRun : t1Run) && !live);
      const allocatedAt = day === 'T' ? progress.tAllocatedAt : progress.t1AllocatedAt;
      if (allotted >= bidQuantity && allotted > 0) return 'ALLOTTED_IN_FULL';
      if (rejected && allotted === 0) return 'REJECTED';
      if (bid.cancelRequested && bid.status === 'CANCELLED' && finishedBy(close) && allotted === 0) return 'CANCELLED';
      if (
        progress.cancelledAt !== null &&
        allotted === 0 &&
        (allocatedAt === null || progress.cancelledAt < allocatedAt)
      )
        return 'OFFER_CANCELLED';
      if (day === 'T+1' && nonRetail && !bid.carriedForward)
        return live && now < t1Close ? 'AWAITING_ALLOCATION' : 'NOT_CARRIED_FORWARD';
      if (!run) return 'AWAITING_ALLOCATION';
      // Below the cut-off nothing is allotted whatever the cap: the price is the reason a trader can act on.
      const belowCutoff = nonRetail && tCutoff !== null && pricePaise < tCutoff;
      if (belowCutoff && allotted === 0) return 'BELOW_CUTOFF';
      if (nonRetail && !isMfIc(bid.category) && capped(day)) return 'SINGLE_BIDDER_CAP';
      if (nonRetail) {
        if (belowCutoff) return 'BELOW_CUTOFF';
        if (day === 'T+1') return allotted === 0 ? 'NOTHING_LEFT_FOR_CARRIED_FORWARD' : 'PRICE_PRIORITY';
        return offer.allocation === 'PROPORTIONATE' ? 'PROPORTIONATE' : 'PRICE_PRIORITY';
      }
      if (bid.category === 'EMPLOYEE') return 'PROPORTIONATE';
      const valued = pricePaise === 0 ? tCutoff : pricePaise;
      if (retailCutoff !== null && valued !== null && valued < retailCutoff) return 'BELOW_RETAIL_CUTOFF';
      return offer.allocation === 'PROPORTIONATE' ? 'PROPORTIONATE' : 'PRICE_PRIORITY';
    };

    const days: DayFacts[] = [];
    if (nonRetail) {
      const atT = termsAt(tClose);
      const tReason = reasonOf('T', atT.quantity, atT.pricePaise);
      days.push(facts('T', atT.quantity, tReason));
      const tAllotted = allottedOn(bid, 'T');
      const goesOn =
        tReason !== 'ALLOTTED_IN_FULL' &&
        tReason !== 'AWAITING_ALLOCATION' &&
        tReason !== 'REJECTED' &&
        tReason !== 'CANCELLED' &&
        tReason !== 'OFFER_CANCELLED';
      if (goesOn || allottedOn(bid, 'T+1') > 0) {
        // What it carried forward (its revised quantity less the T allotment), else what T left of it.
        const left = Math.max(0, (bid.carriedForward ? bid.quantity : atT.quantity) - tAllotted);
        days.push(facts('T+1', left, reasonOf('T+1', left, bid.pricePaise)));
      }
    } else {
      days.push(facts('T+1', bid.quantity, reasonOf('T+1', bid.quantity, bid.pricePaise)));
    }

    const allotted = bid.allotments.reduce((sum, a) => sum + a.quantity, 0);
    const valuePaise = bid.allotments.reduce((sum, a) => sum + BigInt(a.quantity) * BigInt(a.pricePaise), 0n);
    const averagePaise = allotted === 0 ? null : Number((valuePaise * 2n + BigInt(allotted)) / (2n * BigInt(allotted)));
    const sum = (kind: BidFundsEntry['kind']) =>
      bid.funds.filter((f) => f.kind === kind).reduce((s, f) => s + f.amountPaise, 0);
    // The ledger releases an allotment's block and debits its cost from the cash: what came back to the
    // available funds is what was released beyond the debits.
    const fundsPaise = {
      blocked: bid.fundsBlockedPaise ?? 0,
      debited: sum('DEBIT'),
      released: Math.max(0, sum('RELEASE') - sum('DEBIT')),
    };
    const last = days.at(-1)!;
    const outcome: AllotmentOutcome = rejected
      ? 'REJECTED'
      : live || days.some((d) => d.reason === 'AWAITING_ALLOCATION')
        ? 'AWAITING'
        : allotted >= bid.quantity
          ? 'ALLOTTED'
          : allotted > 0
            ? 'PART_ALLOTTED'
            : last.reason === 'CANCELLED' || last.reason === 'OFFER_CANCELLED'
              ? 'CANCELLED'
              : 'NOT_ALLOTTED';

    const context: Context = {
      bid,
      cap: portions.singleBidderCap,
      tCutoff,
      retailCutoff,
      allocation: offer.allocation,
      t1OpensAt: offer.t1Day.opensAt,
      t1ClosesAt: t1Close,
      tClosesAt: tClose,
      expectedSettlement: settlementDates,
    };
    const out: ExplainedBid = {
      order_id: bid.orderId,
      exchange: bid.exchange,
      symbol: bid.symbol,
      series: bid.series,
      bid_category: bid.category,
      margin_type: bid.marginType,
      status: bid.status,
      price: bid.pricePaise === 0 ? null : rupees(bid.pricePaise),
      quantity: bid.quantity,
      carried_forward: bid.carriedForward,
      outcome,
      allotted_quantity: allotted,
      not_allotted_quantity: bid.quantity - allotted,
      average_price: averagePaise === null ? null : rupees(averagePaise),
      days: days.map((d) => ({
        day: d.day,
        bid_quantity: d.bidQuantity,
        allotted_quantity: d.allotted,
        price: d.allotted === 0 ? null : rupees((d.valuePaise * 2n + BigInt(d.allotted)) / (2n * BigInt(d.allotted))),
        value: rupees(d.debitPaise),
        reason: d.reason,
        explanation: dayExplanation(d, context),
        settles_at: d.settlesAt === null ? null : iso(d.settlesAt),
      })),
      funds: {
        blocked: rupees(fundsPaise.blocked),
        debited: rupees(fundsPaise.debited),
        released: rupees(fundsPaise.released),
      },
      explanation: bidExplanation(outcome, allotted, averagePaise, days, fundsPaise, context),
    };
    return { out, fundsPaise };
  });

  const total = (pick: (e: (typeof explained)[number]) => number) => explained.reduce((s, e) => s + pick(e), 0);
  return {
    server_time: iso(now),
    offer_id: offer.offerId,
    state: offerState(offer, progress, now),
    allocated: { t_day: tRun, t1_day: t1Run },
    t_cutoff_price: tCutoff === null ? null : rupees(tCutoff),
    retail_cutoff_price: retailCutoff === null ? null : rupees(retailCutoff),
    retail_price:
      tCutoff === null || offer.retailAllocationPrice !== 'UNIFORM'
        ? null
        : rupees(discountedPricePaise(tCutoff, offer.retailDiscount)),
    employee_price: tCutoff === null ? null : rupees(discountedPricePaise(tCutoff, offer.employeeDiscount)),
    t1_opens_at: iso(offer.t1Day.opensAt),
    settlement_dates:
      settlementDates === null ? null : { t_day: iso(settlementDates.tDay), t1_day: iso(settlementDates.t1Day) },
    bids: explained.map((e) => e.out),
    totals: {
      bid_quantity: total((e) => e.out.quantity),
      allotted_quantity: total((e) => e.out.allotted_quantity),
      not_allotted_quantity: total((e) => e.out.not_allotted_quantity),
      blocked: rupees(total((e) => e.fundsPaise.blocked)),
      debited: rupees(total((e) => e.fundsPaise.debited)),
      released: rupees(total((e) => e.fundsPaise.released)),
    },
  };
}

interface Context {
  bid: ExplainedBidInput;
  cap: number;
  tCutoff: number | null;
  retailCutoff: number | null;
  allocation: 'PROPORTIONATE' | 'PRICE_PRIORITY';
  t1OpensAt: number;
  t1ClosesAt: number;
  tClosesAt: number;
  expectedSettlement: { tDay: number; t1Day: number } | null;
}

const shares = (n: number) => `${indianNumber(n)} share${n === 1 ? '' : 's'}`;
const price = (paise: number | null) => (paise === null ? 'the cut-off' : indianRupees(paise));

/** One sentence for a day: what it asked, what it got, why. */
function dayExplanation(d: DayFacts, c: Context): string {
  const on = d.day === 'T' ? 'on T' : 'on T+1';
  const got =
    d.allotted === 0
      ? `Nothing of ${shares(d.bidQuantity)} was allotted ${on}`
      : `${indianNumber(d.allotted)} of ${shares(d.bidQuantity)} allotted ${on} at ${indianRupees(
          Number((d.valuePaise * 2n + BigInt(d.allotted)) / (2n * BigInt(d.allotted))),
        )}`;
  const settles = d.settlesAt === null ? '' : `; settles ${istTime(d.settlesAt)}`;
  const cutoff = c.tCutoff === null ? 'the T-day cut-off' : `the T-day cut-off of ${indianRupees(c.tCutoff)}`;
  switch (d.reason) {
    case 'AWAITING_ALLOCATION':
      return d.day === 'T'
        ? `${shares(d.bidQuantity)} bid; the T allocation after T closes at ${istTime(c.tClosesAt)} has not reached it yet.`
        : c.bid.carriedForward || !isNonRetailCategory(c.bid.category)
          ? `${shares(d.bidQuantity)} bid; the T+1 allocation after T+1 closes at ${istTime(c.t1ClosesAt)} has not reached it yet.`
          : `${shares(d.bidQuantity)} were not allotted on T; carry them forward before T+1 closes at ${istTime(c.t1ClosesAt)} to take part in T+1.`;
    case 'ALLOTTED_IN_FULL':
      return `${got}: allotted in full${settles}.`;
    case 'PROPORTIONATE':
      return `${got}: the shares on offer were fewer than the bids at or above the clearing price, so every such bid got the same proportion${settles}.`;
    case 'PRICE_PRIORITY':
      return `${got}: shares went to the highest bids first, and the bids at the lowest price allotted shared what was left${settles}.`;
    case 'SINGLE_BIDDER_CAP':
      return `${got}: no bidder but a mutual fund or an insurer may be allotted more than 25 % of the offer (${shares(c.cap)} a bidder), and your bids in this offer reached it${settles}.`;
    case 'BELOW_CUTOFF':
      return `${got}: your price ${price(termsPrice(c, d))} was below ${cutoff}${settles}.`;
    case 'BELOW_RETAIL_CUTOFF':
      return `${got}: your price ${price(c.bid.pricePaise === 0 ? c.tCutoff : c.bid.pricePaise)} was below the retail cut-off of ${price(c.retailCutoff)}; retail bids at or above it took the retail shares.`;
    case 'NOT_CARRIED_FORWARD':
      return `${shares(d.bidQuantity)} not allotted on T were not carried forward to T+1, so they lapsed.`;
    case 'NOTHING_LEFT_FOR_CARRIED_FORWARD':
      return `${got}: carried-forward bids get only the retail shares retail bidders leave, and none were left for your price.`;
    case 'REJECTED':
      return `The bid was rejected: ${withoutErrorCodes(c.bid.errorReason ?? 'no reason was given').replace(/\.$/, '')}.`;
    case 'CANCELLED':
      return `You cancelled the bid before the ${d.day} allocation; ${shares(d.bidQuantity)} were not allotted ${on}.`;
    case 'OFFER_CANCELLED':
      return `The offer was cancelled before the ${d.day} allocation; ${shares(d.bidQuantity)} were not allotted ${on}.`;
  }
}

function termsPrice(c: Context, d: DayFacts): number {
  if (d.day === 'T+1') return c.bid.pricePaise;
  const before = c.bid.changes.filter((ch) => ch.at <= c.tClosesAt).at(-1) ?? c.bid.changes[0];
  return before?.pricePaise ?? c.bid.pricePaise;
}

/** What a reason says in a bid's one-line summary: who took the rest. */
const REST: Partial<Record<AllotmentReason, (c: Context) => string>> = {
  PROPORTIONATE: () => 'the bids were shared proportionately',
  PRICE_PRIORITY: () => 'higher bids were allotted first',
  SINGLE_BIDDER_CAP: (c) => `the single-bidder cap (${shares(c.cap)} a bidder) took the rest`,
  BELOW_CUTOFF: (c) =>
    `the price was below the T-day cut-off${c.tCutoff === null ? '' : ` of ${indianRupees(c.tCutoff)}`}`,
  BELOW_RETAIL_CUTOFF: (c) =>
    `the price was below the retail cut-off${c.retailCutoff === null ? '' : ` of ${indianRupees(c.retailCutoff)}`}`,
  NOT_CARRIED_FORWARD: () => 'the rest was not carried forward to T+1',
  NOTHING_LEFT_FOR_CARRIED_FORWARD: () => 'no retail shares were left for carried-forward bids',
  CANCELLED: () => 'you cancelled the rest',
  OFFER_CANCELLED: () => 'the offer was cancelled',
};

function bidExplanation(
  outcome: AllotmentOutcome,
  allotted: number,
  averagePaise: number | null,
  days: readonly DayFacts[],
  funds: { blocked: number; debited: number; released: number },
  c: Context,
): string {
  const bid = c.bid;
  const money = [
    funds.debited > 0 ? `${indianRupees(funds.debited)} debited` : '',
    funds.released > 0 ? `${indianRupees(funds.released)} released` : '',
    funds.blocked > 0 ? `${indianRupees(funds.blocked)} still blocked` : '',
  ].filter((s) => s !== '');
  const settlesAt = days.map((d) => d.settlesAt).filter((s): s is number => s !== null);
  const settles = settlesAt.length === 0 ? '' : `; settles ${istTime(Math.max(...settlesAt))}`;
  const tail = `${money.length === 0 ? '' : `; ${money.join(', ')}`}${settles}`;
  const why = [
    ...new Set(
      days
        .filter((d) => d.reason !== 'ALLOTTED_IN_FULL')
        .map((d) => REST[d.reason]?.(c))
        .filter((s): s is string => s !== undefined),
    ),
  ];
  const ofQuantity = `${indianNumber(allotted)} of ${indianNumber(bid.quantity)}`;
  switch (outcome) {
    case 'REJECTED':
      return `Rejected: ${withoutErrorCodes(bid.errorReason ?? 'no reason was given')}${tail}`;
    case 'AWAITING': {
      const so =
        allotted > 0 ? `Allotted ${ofQuantity} so far at ${price(averagePaise)}` : `${shares(bid.quantity)} bid`;
      return `${so}; waiting for the ${days.at(-1)!.day} allocation${tail}`;
    }
    case 'ALLOTTED':
      return `Allotted in full, ${shares(allotted)} at ${price(averagePaise)}${tail}`;
    case 'PART_ALLOTTED':
      return `Allotted ${ofQuantity} at ${price(averagePaise)}${why.length === 0 ? '' : `: ${why.join('; ')}`}${tail}`;
    case 'CANCELLED':
      return `Nothing allotted: ${why[0] ?? 'the bid was cancelled'}${tail}`;
    case 'NOT_ALLOTTED':
      return `Nothing allotted of ${indianNumber(bid.quantity)}${why.length === 0 ? '' : `: ${why.join('; ')}`}${tail}`;
  }
}
