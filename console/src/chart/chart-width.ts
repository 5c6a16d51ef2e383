/**
 * The width a chart is first drawn at, in the units of its viewBox: on a phone the width its box will have
 * (the page's content less a card's padding), on a wider screen `desktop`. Once shown, a chart is drawn
 * again at the width it is shown at (layout.ts: atShownWidth), so that its text is 12-13 px on any screen;
 * this first width only spares a phone a second drawing.
 */
export const PHONE_QUERY = '(max-width: 40rem)';

/** A card's padding and border on both sides (app.css: .card), and the least width a chart is drawn at. */
const CARD_CHROME_PX = 2 * (16 + 1);
const NARROWEST_PX = 260;

export function chartWidth(desktop: number): number {
  if (!window.matchMedia(PHONE_QUERY).matches) return desktop;
  const main = document.getElementById('main');
  if (main === null) return desktop;
  const style = getComputedStyle(main);
  const content = main.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
  return Math.max(NARROWEST_PX, Math.floor(content - CARD_CHROME_PX));
}
