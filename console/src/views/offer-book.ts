/**
 * For operators: the book of one offer of the exchanges' framework (GET /operator/v1/ofs/offers/{offer_id}/book),
 * reached from the offer's card: where the offer stands and the prices its allocations found, its portions,
 * the broker's bids per category and per listing (the shares still bid for, and what was allotted and at
 * what cost), and the open non-retail demand by price, as a chart against the non-retail portion and as a
 * table with the same numbers for screen readers and for anyone who wants them exact.
 */
import { ApiError, readData } from '../api.js';
import { chartLegend, demandChart, type DemandPanel } from '../chart/book-chart.js';
import type { View } from '../context.js';
import { h, row, table } from '../dom.js';
import { liveBook } from '../live-book.js';
import { formatInstant, formatPrice, formatQuantity, formatRupees } from '../format.js';
import type { OfferBookCategory, OfsOffer, OfsOfferBook } from '../types.js';
import {
  AWAITING_OPERATOR,
  awaitingGreenShoeText,
  greenShoeText,
  offerNotice,
  offerSizeText,
  offerStateText,
  retailPriceText,
  settlementText,
} from './offers.js';
import { chartWidth, PHONE_QUERY } from '../chart/chart-width.js';
import { syncServerClock } from '../ofs-issues.js';

const CATEGORY_LABELS: Record<OfferBookCategory['category'], string> = {
  RETAIL: 'Retail',
  EMPLOYEE: 'Employees',
  NII: 'NII',
  MF: 'MF',
  IC: 'IC',
  OTHS: 'Others (OTHS)',
};

const CATEGORY_COLUMNS = ['Category', 'Listing', 'Bids', 'Open (shares)', 'Allotted (shares)', 'Allotted value'];
const DEMAND_COLUMNS = ['Price (Rs)', 'Shares', 'At or above', 'Bids'];

const finished = (offer: OfsOffer) => offer.state === 'ALLOCATED' || offer.state === 'CANCELLED';
const notKnown = (price: number | null) => (price === null ? 'not known yet' : formatPrice(price));

/** A titled part of the book: its heading names it for the page's outline and for screen readers. */
function part(id: string, title: string, ...children: (HTMLElement | null)[]): HTMLElement {
  return h('section', { class: 'book-part', 'aria-labelledby': id }, h('h3', { id }, title), children);
}

function facts(offer: OfsOffer): HTMLElement {
  const { indicative } = offer;
  return h(
    'dl',
    { class: 'facts' },
    h('dt', {}, 'Floor price'),
    h('dd', {}, formatPrice(offer.floor_price)),
    h('dt', {}, 'T-day cut-off'),
    h('dd', { 'data-fact': 't_cutoff' }, notKnown(offer.t_cutoff_price)),
    h('dt', {}, 'Retail cut-off'),
    h('dd', { 'data-fact': 'retail_cutoff' }, notKnown(offer.retail_cutoff_price)),
    h('dt', {}, 'Retail price'),
    h('dd', { 'data-fact': 'retail_price' }, retailPriceText(offer)),
    h('dt', {}, 'Employee price'),
    h('dd', {}, offer.portions.employee === 0 ? 'none' : notKnown(offer.employee_price)),
    offer.state === 'T_OPEN' ? h('dt', {}, 'Indicative price') : null,
    offer.state === 'T_OPEN'
      ? h(
          'dd',
          {},
          indicative === null || indicative.price === null
            ? 'not published yet'
            : `${formatPrice(indicative.price)} on ${formatQuantity(indicative.quantity)} shares (${formatInstant(indicative.at)})`,
        )
      : null,
    h('dt', {}, 'Allocation'),
    h('dd', {}, offer.allocation),
    h('dt', {}, 'Settlement'),
    h('dd', {}, settlementText(offer)),
  );
}

function portions(offer: OfsOffer): HTMLElement {
  const { portions: p } = offer;
  return h(
    'dl',
    { class: 'facts', 'data-portions': '' },
    h('dt', {}, 'Total'),
    h('dd', { 'data-portions-source': p.source }, offerSizeText(offer)),
    h('dt', {}, 'Green shoe'),
    h('dd', {}, greenShoeText(offer)),
    h('dt', {}, 'Retail'),
    h('dd', {}, `${formatQuantity(p.retail_reserved)} shares (${offer.retail_reserve_pct}%), allotted on T+1`),
    h('dt', {}, 'Non-retail'),
    h('dd', {}, `${formatQuantity(p.non_retail)} shares, allotted on T`),
    h('dt', {}, 'MF and IC first'),
    h('dd', {}, `${formatQuantity(p.mf_ic_reserved)} shares of the non-retail portion`),
    h('dt', {}, 'Most to one bidder'),
    h('dd', {}, `${formatQuantity(p.single_bidder_cap)} shares (MF and IC excepted)`),
    h('dt', {}, 'Employees'),
    h(
      'dd',
      {},
      p.employee === 0
        ? 'none'
        : `${formatQuantity(p.employee)} shares, on top of the total${p.employee > offer.employee_quantity ? ` (${formatQuantity(p.employee - offer.employee_quantity)} of them of the green shoe)` : ''}`,
    ),
  );
}

type Figures = Pick<OfferBookCategory, 'bids' | 'open_quantity' | 'allotted_quantity' | 'allotted_value'>;
/** Whether a category or listing has had a bid: one with none takes no row (on a phone each row is a card). */
const hasBids = (f: Figures) => f.bids > 0 || f.open_quantity > 0 || f.allotted_quantity > 0;

/**
 * The categories and listings with no bids, in one line each: "No bids: Employees, IC, Others (OTHS)" and
 * "No bids on BSE_EQ 800001 from: MF, NII" (null: every one has bids).
 */
function noBids(book: OfsOfferBook): HTMLElement | null {
  const categories = book.categories.filter((category) => !hasBids(category));
  const listings = new Map<string, string[]>();
  for (const category of book.categories.filter(hasBids))
    for (const listing of category.by_listing.filter((l) => !hasBids(l))) {
      const name = `${listing.exchange} ${listing.scrip_token}`;
      listings.set(name, [...(listings.get(name) ?? []), CATEGORY_LABELS[category.category]]);
    }
  if (categories.length === 0 && listings.size === 0) return null;
  return h(
    'div',
    { class: 'no-bids' },
    categories.length === 0
      ? null
      : h(
          'p',
          { 'data-no-bids': '' },
          `No bids: ${categories.map((category) => CATEGORY_LABELS[category.category]).join(', ')}`,
        ),
    [...listings].map(([name, from]) =>
      h('p', { 'data-no-bids-listing': name }, `No bids on ${name} from: ${from.join(', ')}`),
    ),
  );
}

/** One row per category with bids, and under each a row per listing it has bids on. */
function categoriesTable(book: OfsOfferBook): HTMLTableElement {
  const figures = (f: Figures) => [
    String(f.bids),
    formatQuantity(f.open_quantity),
    formatQuantity(f.allotted_quantity),
    h('span', { class: 'amount' }, formatRupees(f.allotted_value)),
  ];
  return table(
    'Bids by category and listing: shares still bid for, and allotted',
    CATEGORY_COLUMNS,
    book.categories.filter(hasBids).flatMap((category) => [
      row(
        CATEGORY_COLUMNS,
        [h('strong', {}, CATEGORY_LABELS[category.category]), 'All listings', ...figures(category)],
        {
          class: 'category-row',
          'data-category': category.category,
        },
      ),
      ...category.by_listing.filter(hasBids).map((listing) =>
        row(
          CATEGORY_COLUMNS,
          [CATEGORY_LABELS[category.category], `${listing.exchange} ${listing.scrip_token}`, ...figures(listing)],
          {
            class: 'listing-row',
            'data-category': category.category,
            'data-listing': `${listing.exchange}:${listing.scrip_token}`,
          },
        ),
      ),
    ]),
    'category-table',
  );
}

/** The open non-retail demand as a chart against the non-retail portion, then the same numbers as a table. */
function demandPart(book: OfsOfferBook): HTMLElement {
  const { offer } = book;
  const demand = book.non_retail_demand;
  if (demand.length === 0)
    return part('offer-book-demand', 'Open non-retail demand', h('p', {}, 'No open non-retail bids.'));
  const open = demand[demand.length - 1]!.cumulative;
  const cutOff = offer.t_cutoff_price;
  const caption = `The open non-retail demand of ${offer.symbol} (${offer.offer_id}) by price, against the non-retail portion of ${formatQuantity(offer.portions.non_retail)} shares`;
  const description = [
    `${formatQuantity(open)} non-retail shares open against the non-retail portion of ${formatQuantity(offer.portions.non_retail)}`,
    `at prices from ${formatPrice(demand[demand.length - 1]!.price)} to ${formatPrice(demand[0]!.price)}`,
    cutOff === null ? 'no T-day cut-off yet' : `T-day cut-off ${formatPrice(cutOff)}`,
  ].join(', ');
  const panel: DemandPanel = {
    side: 'non_retail',
    label: 'Non-retail',
    steps: demand
      .map((level) => ({ price: level.price, quantity: level.quantity, cumulative: level.cumulative }))
      .reverse(),
    offer: { quantity: offer.portions.non_retail, label: 'Non-retail portion' },
    portion: null,
    price: cutOff === null ? null : { value: cutOff, label: 'T-day cut-off' },
    allotted: [],
  };
  const prices = [offer.floor_price, ...demand.map((level) => level.price), cutOff ?? offer.floor_price];
  const width = chartWidth(640);
  const chart = demandChart([panel], {
    prices,
    floor: { value: offer.floor_price, label: 'Floor' },
    caption,
    description: `${description}.`,
    idPrefix: 'offer-book',
    width,
    tick: offer.tick_size,
  });
  return part(
    'offer-book-demand',
    'Open non-retail demand',
    h(
      'figure',
      { class: 'card chart' },
      chartLegend(chart, [
        { drawn: 'path.demand-non_retail', className: 'legend-non-retail', label: 'Open non-retail demand' },
        { drawn: 'line.offer', className: 'legend-offer', label: 'Non-retail portion' },
        { drawn: 'line.clearing', className: 'legend-clearing', label: 'T-day cut-off' },
      ]),
      chart,
      h('figcaption', {}, caption),
    ),
    h(
      'div',
      { class: 'table-wrap' },
      table(
        'Open non-retail demand by price, highest first (the chart in numbers)',
        DEMAND_COLUMNS,
        demand.map((level) =>
          row(
            DEMAND_COLUMNS,
            [
              formatPrice(level.price),
              formatQuantity(level.quantity),
              formatQuantity(level.cumulative),
              String(level.bids),
            ],
            {
              'data-price': formatPrice(level.price),
            },
          ),
        ),
        'demand-table',
      ),
    ),
  );
}

function renderBook(book: OfsOfferBook): HTMLElement[] {
  const { offer } = book;
  return [
    h('p', { class: 'offer-state', 'data-state': offer.state }, `${offer.symbol}: ${offerStateText(offer)}`),
    offerNotice(offer.awaiting_operator ? AWAITING_OPERATOR : null, 'operator'),
    offerNotice(awaitingGreenShoeText(offer), 'green-shoe'),
    facts(offer),
    // Folded on a phone, where the bids and the demand come first; open on a wider screen.
    h(
      'details',
      { class: 'book-part book-portions', open: !window.matchMedia(PHONE_QUERY).matches },
      h('summary', {}, h('h3', { id: 'offer-book-portions' }, 'Portions')),
      portions(offer),
    ),
    part(
      'offer-book-categories',
      'Bids by category',
      book.categories.some(hasBids)
        ? h('div', { class: 'table-wrap' }, categoriesTable(book))
        : h('p', {}, 'No bids yet in any category.'),
      noBids(book),
    ),
    demandPart(book),
  ].filter((node): node is HTMLElement => node !== null);
}

/** What the status line says once: the wait for the seller's green-shoe decision or for the operator, or the end of the offer. */
function statusText(offer: OfsOffer): string {
  if (offer.awaiting_operator) return AWAITING_OPERATOR;
  const waiting = awaitingGreenShoeText(offer);
  if (waiting !== null) return waiting;
  if (offer.state === 'CANCELLED') return 'The offer was cancelled by the operator.';
  if (offer.state === 'ALLOCATED') return 'The offer is allocated.';
  return '';
}

export function offerBookView(offerId: string): View {
  /** The book last drawn (its server_time left out), so that an unchanged book is not drawn again. */
  let drawn = '';
  // The status line speaks when the offer waits (for the seller's green-shoe decision, for the operator) or ends.
  const panel = liveBook(
    async () => {
      const started = Date.now();
      const book = await readData((client) => client.offerBook(offerId));
      // The green shoe's default is told apart from a decision still to come by the server's clock.
      syncServerClock(book.server_time, started);
      if (panel.disposed()) return null;
      const next = JSON.stringify({ ...book, server_time: '' });
      const changed = next !== drawn;
      drawn = next;
      return {
        ...(changed && { draw: renderBook(book) }),
        status: statusText(book.offer),
        settled: finished(book.offer),
      };
    },
    {
      // Not read again after a refusal (403, 404).
      readAfter: (error) => {
        drawn = '';
        return !(error instanceof ApiError && error.status >= 400 && error.status < 500);
      },
      failure: 'The book could not be read',
      loading: h('p', {}, 'Loading the book...'),
    },
  );
  panel.again();

  const element = h(
    'section',
    { 'aria-labelledby': 'view-title', class: 'offer-book' },
    h('p', { class: 'back-link' }, h('a', { href: '#/offers' }, 'Back to the OFS offers')),
    h(
      'div',
      { class: 'view-head' },
      h('h2', { id: 'view-title', tabindex: -1 }, `Book of offer ${offerId}`),
      h('button', { type: 'button', onClick: panel.again }, 'Refresh'),
    ),
    h(
      'div',
      { class: 'field-row' },
      h(
        'div',
        { class: 'field checkbox' },
        h('label', {}, panel.live, ' Live: read the book every 2 s until the offer is allocated'),
      ),
    ),
    panel.readAt,
    panel.status,
    panel.area,
  );
  return { element, dispose: panel.dispose };
}
