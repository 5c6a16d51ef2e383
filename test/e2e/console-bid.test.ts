/**
 * The console's bid form and issue cards in headless Chromium (issue 25 rows 1 and 2): the order value and
 * what the retail limit still allows, a confirmation before the bid goes, success and refusal told apart
 * (mark and style) and read to screen readers, a refusal said once in a trader's words beside its field,
 * the form cleared after a placed bid (a second click places nothing), and a card whose window is not open
 * saying whether it opens later or has closed, and when.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Page } from 'playwright-core';
import { chromiumRuns, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { ROOT } from '../cli/run-ordergate.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { logIn, openView } from '../support/console-page.js';
import { deltaOffer } from '../support/offers.js';

const STEP_MS = 20_000;
const HOUR = 60 * 60 * 1000;
const runs = chromiumRuns('test/e2e/console-bid.test.ts');
const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console-bid');

describe.runIf(runs)("the console's bid form and issue cards", () => {
  let server: TestServer;
  let ravi: TestUser;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer();
    await server.registerIssue(); // SBIN OF on NSE_EQ 500112, open
    const now = server.clock.now;
    await server.registerIssue({
      exchange: 'BSE_EQ',
      scripToken: 500113,
      retailOpensAt: now + 2 * HOUR,
      retailClosesAt: now + 8 * HOUR,
    });
    await server.registerIssue({
      exchange: 'NSE_EQ',
      scripToken: 500114,
      symbol: 'INFY',
      retailOpensAt: now - 8 * HOUR,
      retailClosesAt: now - 2 * HOUR,
    });
    ravi = await server.createUser('ravi');
    browser = await launchChromium(STEP_MS);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(STEP_MS);
    await logIn(page, server.url, { user_id: ravi.userId, password: ravi.password, api_key: ravi.apiKey });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  const form = () => page.getByRole('form', { name: 'Bid for SBIN OF (NSE_EQ)' });
  const ordersOfRavi = async () =>
    (await server.store.db.selectFrom('orders').select('order_id').where('user_id', '=', 'ravi').execute()).length;

  it('shows the order value and what the retail limit still allows, as the quantity and price change', async () => {
    await form().getByLabel('Quantity').fill('10');
    await form().getByLabel('Price (Rs)').fill('101.50');
    await expect
      .poll(() => form().locator('.bid-value').innerText())
      .toBe('Order value: Rs 1,015.00; the Rs 2,00,000 retail limit still allows Rs 2,00,000.00.');
  });

  it('asks for a confirmation, places the bid (then waits for the OMS: no worker runs here), and clears the form so that a second click places nothing', async () => {
    await form().getByRole('button', { name: 'Review bid' }).click();
    await expect
      .poll(() => form().locator('.bid-confirm').innerText())
      .toContain('Buy 10 SBIN OF at 101.50 on NSE_EQ, Rs 1,015.00?');
    expect(await ordersOfRavi()).toBe(0); // nothing sent before the confirmation
    await form().getByRole('button', { name: 'Confirm bid' }).click();
    const outcome = form().getByRole('status');
    await expect.poll(() => outcome.innerText()).toMatch(/Bid placed: order \S+\. Waiting for the OMS to check it/);
    // Placed is not yet accepted: the outcome follows the order until the OMS decides (console-words.test.ts).
    expect(await outcome.getAttribute('class')).toContain('pending');
    expect(await outcome.innerText()).not.toContain('\u2713');
    expect(await ordersOfRavi()).toBe(1);
    expect(await form().getByLabel('Quantity').inputValue()).toBe('');
    await form().getByRole('button', { name: 'Review bid' }).click();
    expect(await form().getByRole('button', { name: 'Confirm bid' }).isVisible()).toBe(false);
    expect(await ordersOfRavi()).toBe(1);
    // The live bid now counts against the limit.
    await form().getByLabel('Quantity').fill('10');
    await expect.poll(() => form().locator('.bid-value').innerText()).toContain('still allows Rs 1,98,985.00');
  });

  it("says a refusal once, in a trader's words, beside the price, styled as a refusal", async () => {
    await form().getByLabel('Quantity').fill('10');
    await form().getByLabel('Price (Rs)').fill('101.52');
    await form().getByRole('button', { name: 'Review bid' }).click();
    await form().getByRole('button', { name: 'Confirm bid' }).click();
    const outcome = form().getByRole('status');
    await expect.poll(() => outcome.getAttribute('class')).toContain('refused');
    expect(await outcome.locator('.outcome-mark').innerText()).toBe('\u2715');
    const sentence = 'The price must be a multiple of the tick (0.05).';
    const text = await form().innerText();
    expect(text.split(sentence).length - 1).toBe(1);
    expect(text).not.toContain('price:');
    expect(await form().getByLabel('Price (Rs)').getAttribute('aria-invalid')).toBe('true');
    expect(await page.evaluate("document.activeElement?.getAttribute('name')")).toBe('price');
    expect(await ordersOfRavi()).toBe(1);
  });

  it('says on a card whose window is not open whether it opens later or has closed, and when', async () => {
    const upcoming = page.locator('article[data-issue="BSE_EQ:500113"] .window-notice');
    const closed = page.locator('article[data-issue="NSE_EQ:500114"] .window-notice');
    expect(await upcoming.innerText()).toMatch(/^Your bidding window opens at .+ \(in 1 h 5\d min\)\.$/);
    expect(await closed.innerText()).toMatch(/^Your bidding window closed at .+\.$/);
  });
});

/**
 * The offers' bid ticket (issue 51, "offer bid form" and "outcome"), on a desktop (1366 x 800) and a phone
 * (390 x 844), the browser in New York time: the instrument's tick, floor and T-day cut-off in the hints and
 * the refusals (they read "(-)" before); the order value, the funds available and what the bid blocks, the
 * retail limit left across both listings, the countdowns to the day's close and to T+1's open; a review
 * before the bid goes; and an outcome line that follows the order until the OMS has decided (a bid rejected
 * for funds showed a green "Bid placed" before).
 */
const OFFER_T = Date.parse('2026-12-01T03:45:00Z'); // 09:15 IST, Tuesday 1 December 2026
const MINUTE = 60 * 1000;
const OFFER_ID = 'DELTA-OFS-1';
const DEVICES = [
  { name: 'desktop', viewport: { width: 1366, height: 800 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;

for (const device of DEVICES) {
  describe.runIf(runs)(`the offers' bid ticket on a ${device.name}`, () => {
    let server: TestServer;
    let oms: OmsWorker;
    let browser: Browser;
    let nii: TestUser;
    let fund: TestUser;
    let retail: TestUser;
    let page: Page;

    const form = () => page.getByRole('form', { name: `Bid in DELTA (${OFFER_ID})` });
    const ticket = (name: string) => form().locator(`[data-ticket="${name}"]`);
    const outcome = () => form().getByRole('status');
    const ordersOf = async (userId: string) =>
      (await server.store.db.selectFrom('orders').select('order_id').where('user_id', '=', userId).execute()).length;
    const listing = (exchange: 'NSE_EQ' | 'BSE_EQ', series: string) => ({
      exchange,
      scrip_token: exchange === 'NSE_EQ' ? 700004 : 800004,
      symbol: 'DELTA',
      series,
      expiry_date: '',
      strike_price: '',
      option_type: '',
    });
    const place = (user: TestUser, scrip: Record<string, unknown>, quantity: number, price: number) =>
      server.placeBid(user, scrip, quantity, price);
    async function review(quantity: string, price: string) {
      await form().getByLabel('Quantity').fill(quantity);
      await form().getByLabel('Price (Rs)').fill(price);
      await form().getByRole('button', { name: 'Review bid' }).click();
    }
    async function openPage(user: TestUser) {
      await page?.context().close();
      const context = await browser.newContext({ viewport: device.viewport, timezoneId: 'America/New_York' });
      page = await context.newPage();
      page.setDefaultTimeout(STEP_MS);
      await logIn(page, server.url, { user_id: user.userId, password: user.password, api_key: user.apiKey });
      await openView(page, 'OFS offers');
      await form().waitFor();
    }
    /** Nothing on the page scrolls sideways. */
    const fits = async () => {
      const widths = await page.evaluate<{ scroll: number; viewport: number }>(
        '({ scroll: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth })',
      );
      expect(widths.scroll).toBeLessThanOrEqual(widths.viewport);
    };

    beforeAll(async () => {
      await ensureConsoleBuilt();
      mkdirSync(SCREENSHOTS, { recursive: true });
      // 14:15 IST on T: non-retail bids are taken until 15:30.
      server = await startTestServer({ now: OFFER_T + 300 * MINUTE });
      await server.admin.importOfs([
        deltaOffer(
          {
            offer_id: OFFER_ID,
            green_shoe_quantity: 0,
            employee_quantity: 0,
          },
          OFFER_T,
        ),
      ]);
      nii = await server.createUser('nii1', { category: 'NII' });
      fund = await server.createUser('mf1', { category: 'MF' });
      retail = await server.createUser('ret1', { category: 'RETAIL' });
      await server.deposit('nii1', '10000');
      await server.deposit('ret1', '50000');
      oms = server.omsWorker(`console-bid-${device.name}`);
      browser = await launchChromium(STEP_MS);
      await openPage(nii);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    it("shows the order value, the funds available and what the bid blocks, and the countdowns to T's close and T+1's open", async () => {
      expect(await form().getByLabel('Price (Rs)').inputValue()).toBe('100.00');
      expect(
        await form()
          .locator('.field', { has: page.getByLabel('Price (Rs)') })
          .innerText(),
      ).toContain('At or above the floor 100.00; tick 0.05');
      await form().getByLabel('Quantity').fill('10');
      await expect.poll(() => ticket('value').innerText()).toBe('Order value: Rs 1,000.00 (10 \u00d7 100.00)');
      await expect
        .poll(() => ticket('funds').innerText())
        .toBe('Funds available: Rs 10,000.00; this bid blocks Rs 1,000.00 of them.');
      // 14:15 IST (03:45 in New York): T closes at 15:30 IST, T+1 opens at 09:15 IST on Wednesday.
      expect(await ticket('countdown').innerText()).toMatch(
        /^Day T closes at 15:30 IST, in 1 h 1[45] min; T\+1 opens Wed 2 Dec 09:15 IST, in 1[89] h \d\d min\.$/,
      );
      await form().getByLabel('Price (Rs)').fill('101.50');
      await expect.poll(() => ticket('value').innerText()).toBe('Order value: Rs 1,015.00 (10 \u00d7 101.50)');
      await fits();
    });

    it('asks for a review before the bid goes, and Change goes back to the form', async () => {
      await form().getByLabel('Listing').selectOption('NSE_EQ:700004');
      expect(await form().getByLabel('Series').inputValue()).toBe('IS');
      await review('10', '100');
      const confirmation = form().locator('.bid-confirm');
      await expect
        .poll(() => confirmation.innerText())
        .toContain(
          'Buy 10 DELTA (IS, NSE_EQ) at 100.00 as non-retail: Rs 1,000.00, blocking Rs 1,000.00 of your Rs 10,000.00 available?',
        );
      expect(await ordersOf('nii1')).toBe(0);
      await form().getByRole('button', { name: 'Change' }).click();
      expect(await confirmation.isVisible()).toBe(false);
      expect(await form().getByLabel('Quantity').isEditable()).toBe(true);
      expect(await ordersOf('nii1')).toBe(0);
    });

    it("refuses a price off the tick or below the floor naming the offer's tick and floor, beside the price", async () => {
      const priceField = form().locator('.field', { has: page.getByLabel('Price (Rs)') });
      await review('10', '100.52');
      await form().getByRole('button', { name: 'Confirm bid' }).click();
      await expect.poll(() => outcome().getAttribute('class')).toContain('refused');
      await expect.poll(() => priceField.innerText()).toContain('The price must be a multiple of the tick (0.05).');
      await review('10', '99');
      await form().getByRole('button', { name: 'Confirm bid' }).click();
      await expect.poll(() => priceField.innerText()).toContain('The price is below the floor price (100.00).');
      expect(await form().innerText()).not.toContain('(-)');
      expect(await ordersOf('nii1')).toBe(0);
    });

    it('follows the order until the OMS decides: placed, then rejected for funds in words, not a green "placed"', async () => {
      await review('200', '100');
      await form().getByRole('button', { name: 'Confirm bid' }).click();
      await expect.poll(() => outcome().innerText()).toMatch(/^Bid placed: order \S+\. Waiting for the OMS/);
      expect(await outcome().getAttribute('class')).toContain('pending');
      await oms.runOnce();
      await expect
        .poll(() => outcome().innerText(), { timeout: STEP_MS })
        .toMatch(/Bid rejected: order \S+\. Not enough funds: the bid needs Rs 20,000\.00; Rs 10,000\.00 available\.$/);
      expect(await outcome().getAttribute('class')).toContain('refused');
      expect(await outcome().locator('.outcome-mark').innerText()).toBe('\u2715');
      await page.screenshot({ path: join(SCREENSHOTS, `offer-rejected-${device.name}.png`), fullPage: true });
    });

    it('says when the OMS accepts a bid, and the funds line then counts its block', async () => {
      await review('50', '100');
      await form().getByRole('button', { name: 'Confirm bid' }).click();
      await expect.poll(() => outcome().innerText()).toMatch(/^Bid placed: order \S+\. Waiting for the OMS/);
      await oms.runOnce();
      await oms.runOnce();
      await expect
        .poll(() => outcome().innerText(), { timeout: STEP_MS })
        .toMatch(/Bid placed: order \S+\. Accepted: Rs 5,000\.00 of your funds blocked/);
      expect(await outcome().getAttribute('class')).toContain('ok');
      await form().getByLabel('Quantity').fill('10');
      await form().getByLabel('Price (Rs)').fill('100');
      await expect
        .poll(() => ticket('funds').innerText(), { timeout: STEP_MS })
        .toBe('Funds available: Rs 5,000.00; this bid blocks Rs 1,000.00 of them.');
    });

    it('on T+1 names the T-day cut-off in a retail refusal, and counts the retail limit left across both listings', async () => {
      await place(fund, listing('NSE_EQ', 'IS'), 1000, 101);
      await oms.runOnce();
      server.clock.now = OFFER_T + 405 * MINUTE; // 16:00 IST: the T allocation finds the cut-off, 101.00
      await oms.runOnce();
      server.clock.now = OFFER_T + 24 * 60 * MINUTE + 15 * MINUTE; // 09:30 IST on T+1
      await place(retail, listing('BSE_EQ', 'D'), 100, 101.5); // Rs 10,150 on BSE
      await openPage(retail);
      expect(await form().getByLabel('Bid as').inputValue()).toBe('RETAIL');
      expect(
        await form()
          .locator('.field', { has: page.getByLabel('Price (Rs)') })
          .innerText(),
      ).toContain('At or above the T-day cut-off 101.00; tick 0.05');
      await form().getByLabel('Quantity').fill('10');
      await form().getByLabel('Price (Rs)').fill('102');
      await expect
        .poll(() => ticket('limit').innerText())
        .toBe('Retail limit left: Rs 1,89,850.00 of Rs 2,00,000 (your live retail bids in DELTA on BSE and NSE).');
      expect(await ticket('countdown').innerText()).toMatch(/^Day T\+1 closes at 15:30 IST, in [56] h \d\d min\.$/);
      await review('10', '100');
      await form().getByRole('button', { name: 'Confirm bid' }).click();
      const priceField = form().locator('.field', { has: page.getByLabel('Price (Rs)') });
      await expect
        .poll(() => priceField.innerText())
        .toContain('A retail bid may not be below the T-day cut-off price (101.00): raise it, or bid at the cut-off.');
      expect(await form().innerText()).not.toContain('retail cut-off price');
      await fits();
      await page.screenshot({ path: join(SCREENSHOTS, `offer-ticket-t1-${device.name}.png`), fullPage: true });
    });
  });
}
