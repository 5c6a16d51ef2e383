/**
 * Holdings one per company (issue 51): the API answers one holding per exchange listing and bidding series,
 * as ODIN's clients expect it (SBIN bought as retail in RS and as non-retail in IS on NSE, and in A on BSE);
 * the console shows one row per company, its quantity, average price, cost and latest settlement summed over
 * its lots, and each lot inside it (listing, series, quantity, average price, cost, settled). `npm start`'s
 * server on the demo's SQLite file, the holdings answered a made-up list; Chromium in New York time, on a
 * 1366x800 desktop and a 390x844 phone. Screenshots in test-artifacts/console-holdings/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chromiumRuns, CSP_REPORTER, launchChromium, watchProblems } from '../support/chromium.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { ROOT } from '../cli/run-ordergate.js';
import type { ServerProcess } from '../support/server-process.js';
import { demoWorkspace, startDemoServer, stopDemoServer } from '../support/demo-server.js';
import { logIn, openView } from '../support/console-page.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console-holdings');
const STEP_MS = 20_000;
const runs = chromiumRuns('test/e2e/console-holdings.test.ts');

const holding = (
  exchange: string,
  scrip_token: number,
  symbol: string,
  series: string,
  quantity: number,
  average_price: string,
  value: string,
  settled_at: string,
) => ({
  exchange,
  scrip_token,
  symbol,
  series,
  product_type: 'OFS',
  quantity,
  average_price,
  value,
  last_traded: settled_at,
  settled_at,
});
/** SBIN in three lots (two series on NSE, one on BSE), BETA in one. */
const HOLDINGS = [
  holding('NSE_EQ', 500112, 'SBIN', 'RS', 40, '100.00', '4000.00', '2026-04-16 10:00:05'),
  holding('NSE_EQ', 700002, 'BETA', 'IS', 250, '101.00', '25250.00', '2026-04-16 10:00:05'),
  holding('NSE_EQ', 500112, 'SBIN', 'IS', 100, '101.50', '10150.00', '2026-04-15 16:30:00'),
  holding('BSE_EQ', 543210, 'SBIN', 'A', 60, '102.00', '6120.00', '2026-04-17 09:15:00'),
];

describe.runIf(runs)('holdings one per company, in headless Chromium', () => {
  const { dir, env } = demoWorkspace('ordergate-console-holdings-');
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  const problems: string[] = [];
  const text = async (locator: ReturnType<Page['locator']>) => (await locator.innerText()).replace(/\s+/g, ' ').trim();

  beforeAll(async () => {
    await ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    let demo: { user_id: string; password: string; api_key: string };
    ({ server, demo } = await startDemoServer<typeof demo>(env));
    browser = await launchChromium(STEP_MS);
    context = await browser.newContext({ viewport: { width: 1366, height: 800 }, timezoneId: 'America/New_York' });
    context.setDefaultTimeout(STEP_MS);
    await context.addInitScript(CSP_REPORTER);
    page = await context.newPage();
    watchProblems(page, problems, { label: 'holdings' });
    await page.route(/\/transactional\/v1\/portfolio\/holdings$/, (route) =>
      route.fulfill({
        json: { status: 'success', code: 's-101', message: 'Holdings fetched successfully', data: HOLDINGS },
      }),
    );
    await logIn(page, server.url, demo);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopDemoServer(server, dir);
  });

  const holdings = () =>
    page.getByRole('table', { name: /^Holdings: settled shares, one per company/ }).locator('tbody');

  it('shows one holding per company, summed over its exchange listings and series', async () => {
    await openView(page, 'Funds and holdings');
    await holdings().locator('tr.holding-row').first().waitFor();
    expect(
      await holdings()
        .locator('tr.holding-row')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-symbol'))),
    ).toEqual(['SBIN', 'BETA']);
    // 40 + 100 + 60 shares costing 4,000 + 10,150 + 6,120: 200 at 101.35, settled last on 17 Apr.
    expect(await text(holdings().locator('tr.holding-row[data-symbol="SBIN"]'))).toBe(
      'SBIN 3 lots 200 101.35 Rs 20,270.00 17 Apr 2026, 09:15:00 IST',
    );
    expect(await text(holdings().locator('tr.holding-row[data-symbol="BETA"]'))).toBe(
      'BETA 1 lot 250 101.00 Rs 25,250.00 16 Apr 2026, 10:00:05 IST',
    );
    // The company is named once: no row says a bidding series as if it were the holding.
    const companyCells = await holdings().locator('tr.holding-row td[data-label="Company"]').allInnerTexts();
    for (const cell of companyCells) expect(cell).not.toMatch(/\b(RS|IS|OF|A)\b|_EQ/);
  });

  it('keeps the lots inside each company: listing, series, quantity, average price, cost, settled', async () => {
    const lots = holdings().locator('tr.lot-row[data-symbol="SBIN"]');
    expect(await lots.count()).toBe(3);
    expect(await Promise.all((await lots.all()).map((lot) => text(lot)))).toEqual([
      'NSE 500112, bid in RS 40 100.00 Rs 4,000.00 16 Apr 2026, 10:00:05 IST',
      'NSE 500112, bid in IS 100 101.50 Rs 10,150.00 15 Apr 2026, 16:30:00 IST',
      'BSE 543210, bid in A 60 102.00 Rs 6,120.00 17 Apr 2026, 09:15:00 IST',
    ]);
    // Each lot follows its company's row, indented under it.
    const order = await holdings()
      .locator('tr')
      .evaluateAll((rows) => rows.map((row) => `${row.className}:${row.getAttribute('data-symbol')}`));
    expect(order).toEqual([
      'holding-row:SBIN',
      'lot-row:SBIN',
      'lot-row:SBIN',
      'lot-row:SBIN',
      'holding-row:BETA',
      'lot-row:BETA',
    ]);
    const company = await holdings().locator('tr.holding-row[data-symbol="SBIN"] td').first().boundingBox();
    const lot = await lots
      .first()
      .locator('td')
      .first()
      .evaluate((cell) => {
        const { getComputedStyle } = globalThis as unknown as { getComputedStyle(e: unknown): { paddingLeft: string } };
        return parseFloat(getComputedStyle(cell).paddingLeft);
      });
    expect(company).not.toBeNull();
    expect(lot).toBeGreaterThan(12);
    await page.screenshot({ path: join(SCREENSHOTS, '01-desktop.png'), fullPage: true });
  });

  it('fits a 390 px phone: a card per company, its lots indented under it, nothing scrolling sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    try {
      const widths = await page.evaluate<{ scroll: number; viewport: number }>(
        '({ scroll: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth })',
      );
      expect(widths.scroll).toBeLessThanOrEqual(widths.viewport);
      const company = (await holdings().locator('tr.holding-row[data-symbol="SBIN"]').boundingBox())!;
      const lot = (await holdings().locator('tr.lot-row[data-symbol="SBIN"]').first().boundingBox())!;
      expect(lot.x).toBeGreaterThan(company.x);
      expect(lot.y).toBeGreaterThanOrEqual(company.y + company.height);
      expect(await holdings().locator('tr.holding-row[data-symbol="SBIN"] td[data-label="Quantity"]').innerText()).toBe(
        '200',
      );
      await page.screenshot({ path: join(SCREENSHOTS, '02-phone.png'), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1366, height: 800 });
    }
  });

  it('logged no console error and broke no CSP rule', () => {
    expect(problems).toEqual([]);
  });
});
