/**
 * What the charts share to keep their text readable: it is drawn at the width the chart is shown at (one
 * unit of the viewBox is one CSS pixel, so 12 px text reads at 12 px on any screen), its labels are
 * measured as the browser will draw them and placed where they overlap no other label and stay inside the
 * chart, and a price axis has its ticks on prices one can bid (the floor plus whole multiples of the tick).
 */

/** The size of a chart's text, in CSS px (app.css: the chart rules), and of a panel's title. */
export const TEXT_PX = 12;
export const TITLE_PX = 13;
/** The distance between two lines of a label. */
export const LINE_PX = 15;

let context: CanvasRenderingContext2D | null | undefined;

/** How wide `text` is drawn in the page's font at `px` (bold for a title), with a little to spare. */
export function textWidth(text: string, px = TEXT_PX, bold = false): number {
  if (context === undefined) context = document.createElement('canvas').getContext('2d');
  if (context === null) return text.length * px * 0.62;
  const family = getComputedStyle(document.documentElement).fontFamily || 'sans-serif';
  context.font = `${bold ? '700 ' : ''}${px}px ${family}`;
  return context.measureText(text).width * 1.04 + 1;
}

/** `text` in lines no wider than `width`, broken between words (a word wider than it stands alone). */
export function wrap(text: string, width: number, px = TEXT_PX, bold = false): string[] {
  const lines: string[] = [];
  for (const word of text.split(' ')) {
    const last = lines[lines.length - 1];
    if (last !== undefined && textWidth(`${last} ${word}`, px, bold) <= width)
      lines[lines.length - 1] = `${last} ${word}`;
    else lines.push(word);
  }
  return lines;
}

export type Anchor = 'start' | 'middle' | 'end';

/** Where a label may go: its anchor point (the first line's baseline) and how it is aligned there. */
export interface Spot {
  x: number;
  y: number;
  anchor: Anchor;
}

interface Box {
  left: number;
  top: number;
  right: number;
  bottom: number;
}

/** The box a label's text takes, from its anchor, with the font's ascent and descent. */
function boxOf(lines: readonly string[], spot: Spot, px: number, bold: boolean): Box {
  const width = Math.max(...lines.map((line, i) => textWidth(i < lines.length - 1 ? `${line} ` : line, px, bold)));
  const left = spot.anchor === 'start' ? spot.x : spot.anchor === 'end' ? spot.x - width : spot.x - width / 2;
  return {
    left,
    right: left + width,
    top: spot.y - px * 0.95,
    bottom: spot.y + px * 0.3 + (lines.length - 1) * LINE_PX,
  };
}

const overlap = (a: Box, b: Box) => a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom;

/**
 * The labels of one chart, placed one by one: each takes the first of its spots where it stays inside the
 * chart and overlaps no label placed before it.
 */
export class Labels {
  private readonly boxes: Box[] = [];

  constructor(
    private readonly width: number,
    private readonly height: number,
  ) {}

  /** The first spot where `lines` fit, or null when none does (the label is then left out). */
  place(lines: readonly string[], spots: readonly Spot[], px = TEXT_PX, bold = false): Spot | null {
    for (const spot of spots) {
      const box = boxOf(lines, spot, px, bold);
      if (box.left < 0 || box.right > this.width || box.top < 0 || box.bottom > this.height) continue;
      if (this.boxes.some((other) => overlap(other, box))) continue;
      this.boxes.push(box);
      return spot;
    }
    return null;
  }

  /** Keeps a label's place whether or not it overlaps (a tick, placed first). */
  take(lines: readonly string[], spot: Spot, px = TEXT_PX, bold = false): void {
    this.boxes.push(boxOf(lines, spot, px, bold));
  }
}

/**
 * Price ticks from `low` to `high` on biddable prices: the floor (or, without one, zero) plus whole
 * multiples of a step that is itself a multiple of the tick (1, 2, 4, 5 times a power of ten ticks), the
 * smallest step that keeps the ticks at most `most`.
 */
export function priceTicks(low: number, high: number, floor: number | null, tick: number, most: number): number[] {
  const base = floor ?? 0;
  const span = Math.max(high - low, tick);
  for (let power = 1; ; power *= 10) {
    for (const m of [1, 2, 4, 5]) {
      const step = tick * m * power;
      if (Math.floor(span / step) + 1 > Math.max(2, most)) continue;
      const first = Math.ceil((low - base) / step - 1e-9);
      const last = Math.floor((high - base) / step + 1e-9);
      return Array.from({ length: Math.max(0, last - first + 1) }, (_, i) =>
        Number((base + (first + i) * step).toFixed(6)),
      );
    }
  }
}

/**
 * Draws a chart with `draw(width)` at `initial`, then again at the width the chart is shown at, each time
 * that changes (the page's width, a phone turned), so that one unit of its viewBox is one CSS pixel.
 */
export function atShownWidth(svg: SVGSVGElement, initial: number, draw: (width: number) => void): void {
  draw(initial);
  let drawn = initial;
  let shown = false;
  if (typeof ResizeObserver === 'undefined') return;
  const observer = new ResizeObserver((entries) => {
    // Taken off the page (the view drew anew): not drawn again.
    if (!svg.isConnected) {
      if (shown) observer.disconnect();
      return;
    }
    shown = true;
    const width = entries[entries.length - 1]?.contentRect.width ?? 0;
    if (width < 200 || Math.abs(width - drawn) < 0.5) return;
    drawn = width;
    draw(width);
  });
  observer.observe(svg);
}

/**
 * A text element's children: its lines as tspans under one another (each but the last ending in a space,
 * so that its text reads as the words it is), or its one line.
 */
export function lines(texts: readonly string[], x: number): (string | SVGTSpanElement)[] | string {
  return texts.length === 1
    ? texts[0]!
    : texts.map((line, i) => tspan(i < texts.length - 1 ? `${line} ` : line, x, i === 0 ? 0 : LINE_PX));
}

function tspan(text: string, x: number, dy: number): SVGTSpanElement {
  const element = document.createElementNS('http://www.w3.org/2000/svg', 'tspan');
  element.setAttribute('x', String(x));
  element.setAttribute('dy', String(dy));
  element.textContent = text;
  return element;
}
