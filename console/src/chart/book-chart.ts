/**
 * The OFS book as a chart: for each category (retail, non-retail) a panel with a step line of cumulative
 * demand by price (the shares bid at that price or above), the category's offer and, when it differs, the
 * portion it can be allotted as horizontal lines (named instead of drawn when they dwarf the demand), and
 * the clearing price the demand implies as a vertical line; after allocation, the shares allotted at each
 * trade price as bars. The panels are drawn from plain data (`demandChart`), so that an offer's book
 * (views/offer-book.ts) draws its open non-retail demand the same way. Drawn as SVG with presentation
 * attributes and CSS classes only (no inline style: the page's CSP allows none).
 */
import { s } from '../dom.js';
import { formatCompact, formatPrice, formatQuantity } from '../format.js';
import type { OfsBook } from '../types.js';

export type Side = 'retail' | 'non_retail';

const SIDES: { side: Side; label: string }[] = [
  { side: 'retail', label: 'Retail' },
  { side: 'non_retail', label: 'Non-retail' },
];

const PANEL_HEIGHT = 230;
const MARGIN = { left: 64, right: 20, top: 30, bottom: 40 };

interface Step {
  price: number;
  /** Shares bid at this price. */
  quantity: number;
  /** Shares bid at this price or above. */
  cumulative: number;
}

/**
 * What one panel draws, whichever book it comes from: a side's cumulative demand, the quantity it is set
 * against (and, when it differs, the portion it can be allotted), the price the demand implies or the
 * allocation found, and what was allotted at each price.
 */
export interface DemandPanel {
  side: Side;
  label: string;
  /** Lowest price first. */
  steps: Step[];
  offer: { quantity: number; label: string };
  /** Drawn only when it differs from the offer. */
  portion: { quantity: number; label: string } | null;
  price: { value: number; label: string } | null;
  allotted: { price: number; quantity: number }[];
}

/** One category's cumulative demand by price, lowest price first. */
export function demandSteps(book: OfsBook, side: Side): Step[] {
  return book.demand
    .map((level) => ({ price: level.price, quantity: level[`${side}_quantity`], cumulative: level[`${side}_cumulative`] }))
    .sort((a, b) => a.price - b.price);
}

const allottedAt = (book: OfsBook, side: Side) =>
  (book.allotted?.by_price ?? []).map((level) => ({ price: level.price, quantity: level[`${side}_quantity`] })).filter((level) => level.quantity > 0);

/** One price axis for every panel, so that the same price sits at the same place in each. */
function priceDomain(prices: number[]): [number, number] {
  const low = Math.min(...prices);
  const high = Math.max(...prices);
  const pad = high > low ? (high - low) * 0.1 : Math.max(low * 0.01, 1);
  return [low - pad, high + pad];
}

const ticks = (low: number, high: number, count: number) => Array.from({ length: count + 1 }, (_, i) => low + ((high - low) * i) / count);
const round = (n: number) => Math.round(n * 10) / 10;

function panel(data: DemandPanel, idPrefix: string, domain: [number, number], top: number, width: number): SVGGElement {
  const { side, steps, allotted } = data;
  const offer = data.offer.quantity;
  const portion = data.portion?.quantity ?? offer;
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const plotHeight = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  // The quantity axis fits the demand and the allotment. The offer and the portion share it while they are
  // at most four times the demand; above that they would flatten the demand into the axis, so they are
  // named at the top of the panel instead of drawn.
  const demandHigh = Math.max(4, ...steps.map((step) => step.cumulative), ...allotted.map((level) => level.quantity));
  const fits = (quantity: number) => quantity <= demandHigh * 4;
  const highest = Math.max(demandHigh, ...[offer, portion].filter(fits));
  const x = (price: number) => round(MARGIN.left + ((price - domain[0]) / (domain[1] - domain[0])) * plotWidth);
  const y = (quantity: number) => round(top + MARGIN.top + plotHeight - (quantity / (highest * 1.1)) * plotHeight);
  const bottom = y(0);
  const left = MARGIN.left;
  const right = width - MARGIN.right;
  const titleId = `${idPrefix}-panel-${side}`;

  const group = s('g', { class: `panel panel-${side}`, role: 'group', 'aria-labelledby': titleId });
  group.append(
    s('text', { id: titleId, x: left, y: top + 18, class: 'panel-title' }, `${data.label}: cumulative demand by price`),
    ...ticks(0, highest, 4).flatMap((q) => [
      s('line', { x1: left - 4, y1: y(q), x2: right, y2: y(q), class: 'grid' }),
      s('text', { x: left - 8, y: y(q) + 4, class: 'tick tick-y' }, formatCompact(q)),
    ]),
    ...ticks(domain[0], domain[1], 4).map((p) => s('text', { x: x(p), y: bottom + 16, class: 'tick tick-x' }, formatPrice(p))),
    s('line', { x1: left, y1: bottom, x2: right, y2: bottom, class: 'axis' }),
    s('line', { x1: left, y1: top + MARGIN.top, x2: left, y2: bottom, class: 'axis' }),
    s('text', { x: right, y: bottom + 32, class: 'axis-label axis-label-x' }, 'Price (Rs)'),
  );
  if (fits(offer)) {
    group.append(
      s('line', { x1: left, y1: y(offer), x2: right, y2: y(offer), class: 'offer' }),
      s('text', { x: right, y: y(offer) - 5, class: 'marker-label marker-label-end' }, `${data.offer.label} ${formatQuantity(offer)}`),
    );
  } else {
    const share = ((100 * Math.max(...steps.map((step) => step.cumulative), 0)) / offer).toFixed(2);
    group.append(
      s(
        'text',
        { x: right, y: top + MARGIN.top + 12, class: 'marker-label marker-label-end offer-off-scale' },
        `${data.offer.label} ${formatQuantity(offer)} above the scale (${share} % bid)`,
      ),
    );
  }
  if (data.portion !== null && portion !== offer && fits(portion)) {
    group.append(
      s('line', { x1: left, y1: y(portion), x2: right, y2: y(portion), class: 'portion' }),
      s('text', { x: right, y: y(portion) + 14, class: 'marker-label marker-label-end' }, `${data.portion.label} ${formatQuantity(portion)}`),
    );
  }
  for (const level of allotted) {
    group.append(
      s('rect', { x: x(level.price) - 4, y: y(level.quantity), width: 8, height: round(bottom - y(level.quantity)), class: `allotted allotted-${side}` }),
    );
  }
  if (steps.length > 0) {
    // Left of the lowest price every bid counts; past each price the line drops to the demand above it.
    let path = `M${x(domain[0])},${y(steps[0]!.cumulative)}`;
    steps.forEach((step, i) => {
      path += ` H${x(step.price)} V${y(steps[i + 1]?.cumulative ?? 0)}`;
    });
    group.append(s('path', { d: `${path} H${x(domain[1])}`, class: `demand demand-${side}` }));
    // A dot on each price level, so that a demand small beside the offer still shows; hovering names it.
    for (const step of steps.filter((level) => level.quantity > 0)) {
      group.append(
        s(
          'circle',
          { cx: x(step.price), cy: y(step.cumulative), r: 4, class: `level level-${side}` },
          s('title', {}, `${formatPrice(step.price)}: ${formatQuantity(step.cumulative)} shares at or above`),
        ),
      );
    }
  }
  if (data.price !== null) {
    const cx = x(data.price.value);
    // At the top right of the line (under the offer's note when that is named there); near the right edge,
    // where the offer's and the portion's labels are, at the foot of the line on its left, under the demand.
    const nearRight = cx > left + plotWidth * 0.6;
    const label = nearRight
      ? { x: cx - 4, y: bottom - 8, class: 'marker-label marker-label-end' }
      : { x: cx + 4, y: top + MARGIN.top + (fits(offer) ? 12 : 28), class: 'marker-label' };
    group.append(
      s('line', { x1: cx, y1: top + MARGIN.top, x2: cx, y2: bottom, class: 'clearing' }),
      s('text', label, `${data.price.label} ${formatPrice(data.price.value)}`),
    );
  }
  return group;
}

/**
 * The panels, one under the other on one price axis (which spans `prices`), as an image named by `caption`
 * and described by `description`; `idPrefix` keeps the ids apart from any other chart's.
 */
export function demandChart(panels: DemandPanel[], prices: number[], caption: string, description: string, idPrefix: string, width: number): SVGSVGElement {
  const domain = priceDomain(prices);
  const titleId = `${idPrefix}-chart-title`;
  const descId = `${idPrefix}-chart-desc`;
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${PANEL_HEIGHT * panels.length}`,
    class: 'book-chart',
    role: 'img',
    'aria-labelledby': `${titleId} ${descId}`,
  });
  svg.append(s('title', { id: titleId }, caption), s('desc', { id: descId }, description));
  panels.forEach((data, index) => svg.append(panel(data, idPrefix, domain, index * PANEL_HEIGHT, width)));
  return svg;
}

/** What a sighted reader takes from one panel, as a sentence. */
export function describeSide(book: OfsBook, side: Side, label: string): string {
  const steps = demandSteps(book, side);
  const clearing = book.clearing[side];
  const parts = [
    `${label}: ${formatQuantity(clearing.demand)} shares bid against an offer of ${formatQuantity(book.offer[side])} (portion ${formatQuantity(clearing.portion)})`,
  ];
  if (steps.length > 0) parts.push(`at prices from ${formatPrice(steps[0]!.price)} to ${formatPrice(steps[steps.length - 1]!.price)}`);
  parts.push(clearing.price === null ? 'no clearing price: the demand fits the portion' : `clearing price ${formatPrice(clearing.price)}`);
  if (book.allotted !== null) parts.push(`${formatQuantity(book.allotted[side])} allotted`);
  return `${parts.join(', ')}.`;
}

/** `width` in the chart's own units: a narrow one on a phone keeps its text readable when scaled down. */
export function bookChart(book: OfsBook, caption: string, width: number): SVGSVGElement {
  const prices = [
    book.issue.floor_price,
    ...book.demand.map((level) => level.price),
    ...(book.allotted?.by_price ?? []).map((level) => level.price),
    ...SIDES.map(({ side }) => book.clearing[side].price ?? book.issue.floor_price),
  ];
  const panels = SIDES.map(({ side, label }): DemandPanel => {
    const clearing = book.clearing[side];
    return {
      side,
      label,
      steps: demandSteps(book, side),
      offer: { quantity: book.offer[side], label: 'Offer' },
      portion: { quantity: clearing.portion, label: 'Portion' },
      price: clearing.price === null ? null : { value: clearing.price, label: 'Clearing' },
      allotted: allottedAt(book, side),
    };
  });
  const description = SIDES.map(({ side, label }) => describeSide(book, side, label)).join(' ');
  return demandChart(panels, prices, caption, description, 'book', width);
}
