/**
 * The allotment explained in the console (issue 51), in headless Chromium set to New York time, against an
 * in-process server whose clock the test moves through a two-day offer (T is Tuesday 1 December 2026,
 * settled by trading day) and an OMS worker the test runs pass by pass. An NII trader bids 600 at 102.00,
 * over the single-bidder cap of 250 (25 % of 1,000), and 100 at 100.50. The T allocation allots the cap and
 * finds the cut-off at 101.00: the 100 at 100.50 are below it. The trader carries the capped bid's 350
 * forward; T+1 has no retail demand, yet the carried-forward 350 get nothing: the trader is at the cap. The
 * offer's card (on a phone) and the order's details (on a desktop) say so: each bid's outcome, each day's
 * reason in words, the funds debited and released, the pay-out in India time, and no error code or UTC
 * time anywhere. Screenshots go to test-artifacts/console-allotment/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { ROOT } from '../cli/run-ordergate.js';
import { chromiumRuns, CSP_REPORTER, launchChromium, watchProblems } from '../support/chromium.js';
import { logIn, openView } from '../support/console-page.js';
import { deltaOffer } from '../support/offers.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console-allotment');
const STEP_MS = 20_000;
const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;
/** T opens 09:15 India time on Tuesday 1 December and closes at 15:30; T+1 the same hours on Wednesday. */
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const T1 = T + DAY;
const T1_CLOSE = T_CLOSE + DAY;
const OFFER_ID = 'DELTA-OFS-1';
const NSE = {
  exchange: 'NSE_EQ',
  scrip_token: 700004,
  symbol: 'DELTA',
  series: 'IS',
  expiry_date: '',
  strike_price: '',
  option_type: '',
};
const VIEWPORTS = {
  desktop: { width: 1366, height: 800 },
  phone: { width: 390, height: 844 },
} as const;

const runs = chromiumRuns('test/e2e/console-allotment.test.ts');

describe.runIf(runs)('the allotment explained, in the console', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let browser: Browser;
  let trader: TestUser;
  /** Console errors, page errors and CSP violations seen in the pages. */
  const problems: string[] = [];
  const bids = {} as { capped: string; below: string };

  const place = (user: TestUser, quantity: number, price: number) => server.placeBid(user, NSE, quantity, price);
  const order = (orderId: string) => server.orderOf(trader, orderId);

  /** A page in a browser context of its own, set to New York time, logged in as the trader. */
  async function openPage(viewport: (typeof VIEWPORTS)[keyof typeof VIEWPORTS]): Promise<{
    context: BrowserContext;
    page: Page;
  }> {
    const context = await browser.newContext({ viewport, timezoneId: 'America/New_York' });
    context.setDefaultTimeout(STEP_MS);
    const page = await context.newPage();
    watchProblems(page, problems);
    await page.addInitScript(CSP_REPORTER);
    await logIn(page, server.url, { user_id: trader.userId, password: trader.password, api_key: trader.apiKey });
    return { context, page };
  }

  const text = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, ' ').trim();

  /** Words a trader reads: no error code, no JSON path, no UTC instant. */
  function inTradersWords(words: string): void {
    expect(words).not.toMatch(/\be-\d{3}\b/);
    expect(words).not.toMatch(/\d{4}-\d\d-\d\dT\d\d:\d\d/);
    expect(words).not.toMatch(/\bUTC\b|\dZ\b/);
    expect(words).not.toMatch(/orders\[\d+\]|\bdata\b/);
  }

  beforeAll(async () => {
    await ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    server = await startTestServer({ now: T + 5 * 60 * MINUTE }); // 14:15 India time on T
    // 1,000 shares, no green shoe: the single-bidder cap is 250, the non-retail portion 875 (MF/IC first 250).
    await server.admin.importOfs([
      deltaOffer(
        {
          offer_id: OFFER_ID,
          green_shoe_quantity: 0,
          employee_quantity: 20,
        },
        T,
      ),
    ]);
    trader = await server.createUser('nii1', { category: 'NII' });
    const other = await server.createUser('nii2', { category: 'NII' });
    const fund = await server.createUser('mf1', { category: 'MF' });
    await server.deposit('nii1', '100000');
    await server.deposit('nii2', '100000');
    await server.deposit('mf1', '100000');
    oms = server.omsWorker('console-allotment');

    // T: the fund's 500 at 101.50 take the MF/IC reservation's 250 and 250 more; the trader's capped 250 at
    // 102.00 go first; the other NII's 250 (capped) at 101.00 get the 125 left: the cut-off is 101.00.
    bids.capped = await place(trader, 600, 102);
    bids.below = await place(trader, 100, 100.5);
    await place(other, 800, 101);
    await place(fund, 500, 101.5);
    await oms.runOnce();
    server.clock.now = T_CLOSE + MINUTE;
    await oms.runOnce(); // the T allocation
    expect(await order(bids.capped)).toMatchObject({ traded_quantity: 250, traded_price: '102.00' });
    expect(await order(bids.below)).toMatchObject({ traded_quantity: 0 });

    // T+1: the capped bid's 350 go forward; no retail bid comes; the T+1 allocation gives them nothing.
    server.clock.now = T1 + 15 * MINUTE;
    trader = await server.logInAgain(trader); // T's session has ended overnight
    const carried = await server.call('POST', `/transactional/v1/orders/regular/NSE_EQ/${bids.capped}/carry_forward`, {
      token: trader.token,
      apiKey: trader.apiKey,
    });
    expect(carried.status, carried.text).toBe(200);
    await oms.runOnce();
    expect(await order(bids.capped)).toMatchObject({ carried_forward: true });
    server.clock.now = T1_CLOSE + MINUTE;
    await oms.runOnce(); // the T+1 allocation
    await oms.runOnce();
    trader = await server.logInAgain(trader);
    expect(await order(bids.capped)).toMatchObject({ status: 'EXECUTED', traded_quantity: 250 });

    browser = await launchChromium(STEP_MS);
  }, 90_000);

  afterAll(async () => {
    expect(problems).toEqual([]);
    await browser?.close();
    await server?.close();
  });

  it("explains on the offer's card, on a phone, what each bid was allotted and why not the rest", async () => {
    const { context, page } = await openPage(VIEWPORTS.phone);
    try {
      await openView(page, 'OFS offers');
      const section = page.locator(`section[data-allotment="${OFFER_ID}"]`);
      await section.waitFor({ state: 'visible' });
      const capped = section.locator(`[data-allotment-order="${bids.capped}"]`);
      const below = section.locator(`[data-allotment-order="${bids.below}"]`);
      await capped.waitFor();

      // The capped bid: 250 of 600 on T, the 350 carried forward got nothing on T+1: the single-bidder cap.
      expect(await capped.getAttribute('data-outcome')).toBe('PART_ALLOTTED');
      expect(await capped.locator('[data-day="T"]').getAttribute('data-reason')).toBe('SINGLE_BIDDER_CAP');
      expect(await capped.locator('[data-day="T+1"]').getAttribute('data-reason')).toBe('SINGLE_BIDDER_CAP');
      const cappedWords = await text(capped);
      expect(cappedWords).toMatch(/single-bidder cap/i);
      expect(cappedWords).toContain('250');
      expect(cappedWords).toContain('102.00');
      // 250 x 102.00 debited; the rest of its block released; paid out Wed 2 Dec at 13:30 India time.
      expect(await text(capped.locator('[data-explanation]'))).toContain('Rs 25,500.00 debited');
      expect(cappedWords).toMatch(/Wed 2 Dec.*13:30 IST/);
      inTradersWords(cappedWords);

      // The bid below the cut-off: nothing on T (below 101.00), and it was not carried forward.
      expect(await below.getAttribute('data-outcome')).toBe('NOT_ALLOTTED');
      expect(await below.locator('[data-day="T"]').getAttribute('data-reason')).toBe('BELOW_CUTOFF');
      expect(await below.locator('[data-day="T+1"]').getAttribute('data-reason')).toBe('NOT_CARRIED_FORWARD');
      const belowWords = await text(below);
      expect(belowWords).toContain('101.00');
      expect(await text(below.locator('[data-explanation]'))).toContain('Rs 10,050.00 released');
      inTradersWords(belowWords);

      // The totals: 700 bid, 250 allotted, 450 not allotted.
      const totals = await text(section.locator('[data-allotment-totals]'));
      expect(totals).toContain('700 bid');
      expect(totals).toContain('250 allotted');
      expect(totals).toContain('450 not allotted');

      // Nothing scrolls sideways on the phone.
      const widths = await page.evaluate<{ scroll: number; viewport: number }>(
        '({ scroll: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth })',
      );
      expect(widths.scroll, `the page is ${widths.scroll} px wide`).toBeLessThanOrEqual(widths.viewport);
      await section.screenshot({ path: join(SCREENSHOTS, 'phone-offer-allotment.png') });
    } finally {
      await context.close();
    }
  });

  it("explains it in the order's details, on a desktop", async () => {
    const { context, page } = await openPage(VIEWPORTS.desktop);
    try {
      await openView(page, 'Orders');
      const row = page.locator(`tr[data-order-id="${bids.capped}"]`);
      await expect.poll(() => row.getAttribute('data-status'), { timeout: STEP_MS }).toBe('EXECUTED');
      await page.getByRole('tab', { name: /^Finished/ }).click();
      await row.getByRole('button', { name: `History of order ${bids.capped}` }).click();
      const details = page.locator(`.allotment-of-order [data-allotment-order="${bids.capped}"]`);
      await details.waitFor();
      expect(await details.getAttribute('data-outcome')).toBe('PART_ALLOTTED');
      const words = await text(details);
      expect(words).toMatch(/single-bidder cap/i);
      inTradersWords(words);
      await page.screenshot({ path: join(SCREENSHOTS, 'desktop-order-allotment.png'), fullPage: true });
    } finally {
      await context.close();
    }
  });
});
