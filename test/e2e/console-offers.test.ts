/**
 * An offer of the exchanges' framework through the console on the day of the T allocation (issue 46), in
 * headless Chromium against an in-process server whose clock the test moves (fixed dates: T is Tuesday
 * 1 December 2026, settled by trading day) and an OMS worker the test runs pass by pass. A non-retail
 * trader reads the offer's card: the green shoe's default awaiting the seller's decision, the computed
 * portions, the employees' part of the green shoe, the pay-out dates. T closes: the card says the T
 * allocation waits for the seller's green-shoe decision until its deadline (and says it aloud). The seller
 * exercises half of it, with the notice's printed portions; the T allocation finds the cut-off above one of
 * the trader's bids, and the retail price with it. On T+1 the trader carries that bid forward: the dialog
 * shows the cut-off, starts the price there, says what the carry-forward blocks of the funds; at the bid's
 * own price the server refuses it (e-380), revised above the cut-off it goes, and the order's price changes.
 * A bid at the cut-off is carried forward as it is, with no body. Screenshots go to
 * test-artifacts/console-offers/.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { ROOT } from '../cli/run-ordergate.js';
import { chromiumRuns, launchChromium, watchedPage } from '../support/chromium.js';
import { logIn, openView } from '../support/console-page.js';
import { offerImport } from '../support/offers.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console-offers');
/** Every wait in the page is bounded by this (as in console.test.ts: a loaded machine slows Chromium a lot). */
const STEP_MS = 20_000;
const MINUTE = 60 * 1000;
const DAY = 24 * 60 * MINUTE;
/** T opens 09:15 India time on Tuesday 1 December and closes at 15:30; the seller decides by 17:00. */
const T = Date.parse('2026-12-01T03:45:00Z');
const T_CLOSE = T + 375 * MINUTE;
const DECISION_BY = '2026-12-01T11:30:00.000Z';
const T1 = T + DAY;
const OFFER_ID = 'GAMMA-OFS-1';
const NSE = {
  exchange: 'NSE_EQ',
  scrip_token: 700003,
  symbol: 'GAMMA',
  series: 'IS',
  expiry_date: '',
  strike_price: '',
  option_type: '',
};

const runs = chromiumRuns('test/e2e/console-offers.test.ts');

describe.runIf(runs)('an offer on the day of its T allocation, in the console', () => {
  let server: TestServer;
  let oms: OmsWorker;
  let browser: Browser;
  let page: Page;
  let trader: TestUser;
  let fund: TestUser;
  /** Console errors, page errors and CSP violations seen in the page. */
  const problems: string[] = [];
  /** The trader's bids: one the T allocation leaves below the cut-off, one it allots in part at the cut-off. */
  const bids = {} as { below: string; atCutOff: string };

  const screenshot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const card = () => page.locator(`article[data-offer="${OFFER_ID}"]`);
  const fact = (name: string) => card().locator(`[data-fact="${name}"]`);
  const text = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, ' ').trim();
  const orderRow = (orderId: string) => page.locator(`tr[data-order-id="${orderId}"]`);
  /** Nothing on the page scrolls sideways. */
  const fits = async (what: string) => {
    const widths = await page.evaluate<{ scroll: number; viewport: number }>(
      '({ scroll: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth })',
    );
    expect(widths.scroll, `${what} is ${widths.scroll} px wide`).toBeLessThanOrEqual(widths.viewport);
  };

  const place = (user: TestUser, quantity: number, price: number) => server.placeBid(user, NSE, quantity, price);
  const order = (orderId: string) => server.orderOf(trader, orderId);

  beforeAll(async () => {
    await ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    // 14:15 India time on T: bids are taken until 15:30.
    server = await startTestServer({ now: T + 5 * 60 * MINUTE });
    // 1,000 shares and a green shoe of 200 (the default: not exercised), 12.5 % retail, employees 20 and 10
    // of the green shoe; settled by trading day (no settlement_delay_seconds: the clock is the test's).
    await server.admin.importOfs([
      offerImport(
        {
          offer_id: OFFER_ID,
          symbol: 'GAMMA',
          listings: [
            { exchange: 'NSE_EQ', scrip_token: 700003, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
            { exchange: 'BSE_EQ', scrip_token: 800003, series: { RETAIL: 'G', NON_RETAIL: 'G' } },
          ],
          base_quantity: 1000,
          green_shoe_quantity: 200,
          employee_quantity: 20,
          employee_green_shoe_quantity: 10,
          green_shoe_decision_by: DECISION_BY,
        },
        T,
      ),
    ]);
    trader = await server.createUser('nii1', { category: 'NII' });
    fund = await server.createUser('mf1', { category: 'MF' });
    await server.deposit('nii1', '100000');
    oms = server.omsWorker('console-offers');
    browser = await launchChromium(STEP_MS);
    page = await watchedPage(browser, STEP_MS, problems, {
      // The browser logs every refused call; the test has a carry-forward refused below the cut-off (422 e-380) on purpose.
      ignore: (message) => message.location().url.endsWith('/carry_forward') && /status of 422/.test(message.text()),
    });
    await logIn(page, server.url, { user_id: trader.userId, password: trader.password, api_key: trader.apiKey });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it("shows the green shoe's default awaiting the seller, the computed portions, the employees' part and the pay-out dates", async () => {
    await openView(page, 'OFS offers');
    await card().waitFor();
    expect(await text(fact('offer'))).toBe('1,000 shares (base 1,000); portions computed from the terms');
    expect(await fact('offer').getAttribute('data-portions-source')).toBe('computed');
    expect(await text(fact('green-shoe'))).toBe('200 shares, not exercised; default, seller decides by 17:00 IST');
    expect(await text(fact('employees'))).toBe(
      '20 shares (their 10 of the green shoe not exercised), discount 5 % off',
    );
    expect(await text(fact('retail_price'))).toBe(
      'not known yet: the T-day cut-off less Rs 2.50, once the T allocation finds it',
    );
    // Tuesday's T-day allotments are paid out on Wednesday, the T+1 ones on Thursday, at 13:30 India time.
    expect(await text(fact('settlement'))).toBe(
      'T-day allotments paid out Wed 2 Dec 13:30 IST; T+1 allotments Thu 3 Dec 13:30 IST',
    );
    expect(await card().locator('.offer-notice').count()).toBe(0);
  });

  it("says, once T has closed, that the T allocation waits for the seller's green-shoe decision until its deadline", async () => {
    // MF 850 at 102.00 (no cap); the trader 150 at 101.50 and 60 at 100.50.
    await place(fund, 850, 102);
    bids.atCutOff = await place(trader, 150, 101.5);
    bids.below = await place(trader, 60, 100.5);
    await oms.runOnce();
    expect(await order(bids.below)).toMatchObject({ status: 'PENDING' });

    server.clock.now = T_CLOSE + 30 * MINUTE; // 16:00 India time
    await oms.runOnce(); // the T allocation waits: nothing is allotted
    const notice = card().locator('.offer-notice[data-notice="green-shoe"]');
    // The view reads the offers again within 5 s, without a click.
    await expect.poll(() => notice.count(), { timeout: STEP_MS }).toBe(1);
    expect(await notice.innerText()).toBe(
      "T closed: the T allocation waits for the seller's green-shoe decision until 17:00 IST; the default then stands (200 shares, not exercised)",
    );
    await expect
      .poll(() => page.locator('#announcer').innerText())
      .toContain(
        `Offer GAMMA (${OFFER_ID}): T closed: the T allocation waits for the seller's green-shoe decision until 17:00 IST`,
      );
    expect(await text(fact('t_cutoff'))).toBe('not known yet');
    expect(await card().locator('.offer-state').getAttribute('data-state')).toBe('T_OPEN');
    await screenshot('01-awaiting-green-shoe');
  });

  it("shows the seller's decision, the notice's printed portions, then the cut-off and the retail price the T allocation finds", async () => {
    // The seller exercises 100 of the 200; the notice prints the portions for it.
    await server.admin.setGreenShoe(OFFER_ID, 100, {
      retailReserved: 140,
      nonRetail: 960,
      mfIcReserved: 275,
      employee: 25,
    });
    await expect
      .poll(() => text(fact('green-shoe')), { timeout: STEP_MS })
      .toBe('100 of 200 shares exercised; decided by the seller, 1 Dec 2026, 16:00:00 IST');
    expect(await text(fact('offer'))).toBe(
      '1,100 shares (base 1,000 + green shoe 100); portions as the notice prints them',
    );
    expect(await fact('offer').getAttribute('data-portions-source')).toBe('notice');
    expect(await text(fact('employees'))).toBe('25 shares (20 + 5 of the green shoe), discount 5 % off');
    expect(await card().locator('.offer-notice').count()).toBe(0);
    await expect
      .poll(() => page.locator('#announcer').innerText())
      .toContain("the seller's green-shoe decision: 100 of 200 shares exercised");

    // The T allocation: the MF/IC reservation (275) and 575 more to the fund at 102.00, then 110 of the
    // trader's 150 at 101.50, the cut-off; the trader's 60 at 100.50 get nothing and are below it.
    await oms.runOnce();
    await expect
      .poll(() => card().locator('.offer-state').getAttribute('data-state'), { timeout: STEP_MS })
      .toBe('T_ALLOCATED');
    expect(await text(fact('t_cutoff'))).toBe('101.50');
    // The retail price is known with the cut-off, before any retail bid: the cut-off less the discount.
    expect(await text(fact('retail_price'))).toBe('99.00: the T-day cut-off 101.50 less Rs 2.50');
    expect(await text(fact('green-shoe'))).toBe(
      '100 of 200 shares exercised; decided by the seller, 1 Dec 2026, 16:00:00 IST',
    );
    expect(await order(bids.atCutOff)).toMatchObject({
      status: 'PENDING',
      traded_quantity: 110,
      traded_price: '101.50',
    });
    expect(await order(bids.below)).toMatchObject({ status: 'PENDING', traded_quantity: 0 });
    await screenshot('02-t-allocated');
  });

  it('carries a bid below the cut-off forward on T+1 only at a revised price, and the order takes it', async () => {
    server.clock.now = T1 + 15 * MINUTE; // 09:30 India time on T+1
    await openView(page, 'Orders');
    const row = orderRow(bids.below);
    await expect.poll(() => row.getAttribute('data-status'), { timeout: STEP_MS }).toBe('PENDING');
    expect(await row.locator('td[data-label="Price"]').innerText()).toBe('100.50');
    await row.getByRole('button', { name: `Carry forward order ${bids.below}` }).click();
    const dialog = page.getByRole('dialog');
    const cutOff = dialog.locator('[data-carry="cut-off"]');
    const funds = dialog.locator('[data-carry="funds"]');
    await expect.poll(() => cutOff.innerText()).toMatch(/^T-day cut-off 101\.50: the bid's 100\.50 is below it\./);
    // The price starts at the cut-off, the least the bid may go forward at; the quantity is the whole bid.
    expect(await dialog.getByLabel('Price (Rs)').inputValue()).toBe('101.50');
    expect(await dialog.getByLabel('Quantity').inputValue()).toBe('60');
    expect(await funds.innerText()).toContain('60 \u00d7 101.50 = Rs 6,090.00');
    await screenshot('03-carry-forward-dialog');

    // At its own price the server refuses it, naming the cut-off.
    await dialog.getByLabel('Price (Rs)').fill('100.50');
    expect(await funds.innerText()).toContain('60 \u00d7 100.50 = Rs 6,030.00');
    await dialog.getByRole('button', { name: 'Carry forward' }).click();
    // Said once (beside the price, or in the status line when it names no field), in words; the code for support.
    await expect
      .poll(() => dialog.getByRole('status').innerText())
      .toMatch(/^Not carried forward: [^]*For support: e-380 · request \S+$/);
    const said = await dialog.innerText();
    expect(said.match(/below the T-day cut-off price 101\.50/g)).toHaveLength(1);
    expect(said).not.toContain('(e-380)');
    expect(await order(bids.below)).toMatchObject({ carried_forward: false });

    // Revised to 102.00, it goes, with the price alone in its body.
    await dialog.getByLabel('Price (Rs)').fill('102');
    expect(await funds.innerText()).toContain('60 \u00d7 102.00 = Rs 6,120.00');
    const sent = page.waitForRequest(
      (request) => request.url().endsWith(`/${bids.below}/carry_forward`) && request.method() === 'POST',
    );
    await dialog.getByRole('button', { name: 'Carry forward' }).click();
    expect((await sent).postDataJSON()).toEqual({ price: 102 });
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.locator('#announcer').innerText()).toContain(
      `Carry-forward of order ${bids.below} sent to the OMS (revised to 60 at 102.00)`,
    );

    // The OMS blocks its funds again and the exchange takes it: the order's price is now 102.00.
    await oms.runOnce();
    await expect.poll(() => row.locator('td[data-label="Price"]').innerText(), { timeout: STEP_MS }).toBe('102.00');
    const carried = row.getByRole('button', { name: `Carry forward order ${bids.below}` });
    await expect.poll(() => carried.innerText(), { timeout: STEP_MS }).toBe('Carried forward');
    expect(await carried.isDisabled()).toBe(true);
    expect(await order(bids.below)).toMatchObject({ status: 'PENDING', order_price: '102.00', carried_forward: true });
    const balance = await server.call('GET', '/authentication/v1/user/balance', { token: trader.token });
    expect(balance.body.data).toMatchObject({ blocked: '6120.00' });
    await expect
      .poll(() => text(page.locator(`.order-notice[data-notice-order="${bids.below}"]`).first()))
      .toContain('carried forward to T+1');
    await screenshot('04-carried-forward');
  });

  it('carries a bid at the cut-off forward as it is, with no body; the dialog fits a phone', async () => {
    const row = orderRow(bids.atCutOff);
    await row.getByRole('button', { name: `Carry forward order ${bids.atCutOff}` }).click();
    const dialog = page.getByRole('dialog');
    await expect
      .poll(() => dialog.locator('[data-carry="cut-off"]').innerText())
      .toMatch(/^T-day cut-off 101\.50: the bid's 101\.50 stands at or above it\./);
    expect(await dialog.getByLabel('Price (Rs)').inputValue()).toBe('101.50');
    expect(await dialog.getByLabel('Quantity').inputValue()).toBe('150');
    // 110 were allotted on T: the 40 left go forward.
    expect(await dialog.locator('[data-carry="funds"]').innerText()).toContain('40 \u00d7 101.50 = Rs 4,060.00');
    // On a phone the dialog fits the screen's width, its fields side by side or stacked.
    await page.setViewportSize({ width: 390, height: 844 });
    const box = (await dialog.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width, `the dialog reaches ${box.x + box.width} px`).toBeLessThanOrEqual(390);
    await fits('The carry-forward dialog');
    await screenshot('05-phone-carry-forward-dialog');
    await page.setViewportSize({ width: 1280, height: 900 });
    const sent = page.waitForRequest(
      (request) => request.url().endsWith(`/${bids.atCutOff}/carry_forward`) && request.method() === 'POST',
    );
    await dialog.getByRole('button', { name: 'Carry forward' }).click();
    expect((await sent).postData()).toBeNull();
    await dialog.waitFor({ state: 'hidden' });
    await oms.runOnce();
    await expect
      .poll(() => row.getByRole('button', { name: `Carry forward order ${bids.atCutOff}` }).innerText(), {
        timeout: STEP_MS,
      })
      .toBe('Carried forward');
    expect(await order(bids.atCutOff)).toMatchObject({
      order_price: '101.50',
      total_quantity: 150,
      carried_forward: true,
    });
  });

  it("fits a 390 px phone: the offer's card scrolls nowhere sideways", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await openView(page, 'OFS offers');
    await card().waitFor();
    await fits('The offers view');
    await screenshot('06-phone-offer');
    await page.setViewportSize({ width: 1280, height: 900 });
  });

  it('logged no console error and broke no CSP rule', () => {
    expect(problems).toEqual([]);
  });
});
