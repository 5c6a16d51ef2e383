/**
 * OFS offers under the exchanges' framework (docs/design/ofs.md): each offer's state and day, its listings
 * with the series of each category, the portions in shares (marked when they are the notice's printed
 * figures), the green shoe (how much of it is exercised, and whether the seller decided that or the
 * import's default stands at the deadline), the discounts, the prices the allocations found (the T-day
 * cut-off, and with it the retail and employee prices; the retail cut-off after T+1) and when the
 * allotments are paid out. Through T it shows the indicative price the exchange publishes, with a chart of
 * it, kept after T's close as the final T-day figures; with it the published demand: the non-retail shares
 * bid against the non-retail portion ("subscribed 1.8 times"), by margin type, and the trader's own live
 * bids against the indicative price and the floor (the exchanges publish no demand by price). Once T has
 * closed it says what the T allocation waits for: the seller's green-shoe decision (until its deadline), or
 * the operator when non-retail demand fell short; once the T allocation has found the cut-off, a banner
 * gives it with T+1's opening. The view reads the offers again every 5 s while it is open. While the user's
 * bidding day of an offer is open, its card has a bid form that takes the series from the listing and what
 * the user bids as. A card opens on what the trader acts on (the state, the banner, the key prices, the
 * ticket, the indicative price); the offer's static terms are folded in an "Offer terms" disclosure, closed
 * on a phone. For operators, each card links to the offer's book (views/offer-book.ts).
 */
import { ApiError, readData, readProfile } from '../api.js';
import { indicativeChart } from '../chart/indicative-chart.js';
import type { ConsoleContext, View } from '../context.js';
import { livePoll } from '../live-poll.js';
import { placeBid } from '../place-bid.js';
import { field, h, select, statusLine } from '../dom.js';
import { isOpen } from '../orders-store.js';
import {
  amountOf,
  formatClock,
  formatDayTime,
  formatDuration,
  formatRupees,
  formatInstant,
  formatPrice,
  formatQuantity,
  formatTimeOfDay,
  parseInstant,
  sameIndiaDay,
} from '../format.js';
import { serverNow } from '../ofs-issues.js';
import {
  BID_AS_LABELS,
  isNonRetailUser,
  loadOffer,
  loadOffers,
  openBids,
  seriesFor,
  type BidAs,
} from '../ofs-offers.js';
import type { Balance, IndicativePoint, OfsListing, OfsOffer } from '../types.js';
import { chartWidth, PHONE_QUERY } from '../chart/chart-width.js';
import { priceStrip, type StripBid } from '../chart/price-strip.js';
import { allotmentSection } from './allotment.js';

const STATES: Record<OfsOffer['state'], string> = {
  ANNOUNCED: 'announced: day T has not opened',
  T_OPEN: 'day T: non-retail bids (the T allocation follows the close)',
  T_ALLOCATED: 'T allocated: the cut-off is known; T+1 opens next',
  T1_OPEN: 'day T+1: retail, employee and carried-forward bids',
  ALLOCATED: 'allocated',
  CANCELLED: 'cancelled by the operator',
};

export const AWAITING_OPERATOR = 'T closed with non-retail demand short of the portion: waiting for the operator';

/** Which day it is and where the offer stands, as one line: "Day T+1; day T+1: retail, employee and carried-forward bids". */
export const offerStateText = (offer: OfsOffer): string =>
  `${offer.current_day === 'CLOSED' ? 'Closed' : `Day ${offer.current_day}`}; ${STATES[offer.state]}`;

/** The hash of an offer's book (views/offer-book.ts), for operators. */
export const offerBookPath = (offerId: string): string => `#/offers/${encodeURIComponent(offerId)}/book`;

/** The offers are read again this often while the view is open, so that the indicative price and the states follow. */
const LIVE_READ_MS = 5_000;

const notKnown = (price: number | null) => (price === null ? 'not known yet' : formatPrice(price));

function discount(value: OfsOffer['retail_discount']): string {
  if (value === null) return 'none';
  return 'rupees' in value ? `Rs ${formatPrice(value.rupees)} off` : `${value.pct} % off`;
}

/** A discount as what comes off a price: "Rs 2.50", "5 %". */
function discountOff(value: OfsOffer['retail_discount']): string {
  if (value === null) return 'nothing';
  return 'rupees' in value ? `Rs ${formatPrice(value.rupees)}` : `${value.pct} %`;
}

/**
 * What a retail allotment pays. UNIFORM: the T-day cut-off less the retail discount, known as soon as the T
 * allocation has found the cut-off (a retail bidder knows it before bidding on T+1); BID: its own price
 * less the discount.
 */
export function retailPriceText(offer: OfsOffer): string {
  const off = discountOff(offer.retail_discount);
  if (offer.retail_allocation_price === 'BID') return `each allotment at its bid price less ${off}`;
  if (offer.retail_price === null)
    return `not known yet: the T-day cut-off less ${off}, once the T allocation finds it`;
  return `${formatPrice(offer.retail_price)}: the T-day cut-off ${formatPrice(offer.t_cutoff_price)} less ${off}`;
}

/** How much of the green shoe is exercised: "1,000 of 2,000 shares exercised", "2,000 shares, not exercised". */
function greenShoeExercised(offer: OfsOffer): string {
  const { green_shoe_quantity: size, green_shoe_exercised: exercised } = offer;
  return exercised === 0
    ? `${formatQuantity(size)} shares, not exercised`
    : `${formatQuantity(exercised)} of ${formatQuantity(size)} shares exercised`;
}

/** The deadline of the seller's decision: its time alone when it falls on day T (17:00 IST by default), else its day too. */
const decisionDeadline = (offer: OfsOffer) =>
  sameIndiaDay(offer.green_shoe_decision_by, offer.t_day.closes_at)
    ? formatTimeOfDay(offer.green_shoe_decision_by)
    : formatDayTime(offer.green_shoe_decision_by);

/**
 * The green shoe: how much of it is exercised, and whose decision that is: the seller's, recorded by the
 * operator (when), or the import's default, which may still change until the deadline and stands after it.
 */
export function greenShoeText(offer: OfsOffer): string {
  if (offer.green_shoe_quantity === 0) return 'none';
  const exercised = greenShoeExercised(offer);
  if (offer.green_shoe_decided_at !== null)
    return `${exercised}; decided by the seller, ${formatInstant(offer.green_shoe_decided_at)}`;
  // Past the deadline (or once the T allocation has fixed it) the default is the decision.
  const settled =
    serverNow() >= parseInstant(offer.green_shoe_decision_by) ||
    !(offer.state === 'ANNOUNCED' || offer.state === 'T_OPEN');
  return settled
    ? `${exercised}; the default (the seller did not decide by ${decisionDeadline(offer)})`
    : `${exercised}; default, seller decides by ${decisionDeadline(offer)}`;
}

/** The notice while the T allocation waits for the seller's green-shoe decision (null when it does not). */
export function awaitingGreenShoeText(offer: OfsOffer): string | null {
  if (offer.awaiting_green_shoe_until === null) return null;
  return `T closed: the T allocation waits for the seller's green-shoe decision until ${formatTimeOfDay(offer.awaiting_green_shoe_until)}; the default then stands (${greenShoeExercised(offer)})`;
}

/** The offer in shares: the base and the green shoe exercised, and whether the portions are the notice's printed figures. */
export function offerSizeText(offer: OfsOffer): string {
  const { portions } = offer;
  const greenShoe =
    offer.green_shoe_exercised === 0 ? '' : ` + green shoe ${formatQuantity(offer.green_shoe_exercised)}`;
  const source =
    portions.source === 'notice' ? 'portions as the notice prints them' : 'portions computed from the terms';
  return `${formatQuantity(portions.total)} shares (base ${formatQuantity(offer.base_quantity)}${greenShoe}); ${source}`;
}

/** The employee portion, on top of the total, with its part of the green shoe (in the portion once exercised). */
function employeeText(offer: OfsOffer): string {
  const { employee } = offer.portions;
  if (employee === 0) return 'none';
  const fromGreenShoe = employee - offer.employee_quantity;
  const part =
    offer.employee_green_shoe_quantity === 0
      ? ''
      : fromGreenShoe > 0
        ? ` (${formatQuantity(offer.employee_quantity)} + ${formatQuantity(fromGreenShoe)} of the green shoe)`
        : ` (their ${formatQuantity(offer.employee_green_shoe_quantity)} of the green shoe not exercised)`;
  return `${formatQuantity(employee)} shares${part}, discount ${discount(offer.employee_discount)}`;
}

/**
 * When the allotments are paid out: by trading day (13:30 IST on the trading day after T, and after T+1),
 * or, for a drill offer, so many seconds after each allotment.
 */
export function settlementText(offer: OfsOffer): string {
  const dates = offer.settlement_dates;
  if (dates !== null)
    return `T-day allotments paid out ${formatDayTime(dates.t_day)}; T+1 allotments ${formatDayTime(dates.t1_day)}`;
  const seconds = /^(\d+)s$/.exec(offer.settlement)?.[1];
  return seconds === undefined ? offer.settlement : `a drill: settles ${seconds} s after each allotment`;
}

type Figures = Pick<NonNullable<OfsOffer['indicative']>, 'price' | 'quantity'>;
const figuresText = (figures: Figures) =>
  figures.price === null
    ? 'no valid bid'
    : `${formatPrice(figures.price)} on ${formatQuantity(figures.quantity)} shares`;

/** Whether day T is over: its close has passed by the server's clock, or the offer has moved past T. */
export const tClosed = (offer: OfsOffer, now: number): boolean =>
  !(offer.state === 'ANNOUNCED' || offer.state === 'T_OPEN') || now >= parseInstant(offer.t_day.closes_at);

/** The heading of the indicative figures: live through T, then kept as the final figures of T's close. */
const indicativeTitle = (offer: OfsOffer, now: number) =>
  tClosed(offer, now)
    ? `Final indicative price at T close ${formatTimeOfDay(offer.t_day.closes_at)}`
    : 'Indicative price';

/**
 * Day T's indicative price, by margin type, and its chart once a price has been published: live through T,
 * then kept, labelled as the final T-day figures, through T+1 and after the allocations. Null before T, and
 * after T when none was ever published.
 */
function indicativeSection(offer: OfsOffer, history: readonly IndicativePoint[], now: number): HTMLElement | null {
  if (offer.state === 'ANNOUNCED') return null;
  const closed = tClosed(offer, now);
  if (offer.state !== 'T_OPEN' && offer.indicative === null) return null;
  const slug = offer.offer_id.replace(/\W/g, '-');
  const headingId = `indicative-${slug}`;
  const { indicative } = offer;
  const caption = closed
    ? `The indicative price of ${offer.symbol} through day T to its close, against the floor of ${formatPrice(offer.floor_price)}`
    : `The indicative price of ${offer.symbol} through day T, against the floor of ${formatPrice(offer.floor_price)}`;
  const width = chartWidth(560);
  return h(
    'section',
    { class: closed ? 'indicative final' : 'indicative', 'aria-labelledby': headingId },
    h('h4', { id: headingId }, indicativeTitle(offer, now)),
    indicative === null
      ? h(
          'p',
          {},
          closed
            ? 'None was published: no valid non-retail bid on T.'
            : 'Not published yet: the exchange publishes it from the first valid non-retail bid.',
        )
      : h(
          'dl',
          { class: 'facts' },
          h('dt', {}, 'All non-retail bids'),
          h('dd', { 'data-indicative': 'all' }, figuresText(indicative)),
          h('dt', {}, '100 % margin'),
          h('dd', { 'data-indicative': 'margin_100' }, figuresText(indicative.margin_100)),
          h('dt', {}, '0 % margin'),
          h('dd', { 'data-indicative': 'margin_0' }, figuresText(indicative.margin_0)),
          h('dt', {}, 'Published'),
          h('dd', {}, formatInstant(indicative.at)),
        ),
    history.every((point) => point.price === null)
      ? null
      : h(
          'figure',
          { class: 'chart' },
          indicativeChart(history, offer.floor_price, caption, `indicative-chart-${slug}`, width, offer.tick_size),
          h('figcaption', {}, caption),
        ),
  );
}

/** A notice of what the offer waits for (null: none), marked with what it is about. */
export const offerNotice = (text: string | null, about: string): HTMLElement | null =>
  text === null ? null : h('p', { class: 'offer-notice', 'data-notice': about }, text);

/** "1.8", "0.45", "12": a ratio to two decimals at most. */
const times = (ratio: number) => String(Number(ratio.toFixed(2)));

/** One margin type's cumulative shares: "100 % margin: 1,575 shares", "0 % margin: no bids". */
const marginLine = (label: string, figures: Figures) =>
  `${label}: ${figures.quantity === 0 ? 'no bids' : `${formatQuantity(figures.quantity)} shares`}`;

/** The caller's live bids in the offer, each at its price (a cut-off bid at the T-day cut-off, left out while that is not known). */
function ownBids(offer: OfsOffer, context: ConsoleContext): StripBid[] {
  return context.orders
    .list()
    .filter((order) => order.offer_id === offer.offer_id && isOpen(order) && order.pending_quantity > 0)
    .map((order) => ({
      quantity: order.pending_quantity,
      price: order.order_type === 'RL-MKT' ? Number(offer.t_cutoff_price ?? NaN) : Number(order.order_price),
    }))
    .filter((bid) => Number.isFinite(bid.price) && bid.price > 0);
}

/**
 * What the exchanges publish of an offer's demand, for traders: the indicative price and the cumulative
 * shares bid, all and by margin type; no demand by price (docs/design/console.md). So: the non-retail shares
 * bid against the non-retail portion, how many times it is subscribed, each margin type's shares, and the
 * caller's own live bids against the indicative price and the floor on one price axis. Null until a figure
 * is published.
 */
function demandSection(offer: OfsOffer, bids: readonly StripBid[], now: number): HTMLElement | null {
  const { indicative, portions } = offer;
  if (indicative === null || offer.state === 'ANNOUNCED') return null;
  const slug = offer.offer_id.replace(/\W/g, '-');
  const headingId = `demand-${slug}`;
  const closed = tClosed(offer, now);
  const subscribed =
    portions.non_retail > 0 ? `: subscribed ${times(indicative.quantity / portions.non_retail)} times` : '';
  const caption = `Your live bids in ${offer.symbol} against the ${closed ? 'final ' : ''}indicative price and the floor`;
  return h(
    'section',
    { class: 'published-demand', 'aria-labelledby': headingId },
    h('h4', { id: headingId }, closed ? 'Published demand at T close' : 'Published demand'),
    h(
      'p',
      { 'data-demand': 'non_retail' },
      `${formatQuantity(indicative.quantity)} shares bid against the non-retail portion of ${formatQuantity(portions.non_retail)}${subscribed}`,
    ),
    h(
      'ul',
      { class: 'margins', 'aria-label': 'By margin type' },
      h('li', { 'data-demand': 'margin_100' }, marginLine('100 % margin', indicative.margin_100)),
      h('li', { 'data-demand': 'margin_0' }, marginLine('0 % margin', indicative.margin_0)),
    ),
    h(
      'p',
      { class: 'hint' },
      'The exchanges publish only these totals and the indicative price, not the demand at each price.',
    ),
    bids.length === 0
      ? null
      : h(
          'figure',
          { class: 'chart strip' },
          priceStrip(
            {
              floor: offer.floor_price,
              tick: offer.tick_size,
              indicative: indicative.price,
              cutoff: offer.t_cutoff_price,
              bids,
            },
            caption,
            `price-strip-${slug}`,
            chartWidth(560),
          ),
          h('figcaption', {}, caption),
        ),
  );
}

/**
 * The banner once the T allocation has found the cut-off, until T+1 closes: what it is, what it means for
 * retail bids, and T+1's opening (or close); `left`, the countdown, apart (it ticks; the rest is read once).
 */
export function cutoffBanner(offer: OfsOffer, now: number): { text: string; left: string } | null {
  if (offer.t_cutoff_price === null || !(offer.state === 'T_ALLOCATED' || offer.state === 'T1_OPEN')) return null;
  const cutoff = `Rs ${formatPrice(offer.t_cutoff_price)}`;
  const opens = parseInstant(offer.t1_day.opens_at);
  const closes = parseInstant(offer.t1_day.closes_at);
  if (now < opens)
    return {
      text: `T-day cut-off ${cutoff} found \u00b7 retail bids on T+1 at or above it \u00b7 T+1 opens ${formatDayTime(offer.t1_day.opens_at)}`,
      left: `(in ${formatDuration(opens - now)})`,
    };
  if (now >= closes) return null;
  return {
    text: `T-day cut-off ${cutoff} \u00b7 retail bids at or above it \u00b7 T+1 open until ${formatTimeOfDay(offer.t1_day.closes_at)}`,
    left: `(closes in ${formatDuration(closes - now)})`,
  };
}

/**
 * The figures a trader acts on, above the ticket: the indicative price (live, or final after T), the floor
 * until the T-day cut-off is known, then the retail price an allotment pays.
 */
function keyFacts(offer: OfsOffer, now: number): HTMLElement {
  const { indicative } = offer;
  const closed = tClosed(offer, now);
  const indicativeText =
    indicative === null || indicative.price === null
      ? closed
        ? 'none published on T'
        : 'not published yet'
      : `${figuresText(indicative)}${closed ? ' (final)' : ''}`;
  return h(
    'dl',
    { class: 'facts key-facts' },
    offer.t_cutoff_price === null ? h('dt', {}, 'Floor price') : h('dt', {}, 'Retail price'),
    offer.t_cutoff_price === null
      ? h('dd', { 'data-key': 'floor' }, formatPrice(offer.floor_price))
      : h(
          'dd',
          { 'data-key': 'retail_price' },
          offer.retail_price === null
            ? retailPriceText(offer)
            : `${formatPrice(offer.retail_price)} (the cut-off less ${discountOff(offer.retail_discount)})`,
        ),
    offer.state === 'ANNOUNCED' ? null : h('dt', {}, 'Indicative price'),
    offer.state === 'ANNOUNCED' ? null : h('dd', { 'data-key': 'indicative' }, indicativeText),
  );
}

/** The top of the card, drawn again whenever the offer changes: where it stands, what it waits for, the key figures. */
function offerHead(offer: OfsOffer): (HTMLElement | null)[] {
  return [
    h('p', { class: 'offer-state', 'data-state': offer.state }, offerStateText(offer)),
    offerNotice(offer.awaiting_operator ? AWAITING_OPERATOR : null, 'operator'),
    offerNotice(awaitingGreenShoeText(offer), 'green-shoe'),
  ];
}

/** The offer's static terms, folded under "Offer terms": portions, discounts, green shoe, prices found, pay-outs, listings, days. */
function offerTerms(offer: OfsOffer): (HTMLElement | null)[] {
  const { portions } = offer;
  const listings = offer.listings.map((listing) =>
    h(
      'li',
      {},
      h('strong', {}, `${listing.exchange} ${listing.scrip_token}: `),
      `retail ${listing.series.RETAIL}, non-retail ${listing.series.NON_RETAIL}`,
      listing.series.EMPLOYEE === null ? '' : `, employees ${listing.series.EMPLOYEE}`,
    ),
  );
  return [
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Floor price'),
      h('dd', {}, formatPrice(offer.floor_price)),
      h('dt', {}, 'Tick'),
      h('dd', {}, formatPrice(offer.tick_size)),
      h('dt', {}, 'Offer'),
      h('dd', { 'data-fact': 'offer', 'data-portions-source': portions.source }, offerSizeText(offer)),
      h('dt', {}, 'Green shoe'),
      h('dd', { 'data-fact': 'green-shoe' }, greenShoeText(offer)),
      h('dt', {}, 'Retail'),
      h(
        'dd',
        {},
        `${formatQuantity(portions.retail_reserved)} shares (${offer.retail_reserve_pct}%), discount ${discount(offer.retail_discount)}, ${offer.retail_allocation_price} price`,
      ),
      h('dt', {}, 'Non-retail'),
      h(
        'dd',
        {},
        `${formatQuantity(portions.non_retail)} shares, of which ${formatQuantity(portions.mf_ic_reserved)} for MF and IC first; at most ${formatQuantity(portions.single_bidder_cap)} to one bidder`,
      ),
      h('dt', {}, 'Employees'),
      h('dd', { 'data-fact': 'employees' }, employeeText(offer)),
      h('dt', {}, 'T-day cut-off'),
      h('dd', { 'data-fact': 't_cutoff' }, notKnown(offer.t_cutoff_price)),
      h('dt', {}, 'Retail price'),
      h('dd', { 'data-fact': 'retail_price' }, retailPriceText(offer)),
      h('dt', {}, 'Employee price'),
      h('dd', {}, portions.employee === 0 ? 'none' : notKnown(offer.employee_price)),
      h('dt', {}, 'Retail cut-off'),
      h('dd', {}, notKnown(offer.retail_cutoff_price)),
      h('dt', {}, 'Allocation'),
      h('dd', {}, offer.allocation),
      h('dt', {}, 'Settlement'),
      h('dd', { 'data-fact': 'settlement' }, settlementText(offer)),
    ),
    h('ul', { class: 'listings', 'aria-label': 'Listings' }, listings),
    h(
      'ul',
      { class: 'windows', 'aria-label': 'Days' },
      h(
        'li',
        {},
        h('strong', {}, 'Day T (non-retail): '),
        `${formatInstant(offer.t_day.opens_at)} to ${formatInstant(offer.t_day.closes_at)}`,
      ),
      h(
        'li',
        {},
        h('strong', {}, 'Day T+1 (retail, employees, carried forward): '),
        `${formatInstant(offer.t1_day.opens_at)} to ${formatInstant(offer.t1_day.closes_at)}`,
      ),
    ),
  ];
}

/** Why the card has no bid form: when the user's bids are taken, or that they no longer are. */
function closedNote(offer: OfsOffer, context: ConsoleContext): HTMLElement {
  if (offer.state === 'CANCELLED' || offer.state === 'ALLOCATED')
    return h('p', { class: 'bid-note' }, 'The offer takes no more bids.');
  if (isNonRetailUser(context.session.offerCategory)) {
    return h(
      'p',
      { class: 'bid-note' },
      `Your non-retail bids are taken on day T, ${formatInstant(offer.t_day.opens_at)} to ${formatInstant(offer.t_day.closes_at)}. On T+1, carry a bid's unallotted shares forward from Orders.`,
    );
  }
  return h(
    'p',
    { class: 'bid-note' },
    `Your retail (and, if registered, employee) bids are taken on day T+1, ${formatInstant(offer.t1_day.opens_at)} to ${formatInstant(offer.t1_day.closes_at)}, once the T-day cut-off is known.`,
  );
}

/** The Rs 2,00,000 a retail bidder's live bids in one offer may total, across its listings. */
const RETAIL_LIMIT_RUPEES = 200_000;
/** The Rs 5,00,000 an employee's bids in one offer may total, valued at the T-day cut-off. */
const EMPLOYEE_LIMIT_RUPEES = 500_000;

/** What the bid tickets of the view share: the caller's funds (read again when an order changes), and each ticket's redraw. */
interface TicketShared {
  /** undefined: not read yet (or the read failed). */
  balance: Balance | undefined;
  /** Each ticket's redraw of its figures, run each second (the countdowns) and when funds or orders change. */
  redraws: Set<() => void>;
}

/** The value of the caller's live bids of one category in the offer, on every listing (cut-off bids at the T-day cut-off). */
function liveBidsValue(offer: OfsOffer, context: ConsoleContext, category: string): number {
  const cutoff = Number(offer.t_cutoff_price ?? 0);
  return context.orders
    .list()
    .filter((order) => order.offer_id === offer.offer_id && order.bid_category === category && isOpen(order))
    .reduce(
      (sum, order) =>
        sum + order.pending_quantity * (order.order_type === 'RL-MKT' ? cutoff : Number(order.order_price)),
      0,
    );
}

/** "Day T closes at 15:30 IST, in 1 h 15 min; T+1 opens Wed 2 Dec 09:15 IST, in 19 h 00 min." */
function countdownText(offer: OfsOffer, onT: boolean, now: number): string {
  const day = onT ? offer.t_day : offer.t1_day;
  const parts = [
    `Day ${onT ? 'T' : 'T+1'} closes at ${formatTimeOfDay(day.closes_at)}, in ${formatDuration(parseInstant(day.closes_at) - now)}`,
  ];
  const t1Opens = parseInstant(offer.t1_day.opens_at);
  if (now < t1Opens)
    parts.push(`T+1 opens ${formatDayTime(offer.t1_day.opens_at)}, in ${formatDuration(t1Opens - now)}`);
  return `${parts.join('; ')}.`;
}

/**
 * A bid ticket in the offer: the listing and what the user bids as (the choices open now) give the series.
 * Employees bid at the cut-off only; retail at a price at or above the T-day cut-off, or at the cut-off;
 * non-retail at a price at or above the floor. Under the fields: the order value, the funds available and
 * what the bid blocks, the retail (or employee) limit left across the listings, and the countdowns to the
 * day's close and T+1's opening. "Review bid" asks first; the outcome follows the order until the OMS has
 * decided.
 */
function bidForm(
  current: () => OfsOffer,
  choices: BidAs[],
  context: ConsoleContext,
  shared: TicketShared,
): { form: HTMLFormElement; redraw: () => void } {
  const offer = current();
  const bidAs = select(
    'bid_as',
    choices.map((choice) => [choice, BID_AS_LABELS[choice]]),
  );
  const listing = select('listing', []);
  const series = h('input', { name: 'series', readonly: true });
  const quantity = h('input', {
    name: 'quantity',
    type: 'number',
    inputmode: 'numeric',
    min: 1,
    step: 1,
    required: true,
    value: 10,
  });
  const price = h('input', {
    name: 'price',
    type: 'number',
    inputmode: 'decimal',
    min: 0,
    step: 'any',
    required: true,
  });
  const priceField = field('Price (Rs)', price, '');
  const seriesField = field('Series', series, 'From the listing and what you bid as');
  seriesField.classList.add('series-field');
  const priceHint = priceField.querySelector('small')!;
  const cutOff = h('input', { name: 'cut_off', type: 'checkbox' });
  const cutOffField = h('div', { class: 'field checkbox' }, h('label', {}, cutOff, ' Bid at the cut-off price'));
  const tag = h('input', { name: 'order_identifier', maxlength: 10, autocomplete: 'off' });
  const status = statusLine();
  status.classList.add('outcome');
  const submit = h('button', { type: 'submit' }, 'Review bid');
  const value = h('p', { 'data-ticket': 'value' });
  const funds = h('p', { 'data-ticket': 'funds' });
  const limit = h('p', { 'data-ticket': 'limit' });
  // Not a live region: it ticks each second.
  const countdown = h('p', { 'data-ticket': 'countdown', class: 'countdown' });
  const figures = h('div', { class: 'bid-ticket', 'aria-live': 'polite' }, value, funds, limit);
  const confirmation = h('div', { class: 'bid-confirm', hidden: true });

  const chosen = () => bidAs.value as BidAs;
  const chosenListing = () => offer.listings.find((l) => `${l.exchange}:${l.scrip_token}` === listing.value);
  const atCutOff = () => chosen() === 'EMPLOYEE' || (chosen() === 'RETAIL' && cutOff.checked);
  const syncSeries = () => {
    const chosenOne = chosenListing();
    series.value = chosenOne === undefined ? '' : (seriesFor(chosenOne, chosen()) ?? '');
  };
  const syncPrice = () => {
    price.disabled = atCutOff();
    if (price.disabled) price.value = '';
    else if (price.value === '')
      price.value = formatPrice(
        chosen() === 'RETAIL' ? (offer.t_cutoff_price ?? offer.floor_price) : offer.floor_price,
      );
  };
  /** Each share's price: the bid's, or the T-day cut-off for a cut-off bid (null: not known). */
  const unitPrice = (): number | null => {
    const each = atCutOff() ? Number(current().t_cutoff_price ?? NaN) : price.valueAsNumber;
    return Number.isFinite(each) && each > 0 ? each : null;
  };
  const shares = () =>
    Number.isInteger(quantity.valueAsNumber) && quantity.valueAsNumber > 0 ? quantity.valueAsNumber : null;
  /** The bid's value, quantity x price, as "1000.00" (null: not known yet). */
  const bidValue = (): string | null => {
    const q = shares();
    const each = unitPrice();
    return q === null || each === null ? null : amountOf(q, each);
  };
  /** What the bid blocks of the caller's funds (null: not funds-checked, or not known). */
  const blocks = (): string | null => (shared.balance?.funds_checked === true ? bidValue() : null);

  const redraw = () => {
    const now = current();
    const q = shares();
    const each = unitPrice();
    const rupees = bidValue();
    value.textContent =
      rupees === null || q === null || each === null
        ? 'Order value: enter a quantity and a price.'
        : `Order value: ${formatRupees(rupees)} (${formatQuantity(q)} \u00d7 ${atCutOff() ? `the T-day cut-off ${formatPrice(each)}` : formatPrice(each)})`;
    const balance = shared.balance;
    if (balance === undefined) funds.textContent = 'Funds available: reading...';
    else if (!balance.funds_checked) funds.textContent = 'You have no funds account: your bids are not funds-checked.';
    else {
      const available = `Funds available: ${formatRupees(balance.available)}`;
      funds.textContent =
        rupees === null
          ? `${available}.`
          : Number(rupees) > Number(balance.available)
            ? `${available}; this bid blocks ${formatRupees(rupees)}: more than you have, so the OMS would reject it.`
            : `${available}; this bid blocks ${formatRupees(rupees)} of them.`;
    }
    const as = chosen();
    const exchanges = [...new Set(now.listings.map((l) => l.exchange.replace(/_EQ$/, '')))].join(' and ');
    if (as === 'RETAIL' || as === 'EMPLOYEE') {
      const [name, most, category] =
        as === 'RETAIL'
          ? (['Retail', RETAIL_LIMIT_RUPEES, 'RETAIL'] as const)
          : (['Employee', EMPLOYEE_LIMIT_RUPEES, 'EMPLOYEE'] as const);
      const left = Math.max(0, most - liveBidsValue(now, context, category));
      const over = rupees !== null && Number(rupees) > left ? ' This bid is over it: lower it.' : '';
      limit.textContent = `${name} limit left: ${formatRupees(left)} of ${formatRupees(most).replace(/\.00$/, '')} (your live ${name.toLowerCase()} bids in ${now.symbol} on ${exchanges}).${over}`;
      limit.hidden = false;
    } else {
      limit.textContent = '';
      limit.hidden = true;
    }
    countdown.textContent = countdownText(now, as === 'NON_RETAIL', serverNow());
  };

  /** What the user bids as decides the listings (employees: those with an employee series), the series and the price rules. */
  const syncBidAs = () => {
    const as = chosen();
    const listings = offer.listings.filter((l) => seriesFor(l, as) !== null);
    listing.replaceChildren(
      ...listings.map((l) =>
        h('option', { value: `${l.exchange}:${l.scrip_token}` }, `${l.exchange} ${l.scrip_token}`),
      ),
    );
    cutOffField.hidden = as !== 'RETAIL';
    priceHint.textContent =
      as === 'EMPLOYEE'
        ? `Employees bid at the cut-off only, and pay the employee price ${notKnown(offer.employee_price)}`
        : as === 'RETAIL'
          ? `At or above the T-day cut-off ${notKnown(offer.t_cutoff_price)}; tick ${formatPrice(offer.tick_size)}${offer.retail_price === null ? '' : `; an allotment pays the retail price ${formatPrice(offer.retail_price)}`}`
          : `At or above the floor ${formatPrice(offer.floor_price)}; tick ${formatPrice(offer.tick_size)}; no cut-off bids`;
    price.value = '';
    syncSeries();
    syncPrice();
    redraw();
  };
  bidAs.addEventListener('change', syncBidAs);
  listing.addEventListener('change', syncSeries);
  cutOff.addEventListener('change', () => {
    syncPrice();
    redraw();
  });
  for (const control of [quantity, price]) control.addEventListener('input', redraw);

  const controls = { quantity, price, order_identifier: tag };
  const editing = (on: boolean) => {
    confirmation.hidden = on;
    submit.hidden = !on;
    for (const control of [bidAs, listing, quantity, price, cutOff, tag])
      control.disabled = !on || (control === price && atCutOff());
  };
  const bodyOf = (chosenOne: OfsListing) => ({
    scrip_info: {
      exchange: chosenOne.exchange,
      scrip_token: chosenOne.scrip_token,
      symbol: offer.symbol,
      series: series.value,
    },
    transaction_type: 'BUY',
    product_type: 'OFS',
    order_type: atCutOff() ? 'RL-MKT' : 'RL',
    quantity: String(quantity.valueAsNumber),
    price: atCutOff() ? 0 : price.valueAsNumber,
    ...(tag.value.trim() === '' ? {} : { order_identifier: tag.value.trim() }),
  });

  const form = h(
    'form',
    {
      class: 'bid-form',
      'aria-label': `Bid in ${offer.symbol} (${offer.offer_id})`,
      onSubmit: (event: Event) => {
        event.preventDefault();
        const chosenOne = chosenListing();
        if (chosenOne === undefined || series.value === '') return;
        // Asked first: what the bid is, what it costs and blocks; then Confirm or Change.
        const body = bodyOf(chosenOne);
        const rupees = bidValue();
        const blocked = blocks();
        const balance = shared.balance;
        const terms = atCutOff() ? 'at the cut-off price' : `at ${formatPrice(price.valueAsNumber)}`;
        const cost =
          rupees === null
            ? ''
            : `: ${formatRupees(rupees)}${blocked === null || balance === undefined ? '' : `, blocking ${formatRupees(blocked)} of your ${formatRupees(balance.available)} available`}`;
        const confirm = h('button', { type: 'button', class: 'primary' }, 'Confirm bid');
        const change = h('button', { type: 'button' }, 'Change');
        confirm.addEventListener('click', () => {
          editing(true);
          const now = current();
          placeBid(body, status, submit, {
            controls,
            terms: {
              tick: now.tick_size,
              floor: now.floor_price,
              cutoff: now.t_cutoff_price,
              cutoffName: 'T-day cut-off price',
            },
            follow: context.orders,
            blocks: blocked === null ? null : formatRupees(blocked),
            placed: () => {
              quantity.value = '';
              tag.value = '';
              redraw();
            },
          });
        });
        change.addEventListener('click', () => {
          editing(true);
          quantity.focus();
        });
        confirmation.replaceChildren(
          h(
            'p',
            {},
            `Buy ${formatQuantity(quantity.valueAsNumber)} ${offer.symbol} (${series.value}, ${chosenOne.exchange}) ${terms} as ${BID_AS_WORDS[chosen()]}${cost}?`,
          ),
          confirm,
          change,
        );
        editing(false);
        confirm.focus();
      },
    },
    h('div', { class: 'field-row' }, field('Bid as', bidAs), field('Listing', listing), seriesField),
    h(
      'div',
      { class: 'field-row' },
      field('Quantity', quantity),
      priceField,
      cutOffField,
      field('Your tag (optional)', tag),
    ),
    figures,
    countdown,
    submit,
    confirmation,
    status,
  );
  syncBidAs();
  return { form, redraw };
}

/** What a bid is made as, in a sentence: "as non-retail". */
const BID_AS_WORDS: Record<BidAs, string> = {
  RETAIL: 'retail',
  NON_RETAIL: 'non-retail',
  EMPLOYEE: 'an employee, at the cut-off',
};

/**
 * An offer's card: its parts drawn again when the offer changes (the head, the key figures, the record of
 * the indicative price and the published demand, the terms' content), the banner and the terms' disclosure
 * kept (so that a disclosure the user opened or closed stays so), and the bid area, kept while the bids open
 * stay the same.
 */
interface OfferCard {
  element: HTMLElement;
  head: HTMLElement;
  banner: { element: HTMLElement; text: HTMLElement; left: HTMLElement };
  keys: HTMLElement;
  record: HTMLElement;
  terms: HTMLElement;
  bids: HTMLElement;
  /** The offer and history the facts were drawn from, to tell a changed offer. */
  drawn: string;
  /** The bids the form was drawn for ("" for none), so that a bid being typed survives the reads. */
  bidKey: string | null;
  offer: OfsOffer;
  /** The bid ticket's redraw, while the card has one. */
  redraw: (() => void) | null;
}

export function offersView(context: ConsoleContext): View {
  const list = h('div', { class: 'cards' }, h('p', {}, 'Loading the OFS offers...'));
  const readAt = h('p', { class: 'read-at' });
  /** The cut-off's banner of each offer that has one, at the list's top: the one status line that says it aloud. */
  const listBanner = h('p', { role: 'status', class: 'offers-banner' });
  /** Each offer's indicative prices once T has closed: they no longer change. */
  const finalHistories = new Map<string, readonly IndicativePoint[]>();
  const cards = new Map<string, OfferCard>();
  let disposed = false;
  const shared: TicketShared = { balance: undefined, redraws: new Set() };
  const redrawTickets = () => {
    for (const redraw of shared.redraws) redraw();
  };
  /** The caller's funds, for the tickets: read now, and again (once) after each burst of order changes. */
  let fundsTimer: ReturnType<typeof setTimeout> | undefined;
  const readFunds = () => {
    clearTimeout(fundsTimer);
    fundsTimer = setTimeout(() => {
      readData((client) => client.balance())
        .then((balance) => {
          shared.balance = balance;
          if (!disposed) redrawTickets();
        })
        .catch(() => undefined);
    }, 200);
  };
  readFunds();
  const unsubscribe = context.orders.subscribe(() => {
    redrawTickets();
    readFunds();
  });
  // The countdowns tick.
  const ticker = setInterval(() => {
    redrawTickets();
    drawBanners();
  }, 1000);

  function cardFor(offer: OfsOffer): OfferCard {
    const headingId = `offer-${offer.offer_id.replace(/\W/g, '-')}`;
    const head = h('div');
    const bannerText = h('span', {});
    const bannerLeft = h('span', { class: 'countdown' });
    const banner = h(
      'p',
      { class: 'offer-banner', 'data-banner': 't-cutoff', hidden: true },
      bannerText,
      ' ',
      bannerLeft,
    );
    const keys = h('div');
    const record = h('div', { class: 'offer-record' });
    const terms = h('div');
    // Closed on a phone, where the ticket and the indicative price come first; open on a wider screen.
    const details = h(
      'details',
      { class: 'offer-terms', open: !window.matchMedia(PHONE_QUERY).matches },
      h('summary', {}, 'Offer terms'),
      terms,
    );
    const bids = h('div');
    // Operators read the offer's book from its card (the server refuses it to anyone else).
    const bookLink = context.session.operator
      ? h(
          'p',
          { class: 'offer-links' },
          h('a', { href: offerBookPath(offer.offer_id) }, `Book of ${offer.symbol} (${offer.offer_id})`),
        )
      : null;
    const element = h(
      'article',
      { class: 'card offer', 'aria-labelledby': headingId, 'data-offer': offer.offer_id },
      h('h3', { id: headingId }, `${offer.symbol} (${offer.offer_id})`),
      bookLink,
      head,
      banner,
      keys,
      bids,
      record,
      details,
    );
    return {
      element,
      head,
      banner: { element: banner, text: bannerText, left: bannerLeft },
      keys,
      record,
      terms,
      bids,
      drawn: '',
      bidKey: null,
      offer,
      redraw: null,
    };
  }

  /** The card's banner and the list's status line: the cut-off's banner of each offer that has one. */
  function drawBanners(): void {
    const now = serverNow();
    const lines: string[] = [];
    for (const card of cards.values()) {
      const banner = cutoffBanner(card.offer, now);
      card.banner.element.hidden = banner === null;
      const text = banner?.text ?? '';
      if (card.banner.text.textContent !== text) card.banner.text.textContent = text;
      const left = banner?.left ?? '';
      if (card.banner.left.textContent !== left) card.banner.left.textContent = left;
      if (banner !== null) lines.push(`${card.offer.symbol}: ${banner.text}.`);
    }
    // Set only when it says something new: a status line is read aloud at each change.
    const said = lines.join(' ');
    if (listBanner.textContent !== said) listBanner.textContent = said;
  }

  /**
   * Draws what changed of one offer, and says aloud what a reader of the page would notice: a new state,
   * the wait for the seller's green-shoe decision or for the operator, the seller's decision once recorded.
   */
  function update(card: OfferCard, offer: OfsOffer, history: readonly IndicativePoint[]): void {
    const previous = card.offer;
    card.offer = offer;
    const now = serverNow();
    const bids = ownBids(offer, context);
    const drawn = JSON.stringify([offer, history, bids, tClosed(offer, now)]);
    if (drawn !== card.drawn) {
      const present = (nodes: (HTMLElement | null)[]) => nodes.filter((node): node is HTMLElement => node !== null);
      card.head.replaceChildren(...present(offerHead(offer)));
      card.keys.replaceChildren(keyFacts(offer, now));
      card.record.replaceChildren(
        ...present([indicativeSection(offer, history, now), demandSection(offer, bids, now), allotmentSection(offer)]),
      );
      card.terms.replaceChildren(...present(offerTerms(offer)));
      // The T allocation's outcome is said by the list's status line, with the cut-off (drawBanners).
      const saidByBanner = offer.state === 'T_ALLOCATED' && cutoffBanner(offer, now) !== null;
      if (card.drawn !== '' && previous.state !== offer.state && !saidByBanner)
        context.announce(`Offer ${offer.symbol} (${offer.offer_id}): ${STATES[offer.state]}`);
      if (offer.awaiting_operator && !(card.drawn !== '' && previous.awaiting_operator))
        context.announce(`Offer ${offer.symbol} (${offer.offer_id}): ${AWAITING_OPERATOR}`);
      const waiting = awaitingGreenShoeText(offer);
      if (
        waiting !== null &&
        !(card.drawn !== '' && previous.awaiting_green_shoe_until === offer.awaiting_green_shoe_until)
      )
        context.announce(`Offer ${offer.symbol} (${offer.offer_id}): ${waiting}`);
      if (card.drawn !== '' && previous.green_shoe_decided_at === null && offer.green_shoe_decided_at !== null)
        context.announce(
          `Offer ${offer.symbol} (${offer.offer_id}): the seller's green-shoe decision: ${greenShoeExercised(offer)}`,
        );
      card.drawn = drawn;
    }
    const choices = openBids(offer, context.session.offerCategory, serverNow());
    const bidKey = choices.join();
    if (bidKey !== card.bidKey) {
      if (card.redraw !== null) shared.redraws.delete(card.redraw);
      card.redraw = null;
      if (choices.length === 0) card.bids.replaceChildren(closedNote(offer, context));
      else {
        const ticket = bidForm(() => card.offer, choices, context, shared);
        card.bids.replaceChildren(ticket.form);
        card.redraw = ticket.redraw;
        shared.redraws.add(ticket.redraw);
      }
      card.bidKey = bidKey;
    }
  }

  async function read(): Promise<void> {
    const offers = await loadOffers();
    // Through T the indicative price changes: its history is read again. Once T has closed it is final:
    // read once (the first read after the close) and kept. Offers with no indicative price need no second read.
    const histories = new Map(
      await Promise.all(
        offers
          .filter((offer) => offer.state === 'T_OPEN' || offer.indicative !== null)
          .map(async (offer) => {
            const kept = finalHistories.get(offer.offer_id);
            if (kept !== undefined) return [offer.offer_id, kept] as const;
            const history = (await loadOffer(offer.offer_id)).indicative_history;
            // Kept from the T allocation on: by then the OMS has published the last of T's figures.
            if (offer.state !== 'T_OPEN') finalHistories.set(offer.offer_id, history);
            return [offer.offer_id, history] as const;
          }),
      ),
    );
    if (disposed) return;
    const before = [...cards.keys()].join('\n');
    for (const offer of offers) {
      const card = cards.get(offer.offer_id) ?? cardFor(offer);
      cards.set(offer.offer_id, card);
      update(card, offer, histories.get(offer.offer_id) ?? []);
    }
    for (const id of cards.keys()) if (!offers.some((offer) => offer.offer_id === id)) cards.delete(id);
    // The list is put together again only when offers come or go: moving a card would take the focus from its form.
    if (offers.length === 0) list.replaceChildren(h('p', {}, 'No OFS offer is registered.'));
    else if (before !== offers.map((offer) => offer.offer_id).join('\n') || list.querySelector('article') === null)
      list.replaceChildren(...offers.map((offer) => cards.get(offer.offer_id)!.element));
    drawBanners();
    readAt.textContent = `Read at ${formatClock(Date.now())}; read again every ${LIVE_READ_MS / 1000} s.`;
  }

  // Every LIVE_READ_MS while the view is open, a failed read included.
  const poll = livePoll(
    list,
    () =>
      read().then(
        () => true,
        (error: unknown) => {
          list.replaceChildren(
            h(
              'p',
              { role: 'alert' },
              error instanceof ApiError ? error.describe() : 'The OFS offers could not be read',
            ),
          );
          cards.clear();
          return true;
        },
      ),
    LIVE_READ_MS,
  );
  const again = poll.again;
  // The user's category decides which bids are theirs; an operator may have changed it since the login.
  readProfile()
    .catch(() => undefined)
    .finally(again);

  const element = h(
    'section',
    { 'aria-labelledby': 'view-title' },
    h(
      'div',
      { class: 'view-head' },
      h('h2', { id: 'view-title', tabindex: -1 }, 'OFS offers'),
      h('button', { type: 'button', onClick: again }, 'Refresh'),
    ),
    readAt,
    listBanner,
    list,
  );
  return {
    element,
    dispose: () => {
      disposed = true;
      poll.dispose();
      clearInterval(ticker);
      clearTimeout(fundsTimer);
      unsubscribe();
      shared.redraws.clear();
    },
  };
}
