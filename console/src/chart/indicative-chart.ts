/**
 * An offer's day T as a chart: the indicative price the exchange published (the volume-weighted average of
 * the valid non-retail bids) over time as a step line against the floor price, and below it, on the same
 * time axis, the shares those bids came to. Drawn as SVG with presentation attributes and CSS classes only
 * (no inline style: the page's CSP allows none), as the book chart is.
 */
import { s } from '../dom.js';
import { formatCompact, formatPrice, formatQuantity, parseInstant } from '../format.js';
import type { IndicativePoint } from '../types.js';
import { istMinutes, istSeconds } from './ist-time.js';
import { quantityScale } from './book-chart.js';
import { atShownWidth, Labels, priceTicks, textWidth } from './layout.js';

const PRICE_HEIGHT = 200;
const QUANTITY_HEIGHT = 160;
// Wider on the right than the book chart's: the last time tick is centred on the axis's end.
const MARGIN = { left: 64, right: 44, top: 30, bottom: 40 };
/** A lone point is drawn in the middle of this much time. */
const LONE_POINT_SPAN_MS = 60_000;

interface Point {
  at: number;
  price: number | null;
  quantity: number;
}

const ticks = (low: number, high: number, count: number) =>
  Array.from({ length: count + 1 }, (_, i) => low + ((high - low) * i) / count);
const round = (n: number) => Math.round(n * 10) / 10;

/** The least room between two time ticks' labels. */
const TICK_GAP = 16;

function timeDomain(points: Point[]): [number, number] {
  const first = points[0]!.at;
  const last = points[points.length - 1]!.at;
  return last - first >= LONE_POINT_SPAN_MS
    ? [first, last]
    : [first - LONE_POINT_SPAN_MS / 2, last + LONE_POINT_SPAN_MS / 2];
}

/** From the floor (no valid bid is below it, nor is their average), or the lowest price when one is below it. */
function priceDomain(points: Point[], floorPrice: number): [number, number] {
  const prices = [floorPrice, ...points.flatMap((point) => (point.price === null ? [] : [point.price]))];
  const low = Math.min(...prices);
  const high = Math.max(...prices);
  const pad = high > low ? (high - low) * 0.1 : Math.max(low * 0.01, 1);
  return [low < floorPrice ? low - pad : floorPrice, high + pad];
}

/**
 * A step line through the points: each value holds until the next is published, the last one to `end`.
 * `value` null breaks the line (no valid bid then).
 */
function stepPath(
  points: Point[],
  end: number,
  value: (point: Point) => number | null,
  x: (at: number) => number,
  y: (v: number) => number,
): string {
  let path = '';
  let drawing = false;
  points.forEach((point, i) => {
    const v = value(point);
    if (v === null) {
      drawing = false;
      return;
    }
    path += drawing ? ` V${y(v)}` : `${path === '' ? '' : ' '}M${x(point.at)},${y(v)}`;
    drawing = true;
    path += ` H${x(points[i + 1]?.at ?? end)}`;
  });
  return path;
}

/** What a sighted reader takes from the chart, as a sentence. */
export function describeIndicative(history: readonly IndicativePoint[]): string {
  const priced = history.filter((point) => point.price !== null) as (IndicativePoint & { price: number })[];
  const latest = history[history.length - 1];
  if (latest === undefined || priced.length === 0)
    return 'No indicative price has been published: no valid non-retail bid yet.';
  const prices = priced.map((point) => point.price);
  const from = `${istMinutes(parseInstant(history[0]!.at))} IST`;
  const to = `${istMinutes(parseInstant(latest.at))} IST`;
  const now =
    latest.price === null
      ? 'no valid non-retail bid now'
      : `the latest ${formatPrice(latest.price)} on ${formatQuantity(latest.quantity)} shares`;
  return `${history.length} published prices from ${from} to ${to}: from ${formatPrice(prices[0])} to ${formatPrice(prices[prices.length - 1])}, low ${formatPrice(Math.min(...prices))}, high ${formatPrice(Math.max(...prices))}; ${now}.`;
}

/**
 * `width` is the width it is first drawn at; it is drawn again at the width it is shown at (layout.ts).
 * `tick`, the offer's price tick: the price axis has ticks on the floor plus its multiples.
 */
export function indicativeChart(
  history: readonly IndicativePoint[],
  floorPrice: number,
  caption: string,
  idPrefix: string,
  width: number,
  tick = 0.05,
): SVGSVGElement {
  const points: Point[] = history.map((point) => ({
    at: parseInstant(point.at),
    price: point.price,
    quantity: point.quantity,
  }));
  const times = timeDomain(points);
  const prices = priceDomain(points, floorPrice);
  const timeFormat = times[1] - times[0] < 10 * LONE_POINT_SPAN_MS ? istSeconds : istMinutes;
  const titleId = `${idPrefix}-title`;
  const descId = `${idPrefix}-desc`;
  const svg = s('svg', { class: 'indicative-chart', role: 'img', 'aria-labelledby': `${titleId} ${descId}` });
  const title = s('title', { id: titleId }, caption);
  const desc = s('desc', { id: descId }, describeIndicative(history));
  const height = PRICE_HEIGHT + QUANTITY_HEIGHT;
  atShownWidth(svg, width, (shown) => {
    svg.setAttribute('viewBox', `0 0 ${shown} ${height}`);
    svg.replaceChildren(title, desc, ...draw(shown));
  });
  return svg;

  function draw(chartWidth: number): SVGGElement[] {
    const plotWidth = chartWidth - MARGIN.left - MARGIN.right;
    const left = MARGIN.left;
    const right = chartWidth - MARGIN.right;
    const x = (at: number) => round(left + ((at - times[0]) / (times[1] - times[0])) * plotWidth);
    const labels = new Labels(chartWidth, height);
    // As many time ticks as their labels leave room for, at most four.
    const timeCount = Math.max(
      1,
      Math.min(3, Math.floor(plotWidth / (textWidth(timeFormat(times[1])) + TICK_GAP)) - 1),
    );

    /** One panel: its grid, axes and time ticks; `y` maps its values into it. */
    const panel = (
      name: string,
      label: string,
      top: number,
      panelHeight: number,
      domain: [number, number],
      values: number[],
      tickText: (v: number) => string,
    ) => {
      const plotHeight = panelHeight - MARGIN.top - MARGIN.bottom;
      const y = (v: number) =>
        round(top + MARGIN.top + plotHeight - ((v - domain[0]) / (domain[1] - domain[0])) * plotHeight);
      const bottom = top + MARGIN.top + plotHeight;
      const group = s('g', { class: `panel panel-${name}` });
      labels.take([label], { x: 0, y: top + 18, anchor: 'start' }, 13, true);
      group.append(s('text', { x: 0, y: top + 18, class: 'panel-title' }, label));
      for (const v of values) {
        labels.take([tickText(v)], { x: left - 8, y: y(v) + 4, anchor: 'end' });
        group.append(
          s('line', { x1: left - 4, y1: y(v), x2: right, y2: y(v), class: 'grid' }),
          s('text', { x: left - 8, y: y(v) + 4, class: 'tick tick-y' }, tickText(v)),
        );
      }
      for (const at of ticks(times[0], times[1], timeCount)) {
        const text = timeFormat(at);
        const spot = labels.place(
          [text],
          [
            { x: x(at), y: bottom + 16, anchor: 'middle' },
            { x: x(at), y: bottom + 16, anchor: 'start' },
            { x: x(at), y: bottom + 16, anchor: 'end' },
          ],
        );
        if (spot !== null)
          group.append(s('text', { x: spot.x, y: spot.y, class: `tick tick-x anchor-${spot.anchor}` }, text));
      }
      group.append(
        s('line', { x1: left, y1: bottom, x2: right, y2: bottom, class: 'axis' }),
        s('line', { x1: left, y1: top + MARGIN.top, x2: left, y2: bottom, class: 'axis' }),
      );
      return { group, y, bottom };
    };

    const priceValues = priceTicks(prices[0], prices[1], floorPrice, tick, 5);
    const price = panel('price', 'Indicative price (Rs)', 0, PRICE_HEIGHT, prices, priceValues, formatPrice);
    const floorY = price.y(floorPrice);
    const floorText = `Floor ${formatPrice(floorPrice)}`;
    const floorSpot = labels.place(
      [floorText],
      [
        { x: right, y: floorY - 5, anchor: 'end' },
        { x: right, y: floorY + 14, anchor: 'end' },
      ],
    );
    price.group.append(
      s('line', { x1: left, y1: floorY, x2: right, y2: floorY, class: 'floor' }),
      floorSpot === null
        ? ''
        : s('text', { x: floorSpot.x, y: floorSpot.y, class: 'marker-label marker-label-end' }, floorText),
      s('path', { d: stepPath(points, times[1], (point) => point.price, x, price.y), class: 'indicative-price' }),
    );
    const latest = points[points.length - 1]!;
    if (latest.price !== null) {
      price.group.append(
        s(
          'circle',
          { cx: x(latest.at), cy: price.y(latest.price), r: 4, class: 'latest' },
          s('title', {}, `Latest: ${formatPrice(latest.price)} on ${formatQuantity(latest.quantity)} shares`),
        ),
      );
    }

    // Whole shares from 0 to a little above the most bid, as on the book chart.
    const shares = quantityScale(Math.max(4, ...points.map((point) => point.quantity)));
    const quantity = panel(
      'quantity',
      'Shares bid',
      PRICE_HEIGHT,
      QUANTITY_HEIGHT,
      [0, shares.top],
      shares.ticks,
      formatCompact,
    );
    const axisLabel = 'Time (IST)';
    labels.take([axisLabel], { x: right, y: quantity.bottom + 32, anchor: 'end' });
    quantity.group.append(
      s('path', {
        d: stepPath(points, times[1], (point) => point.quantity, x, quantity.y),
        class: 'indicative-quantity',
      }),
      s('text', { x: right, y: quantity.bottom + 32, class: 'axis-label axis-label-x' }, axisLabel),
    );
    return [price.group, quantity.group];
  }
}
