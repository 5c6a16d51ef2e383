/**
 * One price axis for a trader (views/offers.ts): the floor, the indicative price the exchange publishes
 * (and the T-day cut-off once the T allocation has found it) as marked lines, and the trader's own live
 * bids in the offer as dots on it. The exchanges publish no demand by price (docs/design/console.md): this is
 * what a trader can set against one another. Drawn at the width it is shown at (layout.ts), its labels
 * placed where they overlap none and stay inside it; what a label could not be placed for is in the desc.
 */
import { s } from '../dom.js';
import { formatPrice, formatQuantity } from '../format.js';
import { atShownWidth, Labels, priceTicks, textWidth, type Spot } from './layout.js';

/** A bid of the trader's, at its price (a cut-off bid at the T-day cut-off). */
export interface StripBid {
  quantity: number;
  price: number;
}

export interface StripMarks {
  floor: number;
  tick: number;
  /** The indicative price, and whether it is the final one of T's close; null: none published. */
  indicative: number | null;
  cutoff: number | null;
  bids: readonly StripBid[];
}

const HEIGHT = 118;
const AXIS_Y = 78;
const MARGIN = { left: 12, right: 12 };
const round = (n: number) => Math.round(n * 10) / 10;

/** What a sighted reader takes from the strip, in words. */
export function describeStrip(marks: StripMarks): string {
  const bids = [...marks.bids].sort((a, b) => b.price - a.price);
  const parts = [
    `Floor ${formatPrice(marks.floor)}`,
    marks.indicative === null ? 'no indicative price published' : `indicative price ${formatPrice(marks.indicative)}`,
  ];
  if (marks.cutoff !== null) parts.push(`T-day cut-off ${formatPrice(marks.cutoff)}`);
  const yours =
    bids.length === 0
      ? 'You have no live bid.'
      : `Your live bids: ${bids.map((bid) => `${formatQuantity(bid.quantity)} at ${formatPrice(bid.price)}`).join(', ')}.`;
  return `${parts.join('; ')}. ${yours}`;
}

export function priceStrip(marks: StripMarks, caption: string, idPrefix: string, width: number): SVGSVGElement {
  const titleId = `${idPrefix}-title`;
  const descId = `${idPrefix}-desc`;
  const svg = s('svg', { class: 'price-strip', role: 'img', 'aria-labelledby': `${titleId} ${descId}` });
  const title = s('title', { id: titleId }, caption);
  const desc = s('desc', { id: descId }, describeStrip(marks));
  const prices = [
    marks.floor,
    ...(marks.indicative === null ? [] : [marks.indicative]),
    ...(marks.cutoff === null ? [] : [marks.cutoff]),
    ...marks.bids.map((bid) => bid.price),
  ];
  const low = Math.min(...prices);
  const top = Math.max(...prices);
  const pad = top > low ? (top - low) * 0.08 : Math.max(marks.tick * 4, low * 0.005);
  const domain: [number, number] = [low, top + pad];
  atShownWidth(svg, width, (shown) => {
    svg.setAttribute('viewBox', `0 0 ${shown} ${HEIGHT}`);
    svg.replaceChildren(title, desc, ...draw(shown));
  });
  return svg;

  function draw(chartWidth: number): SVGElement[] {
    const left = MARGIN.left;
    const right = chartWidth - MARGIN.right;
    const x = (price: number) => round(left + ((price - domain[0]) / (domain[1] - domain[0])) * (right - left));
    const labels = new Labels(chartWidth, HEIGHT);
    const out: SVGElement[] = [s('line', { x1: left, y1: AXIS_Y, x2: right, y2: AXIS_Y, class: 'axis' })];
    // The ticks under the axis, on biddable prices, as many as their labels leave room for.
    const most = Math.max(2, Math.floor((right - left) / (textWidth(formatPrice(domain[1])) + 24)));
    for (const price of priceTicks(domain[0], domain[1], marks.floor, marks.tick, most)) {
      const text = formatPrice(price);
      const spot = labels.place(
        [text],
        [
          { x: x(price), y: AXIS_Y + 18, anchor: 'middle' },
          { x: x(price), y: AXIS_Y + 18, anchor: 'start' },
          { x: x(price), y: AXIS_Y + 18, anchor: 'end' },
        ],
      );
      out.push(s('line', { x1: x(price), y1: AXIS_Y, x2: x(price), y2: AXIS_Y + 4, class: 'axis' }));
      if (spot !== null) out.push(s('text', { x: spot.x, y: spot.y, class: `tick anchor-${spot.anchor}` }, text));
    }
    // The marked prices above the axis: each label in the first row and side where it fits.
    const rowsAbove = [16, 32, 48];
    const spotsAt = (at: number, rows: number[]): Spot[] =>
      rows.flatMap((y) => (['middle', 'start', 'end'] as const).map((anchor) => ({ x: at, y, anchor })));
    const marker = (price: number, name: string, label: string) => {
      const at = x(price);
      out.push(s('line', { x1: at, y1: 6, x2: at, y2: AXIS_Y, class: `strip-mark strip-${name}` }));
      const spot = labels.place([label], spotsAt(at, rowsAbove));
      if (spot !== null)
        out.push(
          s('text', { x: spot.x, y: spot.y, class: `marker-label strip-label-${name} anchor-${spot.anchor}` }, label),
        );
    };
    marker(marks.floor, 'floor', `Floor ${formatPrice(marks.floor)}`);
    if (marks.cutoff !== null) marker(marks.cutoff, 'cutoff', `Cut-off ${formatPrice(marks.cutoff)}`);
    if (marks.indicative !== null)
      marker(marks.indicative, 'indicative', `Indicative ${formatPrice(marks.indicative)}`);
    // The trader's bids: dots on the axis, a label each where one fits (the desc names them all).
    for (const bid of [...marks.bids].sort((a, b) => b.price - a.price)) {
      const at = x(bid.price);
      const words = `${formatQuantity(bid.quantity)} at ${formatPrice(bid.price)}`;
      out.push(s('circle', { cx: at, cy: AXIS_Y, r: 5, class: 'own-bid' }, s('title', {}, `Your bid: ${words}`)));
      const spot = labels.place([formatQuantity(bid.quantity)], spotsAt(at, [64]));
      if (spot !== null)
        out.push(
          s(
            'text',
            { x: spot.x, y: spot.y, class: `marker-label own-bid-label anchor-${spot.anchor}` },
            formatQuantity(bid.quantity),
          ),
        );
    }
    return out;
  }
}
