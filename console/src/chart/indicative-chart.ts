/**
 * An offer's day T as a chart: the indicative price the exchange published (the volume-weighted average of
 * the valid non-retail bids) over time as a step line against the floor price, and below it, on the same
 * time axis, the shares those bids came to. Drawn as SVG with presentation attributes and CSS classes only
 * (no inline style: the page's CSP allows none), as the book chart is.
 */
import { s } from '../dom.js';
import { formatCompact, formatPrice, formatQuantity, parseInstant } from '../format.js';
import type { IndicativePoint } from '../types.js';

const PRICE_HEIGHT = 200;
const QUANTITY_HEIGHT = 140;
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

const minuteFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const secondFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' });

function timeDomain(points: Point[]): [number, number] {
  const first = points[0]!.at;
  const last = points[points.length - 1]!.at;
  return last - first >= LONE_POINT_SPAN_MS
    ? [first, last]
    : [first - LONE_POINT_SPAN_MS / 2, last + LONE_POINT_SPAN_MS / 2];
}

function priceDomain(points: Point[], floorPrice: number): [number, number] {
  const prices = [floorPrice, ...points.flatMap((point) => (point.price === null ? [] : [point.price]))];
  const low = Math.min(...prices);
  const high = Math.max(...prices);
  const pad = high > low ? (high - low) * 0.1 : Math.max(low * 0.01, 1);
  return [low - pad, high + pad];
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
  const from = minuteFormat.format(parseInstant(history[0]!.at));
  const to = minuteFormat.format(parseInstant(latest.at));
  const now =
    latest.price === null
      ? 'no valid non-retail bid now'
      : `the latest ${formatPrice(latest.price)} on ${formatQuantity(latest.quantity)} shares`;
  return `${history.length} published prices from ${from} to ${to}: from ${formatPrice(prices[0])} to ${formatPrice(prices[prices.length - 1])}, low ${formatPrice(Math.min(...prices))}, high ${formatPrice(Math.max(...prices))}; ${now}.`;
}

/** `width` in the chart's own units: a narrow one on a phone keeps its text readable when scaled down. */
export function indicativeChart(
  history: readonly IndicativePoint[],
  floorPrice: number,
  caption: string,
  idPrefix: string,
  width: number,
): SVGSVGElement {
  const points: Point[] = history.map((point) => ({
    at: parseInstant(point.at),
    price: point.price,
    quantity: point.quantity,
  }));
  const times = timeDomain(points);
  const prices = priceDomain(points, floorPrice);
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const left = MARGIN.left;
  const right = width - MARGIN.right;
  const x = (at: number) => round(left + ((at - times[0]) / (times[1] - times[0])) * plotWidth);
  const timeFormat = times[1] - times[0] < 10 * LONE_POINT_SPAN_MS ? secondFormat : minuteFormat;
  const titleId = `${idPrefix}-title`;
  const descId = `${idPrefix}-desc`;
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${PRICE_HEIGHT + QUANTITY_HEIGHT}`,
    class: 'indicative-chart',
    role: 'img',
    'aria-labelledby': `${titleId} ${descId}`,
  });
  svg.append(s('title', { id: titleId }, caption), s('desc', { id: descId }, describeIndicative(history)));

  /** One panel: its grid, axes and time ticks; `y` maps its values into it. */
  const panel = (
    name: string,
    label: string,
    top: number,
    height: number,
    domain: [number, number],
    tickText: (v: number) => string,
  ) => {
    const plotHeight = height - MARGIN.top - MARGIN.bottom;
    const y = (v: number) =>
      round(top + MARGIN.top + plotHeight - ((v - domain[0]) / (domain[1] - domain[0])) * plotHeight);
    const bottom = top + MARGIN.top + plotHeight;
    const group = s('g', { class: `panel panel-${name}` });
    group.append(
      s('text', { x: left, y: top + 18, class: 'panel-title' }, label),
      ...ticks(domain[0], domain[1], 4).flatMap((v) => [
        s('line', { x1: left - 4, y1: y(v), x2: right, y2: y(v), class: 'grid' }),
        s('text', { x: left - 8, y: y(v) + 4, class: 'tick tick-y' }, tickText(v)),
      ]),
      ...ticks(times[0], times[1], 3).map((at) =>
        s('text', { x: x(at), y: bottom + 16, class: 'tick tick-x' }, timeFormat.format(at)),
      ),
      s('line', { x1: left, y1: bottom, x2: right, y2: bottom, class: 'axis' }),
      s('line', { x1: left, y1: top + MARGIN.top, x2: left, y2: bottom, class: 'axis' }),
    );
    svg.append(group);
    return { group, y };
  };

  const price = panel('price', 'Indicative price (Rs)', 0, PRICE_HEIGHT, prices, formatPrice);
  const floorY = price.y(floorPrice);
  price.group.append(
    s('line', { x1: left, y1: floorY, x2: right, y2: floorY, class: 'floor' }),
    s('text', { x: right, y: floorY - 5, class: 'marker-label marker-label-end' }, `Floor ${formatPrice(floorPrice)}`),
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

  const quantityHigh = Math.max(4, ...points.map((point) => point.quantity)) * 1.1;
  const quantity = panel('quantity', 'Shares bid', PRICE_HEIGHT, QUANTITY_HEIGHT, [0, quantityHigh], formatCompact);
  quantity.group.append(
    s('path', {
      d: stepPath(points, times[1], (point) => point.quantity, x, quantity.y),
      class: 'indicative-quantity',
    }),
  );
  return svg;
}
