/**
 * The width a chart is drawn at, in the units of its viewBox. A chart's SVG is stretched to its box, so on a
 * phone it is drawn at the width its box will have (the page's content less a card's padding), so that its
 * 12 px text reads at 12 px rather than shrunk; on a wider screen at `desktop`, as wide as the view lets a
 * chart be.
 */
const PHONE_QUERY = '(max-width: 40rem)';

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
