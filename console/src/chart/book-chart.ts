/**
 * The OFS book as a chart: for each category (retail, non-retail) a panel with a step line of cumulative
 * demand by price (the shares bid at that price or above), the category's offer and, when it differs, the
 * portion it can be allotted as horizontal lines (named instead of drawn when they dwarf the demand), and
 * the clearing price the demand implies as a vertical line. The price axis starts at the floor, which is
 * marked, as is the retail cut-off on the retail panel; the quantity axis has whole-share ticks. After
 * allocation the demand drawn is the one the allocation took (the server's `at_close`: no bid is live any
 * more), with the shares allotted at each trade price as bars over it. The panels are drawn from plain
 * data (`demandChart`), so that an offer's book (views/offer-book.ts) draws its open non-retail demand the
 * same way, and a chart's legend (`chartLegend`) names only what it draws. Drawn as SVG with presentation
 * attributes and CSS classes only (no inline style: the page's CSP allows none).
 */
import { h, s } from '../dom.js';
import { formatCompact, formatPrice, formatQuantity } from '../format.js';
import type { OfsBook } from '../types.js';
import {
  atShownWidth,
  Labels,
  LINE_PX,
  lines,
  priceTicks,
  type Spot,
  TEXT_PX,
  textWidth,
  TITLE_PX,
  wrap,
} from './layout.js';

export type Side = 'retail' | 'non_retail';

const SIDES: { side: Side; label: string }[] = [
  { side: 'retail', label: 'Retail' },
  { side: 'non_retail', label: 'Non-retail' },
];

const PANEL_HEIGHT = 240;
// The strip between a panel's title and its plot carries the labels of the floor and the cut-off markers.
const MARGIN = { left: 64, right: 20, top: 44, bottom: 40 };
/** The least room between two price ticks' labels. */
const TICK_GAP = 16;

interface Step {
  price: number;
  /** Shares bid at this price. */
  quantity: number;
  /** Shares bid at this price or above. */
  cumulative: number;
}

/** A price marked on a panel by a labelled vertical line: the floor, the retail cut-off. */
export interface PriceMarker {
  value: number;
  label: string;
}

/**
 * What one panel draws, whichever book it comes from: a side's cumulative demand, the quantity it is set
 * against (and, when it differs, the portion it can be allotted), the price the demand implies or the
 * allocation found, what was allotted at each price, and the prices marked on it besides the floor.
 */
export interface DemandPanel {
  side: Side;
  label: string;
  /** The panel's title after its label; default "cumulative demand by price". */
  title?: string;
  /** Lowest price first. */
  steps: Step[];
  offer: { quantity: number; label: string };
  /** Drawn only when it differs from the offer. */
  portion: { quantity: number; label: string } | null;
  price: { value: number; label: string } | null;
  allotted: { price: number; quantity: number }[];
  /** The retail cut-off price, on the retail panel. */
  cutoff?: PriceMarker | null;
}

/** How a chart is drawn: its price axis spans `prices` and starts at `floor` (when none is below it). */
export interface ChartOptions {
  prices: number[];
  floor: PriceMarker | null;
  caption: string;
  description: string;
  /** Keeps the ids apart from any other chart's. */
  idPrefix: string;
  /** The width it is first drawn at; it is drawn again at the width it is shown at (layout.ts). */
  width: number;
  /** The price tick: the price axis has ticks only on the floor plus its multiples (default 0.05). */
  tick?: number;
}

/** What a book's chart and tables show: before the allocation the live bids, after it the bids it took. */
export type BookFigures = Pick<OfsBook, 'demand' | 'ineligible' | 'clearing'>;

/** The live book until the allocation has run; then the book at close, which keeps its demand. */
export const bookFigures = (book: OfsBook): BookFigures => book.at_close ?? book;

/** One category's cumulative demand by price, lowest price first. */
export function demandSteps(figures: BookFigures, side: Side): Step[] {
  return figures.demand
    .map((level) => ({
      price: level.price,
      quantity: level[`${side}_quantity`],
      cumulative: level[`${side}_cumulative`],
    }))
    .sort((a, b) => a.price - b.price);
}

const allottedAt = (book: OfsBook, side: Side) =>
  (book.allotted?.by_price ?? [])
    .map((level) => ({ price: level.price, quantity: level[`${side}_quantity`] }))
    .filter((level) => level.quantity > 0);

/**
 * One price axis for every panel, so that the same price sits at the same place in each. It starts at the
 * floor, below which no bid is taken, unless a price below it is to be shown.
 */
function priceDomain(prices: number[], floor: number | null): [number, number] {
  const lowest = Math.min(...prices);
  const fromFloor = floor !== null && lowest >= floor;
  const low = fromFloor ? floor : lowest;
  const high = Math.max(...prices);
  const pad = high > low ? (high - low) * 0.1 : Math.max(low * 0.01, 1);
  return [fromFloor ? low : low - pad, high + pad];
}

const round = (n: number) => Math.round(n * 10) / 10;

/**
 * The quantity axis: from 0 to a little above `highest` in at most five equal steps of whole shares (1, 2,
 * 2.5 or 5 times a power of ten, 2.5 only when that is whole), so that every tick is a whole number.
 */
export function quantityScale(highest: number): { top: number; ticks: number[] } {
  const raw = (highest * 1.1) / 5;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = Math.max(
    1,
    [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw && Number.isInteger(s)) ?? 10 * magnitude,
  );
  const count = Math.ceil((highest * 1.1) / step);
  return { top: step * count, ticks: Array.from({ length: count + 1 }, (_, i) => step * i) };
}

/** A quantity tick's label: the whole number, grouped, while it fits the margin; compact above that. */
const quantityTick = (quantity: number, top: number) =>
  top < 10_000_000 ? formatQuantity(quantity) : formatCompact(quantity);

/** A panel's title in lines that fit the chart's width, and how much taller than one line they make it. */
function titleLines(data: DemandPanel, width: number): string[] {
  return wrap(`${data.label}: ${data.title ?? 'cumulative demand by price'}`, width, TITLE_PX, true);
}

/** Spots in rows from `y` down, `count` of them, left or right of `x`. */
const rows = (x: number, y: number, count: number, gap = 4): Spot[] =>
  Array.from({ length: count }, (_, k) => [
    { x: x + gap, y: y + k * LINE_PX, anchor: 'start' as const },
    { x: x - gap, y: y + k * LINE_PX, anchor: 'end' as const },
  ]).flat();

/** A label's text element at the spot `labels` found for it, or null when it found none. */
function label(
  labels: Labels,
  texts: string[],
  spots: Spot[],
  className: string,
  px = TEXT_PX,
  bold = false,
): SVGTextElement | null {
  const spot = labels.place(texts, spots, px, bold);
  if (spot === null) return null;
  return s('text', { x: spot.x, y: spot.y, class: `${className} anchor-${spot.anchor}` }, lines(texts, spot.x));
}

function panel(
  data: DemandPanel,
  options: ChartOptions,
  width: number,
  domain: [number, number],
  top: number,
): { group: SVGGElement; height: number } {
  const { side, steps, allotted } = data;
  const { idPrefix } = options;
  const offer = data.offer.quantity;
  const portion = data.portion?.quantity ?? offer;
  const title = titleLines(data, width);
  const extra = (title.length - 1) * LINE_PX;
  const height = PANEL_HEIGHT + extra;
  const plotWidth = width - MARGIN.left - MARGIN.right;
  const plotHeight = PANEL_HEIGHT - MARGIN.top - MARGIN.bottom;
  // The quantity axis fits the demand and the allotment. The offer and the portion share it while they are
  // at most four times the demand; above that they would flatten the demand into the axis, so they are
  // named at the top of the panel instead of drawn.
  const demandHigh = Math.max(4, ...steps.map((step) => step.cumulative), ...allotted.map((level) => level.quantity));
  const fits = (quantity: number) => quantity <= demandHigh * 4;
  const scale = quantityScale(Math.max(demandHigh, ...[offer, portion].filter(fits)));
  const x = (price: number) => round(MARGIN.left + ((price - domain[0]) / (domain[1] - domain[0])) * plotWidth);
  const plotTop = top + MARGIN.top + extra;
  const y = (quantity: number) => round(plotTop + plotHeight - (quantity / scale.top) * plotHeight);
  const bottom = y(0);
  const left = MARGIN.left;
  const right = width - MARGIN.right;
  const titleId = `${idPrefix}-panel-${side}`;
  const labels = new Labels(width, top + height);

  const group = s('g', { class: `panel panel-${side}`, role: 'group', 'aria-labelledby': titleId });
  labels.take(title, { x: 0, y: top + 18, anchor: 'start' }, TITLE_PX, true);
  group.append(s('text', { id: titleId, x: 0, y: top + 18, class: 'panel-title' }, lines(title, 0)));
  for (const q of scale.ticks) {
    const text = quantityTick(q, scale.top);
    labels.take([text], { x: left - 8, y: y(q) + 4, anchor: 'end' });
    group.append(
      s('line', { x1: left - 4, y1: y(q), x2: right, y2: y(q), class: 'grid' }),
      s('text', { x: left - 8, y: y(q) + 4, class: 'tick tick-y' }, text),
    );
  }
  const axisLabel = 'Price (Rs)';
  labels.take([axisLabel], { x: right, y: bottom + 32, anchor: 'end' });
  group.append(s('text', { x: right, y: bottom + 32, class: 'axis-label axis-label-x' }, axisLabel));
  // Price ticks on biddable prices, as many as their labels leave room for.
  const widest = textWidth(formatPrice(domain[1])) + TICK_GAP;
  const floorValue = options.floor?.value ?? null;
  for (const p of priceTicks(
    domain[0],
    domain[1],
    floorValue,
    options.tick ?? 0.05,
    Math.min(8, Math.floor(plotWidth / widest)),
  )) {
    group.append(
      label(
        labels,
        [formatPrice(p)],
        [
          { x: x(p), y: bottom + 16, anchor: 'middle' },
          { x: x(p), y: bottom + 16, anchor: 'start' },
          { x: x(p), y: bottom + 16, anchor: 'end' },
        ],
        'tick tick-x',
      ) ?? '',
    );
  }
  group.append(
    s('line', { x1: left, y1: bottom, x2: right, y2: bottom, class: 'axis' }),
    s('line', { x1: left, y1: plotTop, x2: left, y2: bottom, class: 'axis' }),
  );
  // The floor and the cut-off: thin vertical lines across the plot (presentation attributes, in the text's
  // colour: app.css has no rule for them), labelled in the strip above it, or else inside the plot.
  for (const [marker, kind, dash] of [
    [options.floor, 'floor', '2 3'],
    [data.cutoff ?? null, 'cutoff', '6 3'],
  ] as const) {
    if (marker === null || marker.value < domain[0] || marker.value > domain[1]) continue;
    const mx = x(marker.value);
    group.append(
      s('line', {
        x1: mx,
        y1: plotTop - 4,
        x2: mx,
        y2: bottom,
        class: `marker marker-${kind}`,
        stroke: 'currentColor',
        'stroke-width': 1.5,
        'stroke-dasharray': dash,
      }),
      label(
        labels,
        [`${marker.label} ${formatPrice(marker.value)}`],
        [...rows(mx, plotTop - 8, 1), ...rows(mx, plotTop + 12, 6)],
        `marker-label marker-label-${kind}`,
      ) ?? '',
    );
  }
  const rightRows = (y0: number) =>
    Array.from({ length: 8 }, (_, k): Spot => ({ x: right - 2, y: y0 + k * LINE_PX, anchor: 'end' }));
  if (fits(offer)) {
    const oy = y(offer);
    group.append(
      s('line', { x1: left, y1: oy, x2: right, y2: oy, class: 'offer' }),
      label(
        labels,
        [`${data.offer.label} ${formatQuantity(offer)}`],
        [
          { x: right, y: oy - 5, anchor: 'end' },
          { x: right, y: oy + 14, anchor: 'end' },
          { x: left + 4, y: oy - 5, anchor: 'start' },
          { x: left + 4, y: oy + 14, anchor: 'start' },
        ],
        'marker-label',
      ) ?? '',
    );
  } else {
    const share = ((100 * Math.max(...steps.map((step) => step.cumulative), 0)) / offer).toFixed(2);
    group.append(
      label(
        labels,
        wrap(`${data.offer.label} ${formatQuantity(offer)} above the scale (${share} % bid)`, plotWidth - 8),
        rightRows(plotTop + 12),
        'marker-label offer-off-scale',
      ) ?? '',
    );
  }
  if (data.portion !== null && portion !== offer && fits(portion)) {
    const py = y(portion);
    group.append(
      s('line', { x1: left, y1: py, x2: right, y2: py, class: 'portion' }),
      label(
        labels,
        [`${data.portion.label} ${formatQuantity(portion)}`],
        [
          { x: right, y: py + 14, anchor: 'end' },
          { x: right, y: py - 5, anchor: 'end' },
          { x: left + 4, y: py + 14, anchor: 'start' },
          { x: left + 4, y: py - 5, anchor: 'start' },
        ],
        'marker-label',
      ) ?? '',
    );
  }
  if (data.price !== null) {
    const cx = x(data.price.value);
    // At the top of the line, right of it or left of it, lower down while the offer's note or another label
    // is there; at its foot as a last resort.
    group.append(
      s('line', { x1: cx, y1: plotTop, x2: cx, y2: bottom, class: 'clearing' }),
      label(
        labels,
        [`${data.price.label} ${formatPrice(data.price.value)}`],
        [...rows(cx, plotTop + 12, 8), ...rows(cx, bottom - 8, 1)],
        'marker-label',
      ) ?? '',
    );
  }
  if (steps.length > 0) {
    // Left of the lowest price every bid counts; past each price the line drops to the demand above it.
    let path = `M${x(domain[0])},${y(steps[0]!.cumulative)}`;
    steps.forEach((step, i) => {
      path += ` H${x(step.price)} V${y(steps[i + 1]?.cumulative ?? 0)}`;
    });
    group.append(s('path', { d: `${path} H${x(domain[1])}`, class: `demand demand-${side}` }));
  }
  // What was allotted at each trade price, drawn over the demand it was allotted from.
  for (const level of allotted) {
    group.append(
      s(
        'rect',
        {
          x: x(level.price) - 4,
          y: y(level.quantity),
          width: 8,
          height: round(bottom - y(level.quantity)),
          class: `allotted allotted-${side}`,
        },
        s('title', {}, `${formatPrice(level.price)}: ${formatQuantity(level.quantity)} shares allotted`),
      ),
    );
  }
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
  return { group, height };
}

/** The panels, one under the other on one price axis, as an image named by the caption and described by the description. */
export function demandChart(panels: DemandPanel[], options: ChartOptions): SVGSVGElement {
  const domain = priceDomain(options.prices, options.floor?.value ?? null);
  const titleId = `${options.idPrefix}-chart-title`;
  const descId = `${options.idPrefix}-chart-desc`;
  const svg = s('svg', { class: 'book-chart', role: 'img', 'aria-labelledby': `${titleId} ${descId}` });
  const title = s('title', { id: titleId }, options.caption);
  const desc = s('desc', { id: descId }, options.description);
  atShownWidth(svg, options.width, (width) => {
    let top = 0;
    const groups = panels.map((data) => {
      const { group, height } = panel(data, options, width, domain, top);
      top += height;
      return group;
    });
    svg.setAttribute('viewBox', `0 0 ${width} ${top}`);
    svg.replaceChildren(title, desc, ...groups);
  });
  return svg;
}

/** A series the legend may name: `drawn` selects what the chart draws of it. */
export interface LegendEntry {
  drawn: string;
  className: string;
  label: string;
}

/** The legend of a chart: the entries it draws, and no other (null when it draws none of them). */
export function chartLegend(chart: SVGSVGElement, entries: readonly LegendEntry[]): HTMLUListElement | null {
  const drawn = entries.filter((entry) => chart.querySelector(entry.drawn) !== null);
  if (drawn.length === 0) return null;
  return h(
    'ul',
    { class: 'legend', 'aria-label': 'Legend' },
    drawn.map((entry) => h('li', { class: entry.className }, entry.label)),
  );
}

/** What a sighted reader takes from one panel, as a sentence. */
export function describeSide(book: OfsBook, side: Side, label: string): string {
  const figures = bookFigures(book);
  const steps = demandSteps(figures, side);
  const clearing = figures.clearing[side];
  const parts = [
    `${label}: ${formatQuantity(clearing.demand)} shares bid against an offer of ${formatQuantity(book.offer[side])} (portion ${formatQuantity(clearing.portion)})`,
  ];
  if (steps.length > 0)
    parts.push(`at prices from ${formatPrice(steps[0]!.price)} to ${formatPrice(steps[steps.length - 1]!.price)}`);
  parts.push(
    clearing.price === null
      ? 'no clearing price: the demand fits the portion'
      : `clearing price ${formatPrice(clearing.price)}`,
  );
  if (book.allotted !== null) parts.push(`${formatQuantity(book.allotted[side])} allotted`);
  return `${parts.join(', ')}.`;
}

/** The prices marked on the chart, as a sentence. */
function describeMarkers(book: OfsBook): string {
  const { floor_price: floor, retail_cutoff_price: cutoff } = book.issue;
  return `Floor price ${formatPrice(floor)}${cutoff === null ? '; no retail cut-off price' : `; retail cut-off price ${formatPrice(cutoff)}`}.`;
}

/** The legend entries of an issue's book. */
export const BOOK_LEGEND: readonly LegendEntry[] = [
  { drawn: 'path.demand-retail', className: 'legend-retail', label: 'Retail demand' },
  { drawn: 'path.demand-non_retail', className: 'legend-non-retail', label: 'Non-retail demand' },
  { drawn: 'line.offer', className: 'legend-offer', label: 'Offer' },
  { drawn: 'line.clearing', className: 'legend-clearing', label: 'Clearing price' },
  { drawn: 'rect.allotted', className: 'legend-allotted', label: 'Allotted at a price' },
];

/**
 * An issue's book: before the allocation its live demand, after it the demand the allocation took with what
 * it allotted drawn over it. `width` in the chart's own units.
 */
export function bookChart(book: OfsBook, caption: string, width: number): SVGSVGElement {
  const figures = bookFigures(book);
  const { floor_price: floor, retail_cutoff_price: cutoff } = book.issue;
  const prices = [
    floor,
    ...(cutoff === null ? [] : [cutoff]),
    ...figures.demand.map((level) => level.price),
    ...(book.allotted?.by_price ?? []).map((level) => level.price),
    ...SIDES.map(({ side }) => figures.clearing[side].price ?? floor),
  ];
  const panels = SIDES.map(({ side, label }): DemandPanel => {
    const clearing = figures.clearing[side];
    return {
      side,
      label,
      title:
        book.allotted === null ? 'cumulative demand by price' : 'cumulative demand at close by price, and allotted',
      steps: demandSteps(figures, side),
      offer: { quantity: book.offer[side], label: 'Offer' },
      portion: { quantity: clearing.portion, label: 'Portion' },
      price: clearing.price === null ? null : { value: clearing.price, label: 'Clearing' },
      allotted: allottedAt(book, side),
      cutoff: side === 'retail' && cutoff !== null ? { value: cutoff, label: 'Cut-off' } : null,
    };
  });
  const description = [...SIDES.map(({ side, label }) => describeSide(book, side, label)), describeMarkers(book)].join(
    ' ',
  );
  return demandChart(panels, {
    prices,
    floor: { value: floor, label: 'Floor' },
    caption,
    description,
    idPrefix: 'book',
    width,
    tick: book.issue.tick_size,
  });
}
