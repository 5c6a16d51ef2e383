/**
 * The allotment explained (issue 51): on an offer's card and in an offer order's details, each of the
 * trader's bids with what it asked, what it was allotted and why not the rest (below the cut-off, the
 * single-bidder cap, a proportionate share, not carried forward...), the price paid, the funds debited and
 * released, and when it settles. The reasons and their sentences are the server's
 * (GET /transactional/v1/ofs/offers/{offer_id}/allotment, src/domain/ofs/offer/allotment-explained.ts): the
 * console only lays them out.
 */
import { readData } from '../api.js';
import { h } from '../dom.js';
import { formatPrice, formatQuantity, formatRupees } from '../format.js';
import type { OfsAllotment, OfsAllottedBid, OfsOffer, Order } from '../types.js';
import '../../styles/allotment.css';

/** How a bid's outcome reads, as its badge. */
const OUTCOMES: Record<OfsAllottedBid['outcome'], string> = {
  AWAITING: 'Awaiting allocation',
  ALLOTTED: 'Allotted',
  PART_ALLOTTED: 'Part allotted',
  NOT_ALLOTTED: 'Not allotted',
  REJECTED: 'Rejected',
  CANCELLED: 'Cancelled',
};

/** A read older than this is read again when the card is drawn again. */
const FRESH_MS = 4000;

interface Cached {
  data: OfsAllotment;
  at: number;
}
const cache = new Map<string, Cached>();
const reading = new Map<string, Promise<OfsAllotment>>();

/** The caller's allotment in an offer: the cached read when fresh, else read again (one read at a time per offer). */
function readAllotment(offerId: string, fresh = FRESH_MS): Promise<OfsAllotment> {
  const cached = cache.get(offerId);
  if (cached !== undefined && Date.now() - cached.at < fresh) return Promise.resolve(cached.data);
  const pending = reading.get(offerId);
  if (pending !== undefined) return pending;
  const read = readData((client) => client.allotment(offerId)).then((data) => {
    cache.set(offerId, { data, at: Date.now() });
    return data;
  });
  reading.set(offerId, read);
  void read.finally(() => reading.delete(offerId)).catch(() => {});
  return read;
}

const listingName = (bid: OfsAllottedBid) => `${bid.symbol} ${bid.series} ${bid.exchange}`;
const bidPrice = (bid: OfsAllottedBid) => (bid.price === null ? 'at the cut-off' : `at ${formatPrice(bid.price)}`);

/** One day of a bid: "T: 2,500 of 6,000 allotted at ₹101.00, ₹2,52,500.00, settles Wed 2 Dec 13:30 IST", and why. */
function dayItem(day: OfsAllottedBid['days'][number]): HTMLElement {
  return h('li', { 'data-day': day.day, 'data-reason': day.reason }, h('strong', {}, `${day.day}: `), day.explanation);
}

/** A bid with its outcome, its summary (what it was allotted, why not the rest, the funds, the pay-out), and each day. */
function bidItem(bid: OfsAllottedBid): HTMLElement {
  return h(
    'li',
    { class: 'allotment-bid', 'data-allotment-order': bid.order_id, 'data-outcome': bid.outcome },
    h(
      'p',
      { class: 'allotment-bid-head' },
      h('span', { class: `allotment-outcome outcome-${bid.outcome.toLowerCase()}` }, OUTCOMES[bid.outcome]),
      ` ${bid.bid_category} bid for ${formatQuantity(bid.quantity)} ${bidPrice(bid)}, ${listingName(bid)}`,
      bid.carried_forward ? ', carried forward' : '',
    ),
    h('p', { class: 'allotment-explanation', 'data-explanation': '' }, bid.explanation),
    bid.days.length === 0 ? null : h('ol', { class: 'allotment-days' }, bid.days.map(dayItem)),
  );
}

/** The whole of the caller's bids in the offer, as one line. */
function totalsLine(data: OfsAllotment): string {
  const { totals } = data;
  const parts = [
    `${formatQuantity(totals.bid_quantity)} bid`,
    `${formatQuantity(totals.allotted_quantity)} allotted`,
    `${formatQuantity(totals.not_allotted_quantity)} not allotted`,
    `${formatRupees(totals.debited)} debited`,
    `${formatRupees(totals.released)} released`,
  ];
  if (totals.blocked > 0) parts.push(`${formatRupees(totals.blocked)} blocked`);
  return parts.join(' \u00b7 ');
}

function fill(section: HTMLElement, data: OfsAllotment): void {
  if (data.bids.length === 0) {
    section.hidden = true;
    section.replaceChildren();
    return;
  }
  section.hidden = false;
  section.replaceChildren(
    h('h4', {}, data.bids.length === 1 ? 'Your bid and its allotment' : 'Your bids and their allotment'),
    h('p', { class: 'allotment-totals', 'data-allotment-totals': '' }, totalsLine(data)),
    h('ul', { class: 'allotment-bids' }, data.bids.map(bidItem)),
  );
}

/**
 * The offer card's "your allotment" section: hidden until the read shows the caller has bids in the offer,
 * then filled in place (from the last read at once when there is one, so a redraw does not flicker). Null
 * before the offer opens: nobody has bids in it yet.
 */
export function allotmentSection(offer: OfsOffer): HTMLElement | null {
  if (offer.state === 'ANNOUNCED') return null;
  const section = h('section', { class: 'allotment', 'data-allotment': offer.offer_id, 'aria-live': 'polite' });
  section.hidden = true;
  const cached = cache.get(offer.offer_id);
  if (cached !== undefined) fill(section, cached.data);
  readAllotment(offer.offer_id).then(
    (data) => fill(section, data),
    // The card stands without it; the next redraw reads again.
    () => {},
  );
  return section;
}

/** An offer order's allotment for its details: its outcome, why, its days and funds; null outside an offer. */
export async function orderAllotment(order: Order): Promise<HTMLElement | null> {
  if (order.offer_id === '') return null;
  const data = await readAllotment(order.offer_id, 0);
  const bid = data.bids.find((b) => b.order_id === order.order_id);
  return bid === undefined ? null : h('ul', { class: 'allotment-bids allotment-of-order' }, bidItem(bid));
}
