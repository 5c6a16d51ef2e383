/**
 * OFS offers under the exchanges' framework (docs/design/ofs.md): each offer's state and day, its listings
 * with the series of each category, the portions in shares as the notices print them, the green shoe, the
 * discounts, and the T-day cut-off and employee price once the T allocation has found them. Bidding in an
 * offer is still being built (issue 20); the view says so rather than showing a form that would be refused.
 */
import { ApiError, get } from '../api.js';
import type { View } from '../context.js';
import { h } from '../dom.js';
import { formatInstant, formatPrice, formatQuantity } from '../format.js';
import type { OfsOffer, OfsOffers } from '../types.js';

const STATES: Record<OfsOffer['state'], string> = {
  ANNOUNCED: 'announced: day T has not opened',
  T_OPEN: 'day T: non-retail bids (the T allocation follows the close)',
  T_ALLOCATED: 'T allocated: the cut-off is known; T+1 opens next',
  T1_OPEN: 'day T+1: retail, employee and carried-forward bids',
  ALLOCATED: 'allocated',
  CANCELLED: 'cancelled by the operator',
};

function discount(value: OfsOffer['retail_discount']): string {
  if (value === null) return 'none';
  return 'rupees' in value ? `Rs ${formatPrice(value.rupees)} off` : `${value.pct} % off`;
}

function offerCard(offer: OfsOffer): HTMLElement {
  const headingId = `offer-${offer.offer_id.replace(/\W/g, '-')}`;
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
  return h(
    'article',
    { class: 'card offer', 'aria-labelledby': headingId, 'data-offer': offer.offer_id },
    h('h3', { id: headingId }, `${offer.symbol} (${offer.offer_id})`),
    h('p', { class: 'offer-state' }, `${offer.current_day === 'CLOSED' ? 'Closed' : `Day ${offer.current_day}`}; ${STATES[offer.state]}`),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Floor price'),
      h('dd', {}, formatPrice(offer.floor_price)),
      h('dt', {}, 'Tick'),
      h('dd', {}, formatPrice(offer.tick_size)),
      h('dt', {}, 'Offer'),
      h(
        'dd',
        {},
        `${formatQuantity(portions.total)} shares (base ${formatQuantity(offer.base_quantity)}, green shoe ${formatQuantity(offer.green_shoe_quantity)} ${offer.green_shoe_exercised ? 'exercised' : 'not exercised'})`,
      ),
      h('dt', {}, 'Retail'),
      h('dd', {}, `${formatQuantity(portions.retail_reserved)} shares (${offer.retail_reserve_pct}%), discount ${discount(offer.retail_discount)}, ${offer.retail_allocation_price} price`),
      h('dt', {}, 'Non-retail'),
      h('dd', {}, `${formatQuantity(portions.non_retail)} shares, of which ${formatQuantity(portions.mf_ic_reserved)} for MF and IC first; at most ${formatQuantity(portions.single_bidder_cap)} to one bidder`),
      h('dt', {}, 'Employees'),
      h('dd', {}, portions.employee === 0 ? 'none' : `${formatQuantity(portions.employee)} shares, discount ${discount(offer.employee_discount)}`),
      h('dt', {}, 'T-day cut-off'),
      h('dd', {}, offer.t_cutoff_price === null ? 'not known yet' : formatPrice(offer.t_cutoff_price)),
      h('dt', {}, 'Employee price'),
      h('dd', {}, offer.employee_price === null ? 'not known yet' : formatPrice(offer.employee_price)),
      h('dt', {}, 'Allocation'),
      h('dd', {}, offer.allocation),
    ),
    h('ul', { class: 'listings', 'aria-label': 'Listings' }, listings),
    h(
      'ul',
      { class: 'windows', 'aria-label': 'Days' },
      h('li', {}, h('strong', {}, 'Day T (non-retail): '), `${formatInstant(offer.t_day.opens_at)} to ${formatInstant(offer.t_day.closes_at)}`),
      h('li', {}, h('strong', {}, 'Day T+1 (retail, employees, carried forward): '), `${formatInstant(offer.t1_day.opens_at)} to ${formatInstant(offer.t1_day.closes_at)}`),
    ),
    h('p', {}, 'Bidding in offers is not open in this version yet.'),
  );
}

export function offersView(): View {
  const list = h('div', { class: 'cards' }, h('p', {}, 'Loading the OFS offers...'));
  const refresh = () => {
    get<OfsOffers>('/transactional/v1/ofs/offers')
      .then(({ offers }) => {
        list.replaceChildren(...(offers.length === 0 ? [h('p', {}, 'No OFS offer is registered.')] : offers.map(offerCard)));
      })
      .catch((error: unknown) => {
        list.replaceChildren(h('p', { role: 'alert' }, error instanceof ApiError ? error.describe() : 'The OFS offers could not be read'));
      });
  };
  refresh();
  const element = h(
    'section',
    { 'aria-labelledby': 'view-title' },
    h('div', { class: 'view-head' }, h('h2', { id: 'view-title', tabindex: -1 }, 'OFS offers'), h('button', { type: 'button', onClick: refresh }, 'Refresh')),
    list,
  );
  return { element, dispose: () => undefined };
}
