/**
 * The offer's card through a two-day offer (issue 51), in headless Chromium at a desktop's 1366 x 800 and
 * a phone's 390 x 844, the browser in New York's time zone, against an in-process server whose clock the
 * test moves (T is Tuesday 1 December 2026, settled by trading day) and an OMS worker run pass by pass.
 * On T: on the phone the ticket's Review bid button and the indicative price are on the first screen, the
 * offer's terms folded in a closed "Offer terms"; on both, the published demand: the non-retail shares bid
 * against the non-retail portion ("subscribed 1.8 times"), by margin type. After the T allocation: a banner
 * with the T-day cut-off and T+1's opening in IST, said once by a status line; the indicative price kept,
 * labelled as the final figures at T close, on T+1 and after the T+1 allocation. The operator's book of
 * the offer on a phone folds the categories and listings with no bids into one line, so that the page
 * stays short. Screenshots go to test-artifacts/console-offer-card/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { UserRepository } from '../../src/store/access/users.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { ROOT } from '../cli/run-ordergate.js';
import { chromiumRuns, CSP_REPORTER, launchChromium, watchProblems } from '../support/chromium.js';
import { logIn, openView } from '../support/console-page.js';
import { deltaOffer } from '../support/offers.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console-offer-card');
const STEP_MS = 20_000;
const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;
/** T opens 09:15 India time on Tuesday 1 December and closes at 15:30 (the green shoe's default stands then). */
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const T1 = T + DAY;
const T1_CLOSE = T1 + 375 * MINUTE;
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
const DESKTOP = { width: 1366, height: 800 };
const PHONE = { width: 390, height: 844 };

const runs = chromiumRuns('test/e2e/console-offer-card.test.ts');

describe.runIf(runs)("an offer's card through its two days, on a desktop and a phone", () => {
  let server: TestServer;
  let oms: OmsWorker;
  let browser: Browser;
  const contexts: BrowserContext[] = [];
  let desktop: Page;
  let phone: Page;
  let trader: TestUser;
  let fund: TestUser;
  let ops: TestUser;
  const problems: string[] = [];

  const card = (page: Page) => page.locator(`article[data-offer="${OFFER_ID}"]`);
  const text = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, ' ').trim();
  const shot = (page: Page, name: string) =>
    page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  /** How far down the page `locator`'s bottom edge lies, in CSS px, the page scrolled to its top. */
  const bottomOf = async (page: Page, locator: Locator) => {
    await page.evaluate('window.scrollTo(0, 0)');
    const box = await locator.boundingBox();
    expect(box, 'the element is shown').not.toBeNull();
    return box!.y + box!.height;
  };
  const pageHeight = (page: Page) => page.evaluate<number>('document.documentElement.scrollHeight');

  async function newPage(label: string, viewport: { width: number; height: number }): Promise<Page> {
    const context = await browser.newContext({ viewport, timezoneId: 'America/New_York' });
    contexts.push(context);
    const page = await context.newPage();
    page.setDefaultTimeout(STEP_MS);
    watchProblems(page, problems, { label });
    await page.addInitScript(CSP_REPORTER);
    return page;
  }

  const login = (page: Page, user: TestUser) =>
    logIn(page, server.url, { user_id: user.userId, password: user.password, api_key: user.apiKey });

  const place = (user: TestUser, quantity: number, price: number) => server.placeBid(user, NSE, quantity, price);

  beforeAll(async () => {
    await ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    // 14:15 India time on T.
    server = await startTestServer({ now: T + 5 * 60 * MINUTE });
    // 1,000 shares (a green shoe of 200, not exercised), 12.5 % retail: non-retail 875, of which 250 for MF
    // and IC first, at most 250 to one bidder; employees 20.
    await server.admin.importOfs([
      deltaOffer(
        {
          offer_id: OFFER_ID,
          green_shoe_quantity: 200,
          employee_quantity: 20,
        },
        T,
      ),
    ]);
    trader = await server.createUser('nii4', { category: 'NII' });
    fund = await server.createUser('mf4', { category: 'MF' });
    // A retail trader who is an operator too: it reads the offer's book.
    ops = await server.createUser('ops4', { category: 'RETAIL' });
    const users = new UserRepository(server.store.db, server.store.dialect);
    await users.setOperator('ops4', server.clock.now);
    await server.deposit('nii4', '100000');
    await server.deposit('ops4', '100000');
    oms = server.omsWorker('console-offer-card');
    browser = await launchChromium(STEP_MS);
    desktop = await newPage('desktop', DESKTOP);
    phone = await newPage('phone', PHONE);
    await login(desktop, trader);
    await login(phone, trader);
  }, 60_000);

  afterAll(async () => {
    for (const context of contexts) await context.close().catch(() => undefined);
    await browser?.close();
    await server?.close();
  });

  it('on T, the published demand: 1,575 non-retail shares against the portion of 875, subscribed 1.8 times', async () => {
    // MF 700 at 102.00; the trader 400 at 101.50 and 475 at 100.50: 1,575 shares, all at 100 % margin.
    await place(fund, 700, 102);
    await place(trader, 400, 101.5);
    await place(trader, 475, 100.5);
    await oms.runOnce(); // accepted, and the indicative price published
    for (const page of [desktop, phone]) {
      await openView(page, 'OFS offers');
      const line = card(page).locator('[data-demand="non_retail"]');
      await expect.poll(() => line.count(), { timeout: STEP_MS }).toBe(1);
      await expect
        .poll(() => text(line), { timeout: STEP_MS })
        .toBe('1,575 shares bid against the non-retail portion of 875: subscribed 1.8 times');
      expect(await text(card(page).locator('[data-demand="margin_100"]'))).toBe('100 % margin: 1,575 shares');
      expect(await text(card(page).locator('[data-demand="margin_0"]'))).toBe('0 % margin: no bids');
      // The trader's own live bids, against the indicative price and the floor on one price axis.
      const strip = card(page).locator('svg.price-strip');
      // Drawn once the order book is read: polled, as the demand line above.
      await expect.poll(() => strip.count(), { timeout: STEP_MS }).toBe(1);
      await expect.poll(() => strip.locator('.own-bid').count(), { timeout: STEP_MS }).toBe(2);
      expect(await strip.locator('desc').textContent()).toContain('Your live bids: 400 at 101.50, 475 at 100.50');
    }
  });

  it('on a phone, the ticket and the indicative price come first; the offer terms are folded', async () => {
    for (const page of [desktop, phone]) {
      await openView(page, 'OFS offers');
      await card(page).waitFor();
    }
    const bid = card(phone).getByRole('button', { name: 'Review bid' });
    await bid.waitFor();
    const indicative = card(phone).locator('[data-key="indicative"]');
    await indicative.waitFor();
    await shot(phone, '01-phone-t-day');
    expect(await text(indicative)).toMatch(/^\d+\.\d\d on 1,575 shares$/);
    const bidBottom = await bottomOf(phone, bid);
    expect(bidBottom, `the Review bid button ends ${bidBottom} px down`).toBeLessThanOrEqual(PHONE.height);
    const priceBottom = await bottomOf(phone, indicative);
    expect(priceBottom, `the indicative price ends ${priceBottom} px down`).toBeLessThanOrEqual(PHONE.height);
    const terms = card(phone).locator('details.offer-terms');
    expect(await terms.count()).toBe(1);
    expect(await text(terms.locator('summary'))).toBe('Offer terms');
    expect(await terms.evaluate((details) => (details as unknown as { open: boolean }).open)).toBe(false);

    // On a desktop the terms may stay open: the ticket is still on the first screen.
    const desktopBid = card(desktop).getByRole('button', { name: 'Review bid' });
    const desktopBottom = await bottomOf(desktop, desktopBid);
    expect(desktopBottom, `the desktop's Review bid button ends ${desktopBottom} px down`).toBeLessThanOrEqual(
      DESKTOP.height,
    );
    await shot(desktop, '02-desktop-t-day');
  });

  it('after the T allocation, a banner gives the cut-off and T+1 opening in IST, said once; the indicative price stays, final', async () => {
    server.clock.now = T_CLOSE + MINUTE; // 15:31 India time on T
    // The T allocation: MF 250 of the reservation and 450 more at 102.00, the trader 175 of its 400 at
    // 101.50, the cut-off; its 475 at 100.50 get nothing.
    await oms.runOnce();
    for (const page of [desktop, phone]) {
      const banner = card(page).locator('[data-banner="t-cutoff"]');
      await expect.poll(() => banner.isVisible(), { timeout: STEP_MS }).toBe(true);
      // 15:31 and a few seconds by the time the page reads it: T+1 opens in 17 h 43 or 44 min.
      expect(await text(banner)).toMatch(
        /^T-day cut-off Rs 101\.50 found · retail bids on T\+1 at or above it · T\+1 opens Wed 2 Dec 09:15 IST \(in 17 h 4[34] min\)$/,
      );
      // The list's top says it too, in the one status line that screen readers read once.
      const status = page.getByRole('status').filter({ hasText: 'T-day cut-off Rs 101.50 found' });
      await expect.poll(() => status.count(), { timeout: STEP_MS }).toBe(1);
      expect(await text(status)).toContain('DELTA: T-day cut-off Rs 101.50 found');
      const section = card(page).locator('section.indicative');
      expect(await section.count()).toBe(1);
      expect(await text(section.locator('h4'))).toBe('Final indicative price at T close 15:30 IST');
      expect(await card(page).locator('svg.indicative-chart').count()).toBe(1);
      expect(await text(card(page).locator('[data-demand="non_retail"]'))).toContain('subscribed 1.8 times');
    }
    await shot(phone, '03-phone-t-allocated');
    await shot(desktop, '04-desktop-t-allocated');
  });

  it('on T+1 the final indicative price is kept; a retail trader on a phone has the ticket and it on the first screen', async () => {
    server.clock.now = T1 + 15 * MINUTE; // 09:30 India time on T+1
    ops = await server.logInAgain(ops);
    await login(phone, ops);
    await login(desktop, ops);
    for (const page of [desktop, phone]) {
      await openView(page, 'OFS offers');
      const section = card(page).locator('section.indicative');
      await expect.poll(() => section.count(), { timeout: STEP_MS }).toBe(1);
      expect(await text(section.locator('h4'))).toBe('Final indicative price at T close 15:30 IST');
      await expect
        .poll(() => text(card(page).locator('[data-banner="t-cutoff"]')), { timeout: STEP_MS })
        .toMatch(/^T-day cut-off Rs 101\.50 · retail bids at or above it · T\+1 open until 15:30 IST \(closes in /);
    }
    const bid = card(phone).getByRole('button', { name: 'Review bid' });
    await bid.waitFor();
    await shot(phone, '05-phone-t1');
    const bidBottom = await bottomOf(phone, bid);
    expect(bidBottom, `the Review bid button ends ${bidBottom} px down`).toBeLessThanOrEqual(PHONE.height);
    const indicative = card(phone).locator('[data-key="indicative"]');
    expect(await text(indicative)).toMatch(/^\d+\.\d\d on 1,575 shares \(final\)$/);
    const priceBottom = await bottomOf(phone, indicative);
    expect(priceBottom, `the indicative price ends ${priceBottom} px down`).toBeLessThanOrEqual(PHONE.height);
  });

  it('after the T+1 allocation, the final indicative price is still there', async () => {
    server.clock.now = T1_CLOSE + MINUTE;
    await oms.runOnce();
    for (const page of [desktop, phone]) {
      await expect
        .poll(() => card(page).locator('.offer-state').getAttribute('data-state'), { timeout: STEP_MS })
        .toBe('ALLOCATED');
      const section = card(page).locator('section.indicative');
      expect(await section.count()).toBe(1);
      expect(await text(section.locator('h4'))).toBe('Final indicative price at T close 15:30 IST');
      expect(await card(page).locator('[data-banner="t-cutoff"]').isVisible()).toBe(false);
    }
  });

  it("the operator's book on a phone folds the categories with no bids into one line and stays short", async () => {
    await phone.evaluate(`location.hash = '#/offers/${OFFER_ID}/book'`);
    await phone.locator('table.category-table').waitFor();
    await expect
      .poll(() => phone.locator('tr.category-row[data-category="NII"]').count(), { timeout: STEP_MS })
      .toBe(1);
    await shot(phone, '06-phone-offer-book');
    const height = await pageHeight(phone);
    expect(height, `the phone's offer book is ${height} px high`).toBeLessThan(2000);
    expect(await text(phone.locator('[data-no-bids]'))).toBe('No bids: Retail, Employees, IC, Others (OTHS)');
    expect(await phone.locator('tr.category-row[data-category="OTHS"]').count()).toBe(0);
    // A category's one listing with bids is the category's own row: no row for a listing without bids.
    expect(await phone.locator('tr.listing-row[data-listing="BSE_EQ:800004"]').count()).toBe(0);
  });

  it('logged no console error and broke no CSP rule', () => {
    expect(problems).toEqual([]);
  });
});
