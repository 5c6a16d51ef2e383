/**
 * Steps of a trader in the console that the browser tests (and `npm run screenshots`) share: logging in,
 * and opening a view from the header, through its Menu button on a phone.
 */
import type { Locator, Page } from 'playwright-core';

export interface ConsoleLogin {
  user_id: string;
  password: string;
  api_key: string;
}

/** Opens the console at `baseUrl` and logs in; resolves once the first view shows. */
export async function logIn(page: Page, baseUrl: string, login: ConsoleLogin): Promise<void> {
  await page.goto(`${baseUrl}/console/`);
  await page.locator('input[name="user_id"]').fill(login.user_id);
  await page.locator('input[name="password"]').fill(login.password);
  await page.locator('input[name="api_key"]').fill(login.api_key);
  await page.locator('input[name="api_key"]').press('Enter');
  await page.getByRole('heading', { level: 2, name: 'OFS issues' }).waitFor();
}

/** Opens a view by its link in the header (opening the phone's menu first), and waits for the focus on its heading. */
export async function openView(page: Page, label: string): Promise<void> {
  const menu = page.getByRole('button', { name: 'Menu' });
  if ((await menu.isVisible()) && (await menu.getAttribute('aria-expanded')) !== 'true') await menu.click();
  await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: label, exact: true }).click();
  // Polled with evaluate, which the page's CSP does not judge (waitForFunction's polling evals a string in the page).
  const deadline = Date.now() + FOCUS_TIMEOUT_MS;
  while ((await page.evaluate('document.activeElement?.tagName')) !== 'H2') {
    if (Date.now() > deadline)
      throw new Error(`the focus did not reach ${label}'s heading within ${FOCUS_TIMEOUT_MS} ms`);
    await page.waitForTimeout(20);
  }
}

const FOCUS_TIMEOUT_MS = 20_000;

/** How a table row lies on the page: its height, how many lines its cells take, and its tallest cell's height. */
export interface RowLayout {
  height: number;
  lines: number;
  tallestCell: number;
}

/** The layout of `row` (a <tr>): cells whose boxes overlap vertically are on one line. */
export function rowLayout(row: Locator): Promise<RowLayout> {
  return row.evaluate((tr) => {
    const boxes = [...tr.children]
      .map((cell) => cell.getBoundingClientRect())
      .filter((box) => box.width > 0 && box.height > 0);
    const lines: { top: number; bottom: number }[] = [];
    for (const box of boxes.sort((a, b) => a.top - b.top)) {
      const line = lines.find((l) => box.top < l.bottom - 2 && box.bottom > l.top + 2);
      if (line === undefined) lines.push({ top: box.top, bottom: box.bottom });
      else line.bottom = Math.max(line.bottom, box.bottom);
    }
    return {
      height: tr.getBoundingClientRect().height,
      lines: lines.length,
      tallestCell: Math.max(...boxes.map((box) => box.height)),
    };
  });
}

/** The smallest size, in CSS pixels as drawn, of the text in the SVG charts `charts` finds (the function runs in the page). */
export function smallestChartText(charts: Locator): Promise<number> {
  return charts.evaluateAll((svgs) => {
    type Svg = {
      viewBox: { baseVal: { width: number } };
      getBoundingClientRect(): { width: number };
      querySelectorAll(selector: string): ArrayLike<unknown>;
    };
    const { getComputedStyle } = globalThis as unknown as { getComputedStyle(element: unknown): { fontSize: string } };
    return Math.min(
      ...(svgs as unknown as Svg[]).flatMap((svg) => {
        const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
        return Array.from(svg.querySelectorAll('text'), (text) => parseFloat(getComputedStyle(text).fontSize) * scale);
      }),
    );
  });
}

/** The text `locator` shows, without what `leaveOut` finds in it (e.g. a details line for support). */
export function textWithout(locator: Locator, leaveOut: string): Promise<string> {
  return locator.evaluate((element, selector) => {
    const copy = element.cloneNode(true) as typeof element;
    for (const part of copy.querySelectorAll(selector)) part.remove();
    return (copy.textContent ?? '').replace(/\s+/g, ' ').trim();
  }, leaveOut);
}
