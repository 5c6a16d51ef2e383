/**
 * The web console end to end: `npm start`'s server (dist/main.js) on a fresh SQLite file seeded by
 * `ordergate demo`, the console as scripts/build-console.ts builds it, and Debian's Chromium driven by
 * playwright-core. A user logs in with the keyboard, sees the open issue counting down, places a bid and
 * watches it reach PENDING from the event stream, modifies and cancels it, builds, edits and executes a
 * cart, reads funds and holdings, and as an operator reads the issue's book as a chart. Made a non-retail
 * bidder, the user bids in an offer on day T, watches its indicative price and the wait for the operator,
 * reads the offer's book as an operator after the T allocation, and carries the bid forward on T+1. Every
 * view fits a 375 px phone. The page must log no error and break no Content-Security-Policy rule on the way.
 * Screenshots are kept in test-artifacts/console/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { chromiumRuns, launchChromium, watchedPage } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrdergateClient } from '../../packages/client/src/index.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { demoOfsIssue } from '../../src/cli/demo.js';
import { CONSOLE_CSP } from '../../src/http/routes/console.js';
import { ROOT, runOrdergate } from '../cli/run-ordergate.js';
import type { ServerProcess } from '../support/server-process.js';
import { demoWorkspace, startDemoServer, stopDemoServer } from '../support/demo-server.js';
import { logIn, openView, smallestChartText } from '../support/console-page.js';
import { offerImport } from '../support/offers.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console');
/**
 * Every wait in the page is bounded by this; the whole walk-through takes about 20 s. Generous: with a whole
 * suite beside it (a fault test bidding 100 times a second, the CLI's processes), one step of Chromium took
 * over 10 s.
 */
const STEP_MS = 20_000;

const runs = chromiumRuns('test/e2e/console.test.ts');

describe.runIf(runs)('the web console in headless Chromium', () => {
  const { dir, env } = demoWorkspace('ordergate-console-');
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  /** Console errors, page errors and CSP violations seen in the page. */
  const problems: string[] = [];
  /** The order ids in each order book answer the page received. */
  const orderBookReads: string[][] = [];
  const state = {} as {
    demo: { user_id: string; password: string; api_key: string; access_token: string };
    orderId: string;
  };

  const screenshot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  beforeAll(async () => {
    await ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ server, demo: state.demo } = await startDemoServer<typeof state.demo>(env));
    browser = await launchChromium(STEP_MS);
    page = await watchedPage(browser, STEP_MS, problems, {
      // The browser logs every refused call; the test has a carry-forward refused on day T (409 e-378) on purpose.
      ignore: (message) => message.location().url.endsWith('/carry_forward') && /status of 409/.test(message.text()),
    });
    page.on('response', async (response) => {
      const url = new URL(response.url());
      if (url.pathname !== '/transactional/v1/orders' || response.request().method() !== 'GET') return;
      const body = (await response.json()) as { data: { order_id: string }[] };
      orderBookReads.push(body.data.map((order) => order.order_id));
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopDemoServer(server, dir);
  });

  it('is served at /console/ with its own CSP and cache headers, and the API keeps its own', async () => {
    const redirect = await fetch(`${server.url}/console`, { redirect: 'manual' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get('location')).toBe('/console/');

    const index = await fetch(`${server.url}/console/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-type')).toMatch(/^text\/html/);
    expect(index.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    const html = await index.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)/); // no inline script
    const script = /src="\.\/(app-[A-Z0-9]{8}\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();

    const asset = await fetch(`${server.url}/console/${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-security-policy')).toBe(CONSOLE_CSP);

    const api = await fetch(`${server.url}/transactional/v1/orders`);
    expect(api.headers.get('content-security-policy')).toMatch(/^default-src 'none'/);
    const missing = await fetch(`${server.url}/console/nothing-here.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { code: string }).code).toBe('e-109');

    const openapi = (await (await fetch(`${server.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(openapi.paths).filter((path) => path.startsWith('/console'))).toEqual([]);
  });

  it('logs in with the keyboard alone', async () => {
    await page.goto(`${server.url}/console/`);
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('name')")).toBe('user_id');
    await page.keyboard.type(state.demo.user_id);
    await page.keyboard.press('Tab');
    await page.keyboard.type(state.demo.password);
    await page.keyboard.press('Tab'); // the TOTP code: the demo user has none
    await page.keyboard.press('Tab');
    await page.keyboard.type(state.demo.api_key);
    await screenshot('01-login');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 2, name: 'OFS issues' }).waitFor();
    await expect.poll(() => page.getByRole('link', { name: 'OFS book' }).count()).toBe(1); // the demo user is an operator
    // The order book is read once, when the event stream opens.
    await expect.poll(() => orderBookReads.length).toBe(1);
    // The page keeps no credential in storage: a reload means logging in again.
    expect(await page.evaluate('[localStorage.length, sessionStorage.length, document.cookie]')).toEqual([0, 0, '']);
  });

  it('shows the open demo issue with its floor, tick, cut-off and the time left in its windows', async () => {
    const issue = page.locator('article[data-issue="NSE_EQ:500112"]');
    await issue.waitFor();
    const text = await issue.innerText();
    expect(text).toContain('SBIN OF (NSE_EQ)');
    expect(text).toMatch(/Floor price\s+100\.00/);
    expect(text).toMatch(/Tick\s+0\.05/);
    expect(text).toMatch(/Retail cut-off\s+101\.00/);
    // Both windows of the demo close about 24 hours from now.
    const left = await issue.locator('.time-left').allInnerTexts();
    expect(left).toHaveLength(2);
    for (const window of left) expect(window).toMatch(/^open, closes in (23 h \d\d min|1 d 0 h)$/);
    await screenshot('02-issues');
  });

  it("shows an offer of the exchanges' framework with its state, listings and portions in shares", async () => {
    const file = join(dir, 'offer.json');
    const tOpens = Date.now() + 60 * 60 * 1000;
    writeFileSync(file, JSON.stringify([offerImport({ settlement_delay_seconds: 60 }, tOpens)]));
    const imported = await runOrdergate(['ofs', 'import', file], { env });
    expect(imported.code, imported.stderr).toBe(0);
    await openView(page, 'OFS offers');
    const offer = page.locator('article[data-offer="ACME-OFS-1"]');
    await offer.waitFor();
    const text = await offer.innerText();
    expect(text).toContain('ACME (ACME-OFS-1)');
    expect(text).toContain('Day T-1; announced: day T has not opened');
    expect(text).toMatch(/Offer\s+10,00,000 shares \(base 10,00,000\); portions computed from the terms/);
    // The default decision (none of it) stands unless the seller decides by T's close (the import's deadline here).
    expect(text).toMatch(
      /Green shoe\s+10,00,000 shares, not exercised; default, seller decides by \d\d:\d\d(:\d\d)? IST/,
    );
    expect(text).toMatch(/Retail\s+1,25,000 shares \(12\.5%\), discount Rs 2\.50 off, UNIFORM price/);
    expect(text).toMatch(
      /Non-retail\s+8,75,000 shares, of which 2,50,000 for MF and IC first; at most 2,50,000 to one bidder/,
    );
    expect(text).toMatch(/T-day cut-off\s+not known yet/);
    expect(text).toMatch(
      /Retail price\s+not known yet: the T-day cut-off less Rs 2\.50, once the T allocation finds it/,
    );
    // On the real clock T may fall on a weekend: the offer is a drill, settled a minute after each allotment.
    expect(text).toMatch(/Settlement\s+a drill: settles 60 s after each allotment/);
    expect(text).toContain('NSE_EQ 700001: retail RS, non-retail IS, employees ES');
    await screenshot('02b-offers');
    await openView(page, 'OFS issues');
  });

  it("shows the event stream's state in the header, in words", async () => {
    const indicator = page.locator('header .stream-state');
    await expect.poll(() => indicator.locator('.stream-state-text').innerText()).toBe('Live');
    expect(await indicator.textContent()).toBe('Order updates: Live');
    expect(await indicator.getAttribute('data-state')).toBe('live');
  });

  it('places a bid and sees it reach PENDING live, from the event stream, without a reload', async () => {
    await page.evaluate('window.notReloaded = true');
    const form = page.getByRole('form', { name: 'Bid for SBIN OF (NSE_EQ)' });
    await form.getByLabel('Quantity').fill('10');
    await form.getByLabel('Price (Rs)').fill('101.50');
    await form.getByLabel('Your tag (optional)').fill('e2e-web');
    await form.getByRole('button', { name: 'Review bid' }).click();
    await form.getByRole('button', { name: 'Confirm bid' }).click();
    const status = form.getByRole('status');
    await expect.poll(() => status.innerText(), { timeout: STEP_MS }).toMatch(/Bid placed: order \S+\./);
    state.orderId = /order (\S+)\./.exec(await status.innerText())![1]!;

    await openView(page, 'Orders');
    const row = page.locator(`tr[data-order-id="${state.orderId}"]`);
    await expect.poll(() => row.getAttribute('data-status'), { timeout: STEP_MS }).toBe('PENDING');
    expect(await page.evaluate('window.notReloaded')).toBe(true);
    // The console read the order book once, at login; everything it knows of this bid came from the stream.
    expect(orderBookReads).toEqual([[]]);
    expect(await page.locator('#announcer').innerText()).toContain(
      `Order ${state.orderId}, SBIN 10 at 101.50: PENDING`,
    );
    await screenshot('03-orders-pending');
  });

  it('modifies the bid and then cancels it', async () => {
    const row = page.locator(`tr[data-order-id="${state.orderId}"]`);
    await row.getByRole('button', { name: `Modify order ${state.orderId}` }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Quantity').fill('12');
    await dialog.getByLabel('Price (Rs)').fill('101.55');
    await screenshot('04-modify');
    await dialog.getByRole('button', { name: 'Save changes' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await expect
      .poll(async () => (await row.innerText()).replace(/\s+/g, ' '), { timeout: STEP_MS })
      .toMatch(/12 101\.55 PENDING/);
    expect(await page.locator('#announcer').innerText()).toContain('Modification of order');

    await row.getByRole('button', { name: `Cancel order ${state.orderId}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Cancel the bid' }).click();
    await expect.poll(() => row.getAttribute('data-status'), { timeout: STEP_MS }).toBe('CANCELLED');
    // A finished order offers no Modify or Cancel (only its History).
    expect(await row.locator('[data-action="modify"], [data-action="cancel"]').count()).toBe(0);
    await screenshot('05-orders-cancelled');
  });

  it('creates a cart, edits it, executes it and shows the answer of each line', async () => {
    await openView(page, 'Carts');
    await page.getByRole('button', { name: 'New cart' }).click();
    const editor = page.getByRole('form', { name: 'New cart' });
    await editor.getByLabel('Cart name').fill('e2e cart');
    const first = editor.getByRole('group', { name: 'Line 1' });
    expect(await first.getByLabel('Symbol').inputValue()).toBe('SBIN');
    expect(await first.getByLabel('Product').inputValue()).toBe('OFS');
    await first.getByLabel('Quantity').fill('5');
    await first.getByLabel('Price (Rs)').fill('102.00');
    await editor.getByRole('button', { name: 'Create cart' }).click();
    const saved = page.getByRole('form', { name: 'Cart e2e cart' });
    await expect.poll(() => saved.getByRole('status').innerText()).toBe('Cart created: e2e cart');

    // Edit: rename it and add a line beyond the retail limit of Rs 2,00,000: saved, refused when executed.
    await saved.getByLabel('Cart name').fill('e2e cart, edited');
    await saved.getByRole('button', { name: 'Add a line' }).click();
    const second = saved.getByRole('group', { name: 'Line 2' });
    await second.getByLabel('Quantity').fill('5000');
    await saved.getByRole('button', { name: 'Save cart' }).click();
    await expect
      .poll(() => page.getByRole('form', { name: 'Cart e2e cart, edited' }).getByRole('status').innerText())
      .toBe('Cart saved: e2e cart, edited');
    await expect
      .poll(() => page.getByRole('table', { name: 'Your order carts, newest first' }).innerText())
      .toContain('e2e cart, edited');

    const edited = page.getByRole('form', { name: 'Cart e2e cart, edited' });
    await edited.getByRole('button', { name: 'Execute cart' }).click();
    const results = page.getByRole('table', { name: 'The execution, line by line' });
    await results.waitFor();
    expect(await results.locator('tr[data-line="0"]').getAttribute('data-result')).toBe('success');
    expect(await results.locator('tr[data-line="0"]').innerText()).toMatch(/Placed: order \S+/);
    expect(await results.locator('tr[data-line="1"]').getAttribute('data-result')).toBe('error');
    // In words; the code only on the support line.
    expect(await results.locator('tr[data-line="1"]').innerText()).toContain('For support: e-360');
    expect(await results.locator('tr[data-line="1"]').innerText()).not.toContain('(e-360)');
    await expect
      .poll(() => page.getByRole('form', { name: 'Cart e2e cart, edited' }).getByRole('status').innerText())
      .toMatch(/^Order cart partly executed/);
    await screenshot('06-cart-executed');
  });

  it('reads the funds, with the live bid of the cart blocked, and the holdings', async () => {
    await openView(page, 'Funds and holdings');
    // 5 shares at 102.00 block Rs 510.00 once the bid is PENDING; the view reads again as orders change.
    await expect
      .poll(() => page.locator('[data-amount="blocked"]').innerText(), { timeout: STEP_MS })
      .toBe('Rs 510.00');
    // Money is grouped the Indian way (lakh, crore) with two decimals.
    expect(await page.locator('[data-amount="cash"]').innerText()).toBe('Rs 10,00,000.00');
    expect(await page.locator('[data-amount="available"]').innerText()).toBe('Rs 9,99,490.00');
    expect(await page.locator('.holdings-empty').innerText()).toMatch(/^No holdings yet/);
    await screenshot('07-funds');
  });

  it("shows the operator the issue's book as a chart, and the same numbers in a table", async () => {
    await openView(page, 'OFS book');
    const chart = page.getByRole('img', { name: /The book of SBIN OF \(NSE_EQ\)/ });
    await chart.waitFor();
    // The cart's bid is the one live bid: 5 retail shares at 102.00 (the cancelled bid is gone).
    const demand = page.getByRole('table', { name: /^Live demand by price/ });
    expect(await demand.locator('tbody tr').count()).toBe(1);
    expect((await demand.locator('tr[data-price="102.00"]').innerText()).replace(/\s+/g, ' ')).toBe(
      '102.00 5 0 5 0 0 1',
    );
    expect(await page.locator('svg.book-chart desc').textContent()).toContain(
      'Retail: 5 shares bid against an offer of 1,00,000',
    );
    expect(await page.locator('svg.book-chart path.demand-retail').getAttribute('d')).toMatch(
      /^M[\d.]+,[\d.]+ H[\d.]+ V[\d.]+ H[\d.]+$/,
    );
    // 5 shares against offers of 1,00,000 and 9,00,000: the axis fits the demand and names the offers.
    expect(await page.locator('svg.book-chart line.offer').count()).toBe(0);
    expect(await page.locator('svg.book-chart text.offer-off-scale').allTextContents()).toEqual([
      'Offer 1,00,000 above the scale (0.01 % bid)',
      'Offer 9,00,000 above the scale (0.00 % bid)',
    ]);
    expect(await page.locator('svg.book-chart circle.level-retail title').allTextContents()).toEqual([
      '102.00: 5 shares at or above',
    ]);
    const summary = page.getByRole('table', { name: 'Offer, demand and clearing by category' });
    expect(await summary.locator('tr[data-side="retail"]').innerText()).toContain('not allocated yet');
    await screenshot('08-operator-book');
  });

  it('watches an issue close: its book fills live on the chart, the cut-off bid is EXECUTED and allotted, and the shares settle into a holding', async () => {
    // An issue like the demo's on BSE_EQ 543210 whose windows close in 20 s and whose allotments settle 10 s
    // after they are made; no click on any Refresh button from here on.
    const closesAt = Date.now() + 20_000;
    const issue = {
      ...demoOfsIssue(Date.now(), closesAt - Date.now()),
      exchange: 'BSE_EQ' as const,
      scrip_token: 543210,
      settlement_delay_seconds: 10,
    };
    const file = join(dir, 'closing-issue.json');
    writeFileSync(file, JSON.stringify([issue]));
    const imported = await runOrdergate(['ofs', 'import', file], { env });
    expect(imported.code, imported.stderr).toBe(0);
    const api = new OrdergateClient({ baseUrl: server.url }).withToken(state.demo.access_token, state.demo.api_key);

    // The operator watches the new issue's book while a bid arrives through the API.
    await openView(page, 'OFS book');
    await page.getByLabel('Issue').selectOption('BSE_EQ:543210');
    await page.getByText('No live bids yet.').waitFor();
    const scrip = {
      exchange: issue.exchange,
      scrip_token: issue.scrip_token,
      symbol: issue.symbol,
      series: issue.series,
    };
    await api.place({
      scrip_info: scrip,
      transaction_type: 'BUY',
      product_type: 'OFS',
      order_type: 'RL',
      quantity: '40',
      price: 102,
    });
    const demand = page.getByRole('table', { name: /^Live demand by price/ });
    await expect.poll(() => demand.locator('tr[data-price="102.00"]').count(), { timeout: STEP_MS }).toBe(1);
    expect(await page.locator('.read-at').innerText()).toMatch(/^Read at \d\d:\d\d:\d\d IST; read again every 2 s\.$/);
    await screenshot('09-book-filling');

    // The person bids at the cut-off from the issue's card, and stays on it until the window closes.
    await openView(page, 'OFS issues');
    const card = page.locator('article[data-issue="BSE_EQ:543210"]');
    const form = page.getByRole('form', { name: 'Bid for SBIN OF (BSE_EQ)' });
    await form.getByLabel('Quantity').fill('60');
    await form.getByLabel('Bid at the cut-off price').check();
    expect(await form.getByLabel('Price (Rs)').isDisabled()).toBe(true);
    await form.getByRole('button', { name: 'Review bid' }).click();
    await form.getByRole('button', { name: 'Confirm bid' }).click();
    await expect.poll(() => form.getByRole('status').innerText()).toMatch(/Bid placed: order \S+\./);
    const orderId = /order (\S+)\./.exec(await form.getByRole('status').innerText())![1]!;
    expect(Date.now()).toBeLessThan(closesAt - 2_000);
    // The card drops its bid form when the window closes; the demo issue's card keeps its own.
    await expect
      .poll(() => card.innerText(), { timeout: closesAt - Date.now() + STEP_MS })
      .toContain('Your bidding window closed at');
    expect(await page.getByRole('form', { name: 'Bid for SBIN OF (NSE_EQ)' }).count()).toBe(1);

    // The allotment comes on the event stream.
    await openView(page, 'Orders');
    const row = page.locator(`tr[data-order-id="${orderId}"]`);
    await expect.poll(() => row.getAttribute('data-status'), { timeout: STEP_MS }).toBe('EXECUTED');
    expect(await page.locator('#announcer').innerText()).toContain(`Order ${orderId}, SBIN 60 at cut-off: EXECUTED`);

    // The chart shows what was allotted: all 100 retail shares bid (40 at 102.00, 60 at the cut-off), at
    // the one price the allocation gives retail, the cut-off 101.00.
    await openView(page, 'OFS book');
    await page.getByLabel('Issue').selectOption('BSE_EQ:543210');
    const summary = page.getByRole('table', { name: 'Offer, demand and clearing by category' });
    await expect
      .poll(async () => (await summary.locator('tr[data-side="retail"]').innerText()).replace(/\s+/g, ' '), {
        timeout: STEP_MS,
      })
      .toMatch(/ 100$/);
    expect(await page.getByRole('status').innerText()).toBe('Allotted: 100 retail and 0 non-retail shares.');
    expect(await page.locator('.read-at').innerText()).toMatch(/^Read at \d\d:\d\d:\d\d IST\.$/);
    const allotted = page.getByRole('table', { name: 'Allotted by trade price, highest first' });
    expect((await allotted.locator('tbody').innerText()).replace(/\s+/g, ' ').trim()).toBe('101.00 100 0');
    await screenshot('10-book-allotted');

    // Funds: the allotment is a position until it settles, then a holding, read again without a click.
    await openView(page, 'Funds and holdings');
    const positions = page.getByRole('table', { name: 'Positions: allotted shares not yet settled' });
    await expect.poll(() => positions.innerText(), { timeout: STEP_MS }).toContain('SBIN OF BSE_EQ');
    const holdings = page.getByRole('table', { name: 'Holdings: settled shares' });
    await expect
      .poll(async () => (await holdings.innerText()).replace(/\s+/g, ' '), { timeout: 10_000 + STEP_MS })
      .toMatch(/SBIN 1 lot 100 101\.00 .*BSE 543210, bid in OF 100 101\.00 /);
    expect(await page.getByText('No open positions.').count()).toBe(1);
    await screenshot('11-holding');
  }, 90_000);

  it('bids in an offer on day T as a non-retail user, sees the indicative price and the wait for the operator, and carries the bid forward on T+1', async () => {
    // An operator makes the demo user an NII, with effect at once: the offers view reads the category anew.
    const nii = await runOrdergate(['users', 'set-category', state.demo.user_id, 'NII'], { env });
    expect(nii.code, nii.stderr).toBe(0);
    // BETA: day T open now, T+1 from its close; 1,000 shares, 875 non-retail, at most 250 to one bidder. The
    // server runs on the real clock: T is closed below by importing the offer again with its close now
    // (an offer takes new terms until its T allocation), not waited out.
    const at = (ms: number) => new Date(ms).toISOString();
    const importBeta = async (tClosesAt: number) => {
      const offer = offerImport({
        offer_id: 'BETA-OFS-1',
        settlement_delay_seconds: 60,
        symbol: 'BETA',
        listings: [
          { exchange: 'NSE_EQ', scrip_token: 700002, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
          { exchange: 'BSE_EQ', scrip_token: 800002, series: { RETAIL: 'B', NON_RETAIL: 'B' } },
        ],
        base_quantity: 1000,
        green_shoe_quantity: 0,
        employee_quantity: 0,
        t_day: { opens_at: at(Date.now() - 60 * 60 * 1000), closes_at: at(tClosesAt) },
        t1_day: { opens_at: at(tClosesAt), closes_at: at(tClosesAt + 60 * 60 * 1000) },
      });
      const file = join(dir, 'offer-on-day-t.json');
      writeFileSync(file, JSON.stringify([offer]));
      const imported = await runOrdergate(['ofs', 'import', file], { env });
      expect(imported.code, imported.stderr).toBe(0);
    };
    await importBeta(Date.now() + 60 * 60 * 1000);

    await openView(page, 'OFS offers');
    const card = page.locator('article[data-offer="BETA-OFS-1"]');
    await card.waitFor();
    expect(await card.locator('.offer-state').innerText()).toBe(
      'Day T; day T: non-retail bids (the T allocation follows the close)',
    );
    expect(await card.locator('svg.indicative-chart').count()).toBe(0); // no price to chart before the first valid bid
    // The series follows from the listing and what the user bids as: a non-retail bid goes in IS on NSE, in B on BSE.
    const form = page.getByRole('form', { name: 'Bid in BETA (BETA-OFS-1)' });
    expect(await form.getByLabel('Bid as').inputValue()).toBe('NON_RETAIL');
    await form.getByLabel('Listing').selectOption('BSE_EQ:800002');
    expect(await form.getByLabel('Series').inputValue()).toBe('B');
    await form.getByLabel('Listing').selectOption('NSE_EQ:700002');
    expect(await form.getByLabel('Series').inputValue()).toBe('IS');
    expect(await form.getByLabel('Price (Rs)').inputValue()).toBe('100.00'); // the floor
    await form.getByLabel('Quantity').fill('400');
    await form.getByLabel('Price (Rs)').fill('101');
    // The ticket asks for a review first (issue 51).
    await form.getByRole('button', { name: 'Review bid' }).click();
    await form.getByRole('button', { name: 'Confirm bid' }).click();
    await expect.poll(() => form.getByRole('status').innerText()).toMatch(/Bid placed: order \S+\./);
    const orderId = /order (\S+)\./.exec(await form.getByRole('status').innerText())![1]!;

    // The exchange publishes the indicative price; the view reads it again within 5 s, without a click, and charts it.
    await expect
      .poll(() => card.locator('[data-indicative="all"]').innerText(), { timeout: STEP_MS })
      .toBe('101.00 on 400 shares');
    expect(await card.locator('[data-indicative="margin_100"]').innerText()).toBe('101.00 on 400 shares');
    expect(await card.locator('[data-indicative="margin_0"]').innerText()).toBe('no valid bid');
    expect(await card.locator('svg.indicative-chart desc').textContent()).toContain('the latest 101.00 on 400 shares');
    expect(await card.locator('svg.indicative-chart circle.latest title').textContent()).toBe(
      'Latest: 101.00 on 400 shares',
    );
    await screenshot('11b-offer-day-t');

    // Carrying forward is a T+1 act: not offered on T.
    await openView(page, 'Orders');
    const row = page.locator(`tr[data-order-id="${orderId}"]`);
    await expect.poll(() => row.getAttribute('data-status'), { timeout: STEP_MS }).toBe('PENDING');
    expect(await row.innerText()).toContain('offer BETA-OFS-1, NII');
    const carry = row.getByRole('button', { name: `Carry forward order ${orderId}` });
    expect(await carry.count()).toBe(0);
    const dialog = page.getByRole('dialog');

    // T closes with 400 shares bid for 875: the offer waits for the operator, who lets it go on.
    await importBeta(Date.now());
    await openView(page, 'OFS offers');
    await expect.poll(() => card.locator('.offer-notice').count(), { timeout: STEP_MS }).toBe(1);
    expect(await card.locator('.offer-notice').innerText()).toBe(
      'T closed with non-retail demand short of the portion: waiting for the operator',
    );
    await expect
      .poll(() => page.locator('#announcer').innerText())
      .toContain(
        'Offer BETA (BETA-OFS-1): T closed with non-retail demand short of the portion: waiting for the operator',
      );
    expect(await form.count()).toBe(0);
    await screenshot('11c-offer-awaiting-operator');
    const proceed = await runOrdergate(['ofs', 'proceed', 'BETA-OFS-1'], { env });
    expect(proceed.code, proceed.stderr).toBe(0);
    // The T allocation allots the bidder's cap, 250 shares, at the bid's price (price priority), 101.00. The
    // non-retail portion was not oversubscribed: the T-day cut-off is the floor, and the retail price with it.
    await expect
      .poll(() => card.locator('.offer-state').innerText(), { timeout: STEP_MS })
      .toBe('Day T+1; day T+1: retail, employee and carried-forward bids');
    expect(await card.innerText()).toMatch(/T-day cut-off\s+100\.00/);
    expect(await card.innerText()).toMatch(/Retail price\s+97\.50: the T-day cut-off 100\.00 less Rs 2\.50/);
    expect(await card.locator('.offer-notice').count()).toBe(0);
    // The indicative price stays, as T's final figures.
    expect(await card.locator('.indicative h4').first().innerText()).toMatch(
      /^Final indicative price at T close \d\d:\d\d(:\d\d)? IST$/,
    );

    // The operator opens the offer's book from its card: the NII row has the 250 shares allotted at 101.00
    // and the 150 still bid for, which are the open non-retail demand, against the portion of 875.
    await card.getByRole('link', { name: 'Book of BETA (BETA-OFS-1)' }).click();
    await expect.poll(() => page.evaluate('document.activeElement?.textContent')).toBe('Book of offer BETA-OFS-1');
    expect(new URL(page.url()).hash).toBe('#/offers/BETA-OFS-1/book');
    expect(
      await page
        .getByRole('navigation', { name: 'Views' })
        .getByRole('link', { name: 'OFS offers', exact: true })
        .getAttribute('aria-current'),
    ).toBe('true');
    const categories = page.getByRole('table', { name: /^Bids by category and listing/ });
    const cells = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, ' ').trim();
    await expect
      .poll(() => cells(categories.locator('tr.category-row[data-category="NII"]')), { timeout: STEP_MS })
      .toBe('NII All listings 1 150 250 Rs 25,250.00');
    expect(await cells(categories.locator('tr[data-category="NII"][data-listing="NSE_EQ:700002"]'))).toBe(
      'NII NSE_EQ 700002 1 150 250 Rs 25,250.00',
    );
    // Categories with no bids fold into one line.
    expect(await categories.locator('tr.category-row[data-category="RETAIL"]').count()).toBe(0);
    expect(await page.locator('.offer-book [data-no-bids]').innerText()).toMatch(/^No bids: .*Retail/);
    expect(await page.locator('.offer-book .offer-state').innerText()).toBe(
      'BETA: Day T+1; day T+1: retail, employee and carried-forward bids',
    );
    expect(await page.locator('[data-fact="t_cutoff"]').innerText()).toBe('100.00');
    expect(await page.locator('.offer-book .offer-notice').count()).toBe(0);
    const demand = page.getByRole('table', { name: /^Open non-retail demand by price/ });
    expect(await cells(demand.locator('tbody'))).toBe('101.00 150 150 1');
    expect(await page.locator('svg.book-chart desc').textContent()).toBe(
      '150 non-retail shares open against the non-retail portion of 875, at prices from 101.00 to 101.00, T-day cut-off 100.00.',
    );
    expect(await page.locator('svg.book-chart line.clearing').count()).toBe(1);
    await screenshot('11c2-offer-book');

    await openView(page, 'Orders');
    await expect.poll(() => row.innerText(), { timeout: STEP_MS }).toMatch(/\b400\s.*\b250 at 101\.00\b/);
    expect(await row.getAttribute('data-status')).toBe('PENDING');
    await carry.click();
    // At or above the cut-off, the bid goes forward as it is: its price is offered, and its unallotted 150 are blocked again.
    await expect
      .poll(() => dialog.locator('[data-carry="cut-off"]').innerText())
      .toMatch(/^T-day cut-off 100\.00: the bid's 101\.00 stands at or above it/);
    expect(await dialog.getByLabel('Price (Rs)').inputValue()).toBe('101.00');
    expect(await dialog.locator('[data-carry="funds"]').innerText()).toContain('150 \u00d7 101.00 = Rs 15,150.00');
    await dialog.getByRole('button', { name: 'Carry forward' }).click();
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.locator('#announcer').innerText()).toContain(`Carry-forward of order ${orderId} sent to the OMS`);
    await expect.poll(() => carry.innerText(), { timeout: STEP_MS }).toBe('Carried forward');
    expect(await carry.isDisabled()).toBe(true);
    await screenshot('11d-orders-carried-forward');

    const retail = await runOrdergate(['users', 'set-category', state.demo.user_id, 'RETAIL'], { env });
    expect(retail.code, retail.stderr).toBe(0);
  }, 120_000);

  it('fits a 375 px phone: no view scrolls sideways, and chart text reads at 11 px or more', async () => {
    await page.setViewportSize({ width: 375, height: 812 });
    for (const [label, name, loaded] of [
      ['OFS issues', '12-phone-issues', 'article[data-issue]'],
      ['OFS offers', '12b-phone-offers', 'article[data-offer]'],
      ['Orders', '13-phone-orders', 'tr[data-order-id]'],
      ['Carts', '14-phone-carts', 'table'],
      ['Funds and holdings', '15-phone-funds', '[data-amount="cash"]'],
      ['OFS book', '16-phone-book', 'svg.book-chart'],
    ] as const) {
      await openView(page, label);
      await page.locator(loaded).first().waitFor();
      if (label === 'Carts') {
        await page.getByRole('button', { name: 'Open cart e2e cart, edited' }).click();
        await page.getByRole('form', { name: 'Cart e2e cart, edited' }).waitFor();
      }
      const widths = await page.evaluate<{ scroll: number; viewport: number }>(
        '({ scroll: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth })',
      );
      expect(widths.scroll, `${label} is ${widths.scroll} px wide`).toBeLessThanOrEqual(widths.viewport);
      // A chart is drawn at the width it is shown at: its text reads at 11 px or more.
      const charts = page.locator('svg:is(.book-chart, .indicative-chart)');
      if ((await charts.count()) > 0)
        expect(await smallestChartText(charts), `the smallest text of ${label}'s charts`).toBeGreaterThanOrEqual(11);
      await screenshot(name);
    }
    // An offer's book, reached from the offer's card rather than from the header.
    await openView(page, 'OFS offers');
    await page
      .locator('article[data-offer="BETA-OFS-1"]')
      .getByRole('link', { name: 'Book of BETA (BETA-OFS-1)' })
      .click();
    await page.locator('table.category-table').waitFor();
    const widths = await page.evaluate<{ scroll: number; viewport: number }>(
      '({ scroll: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth })',
    );
    expect(widths.scroll, `the offer's book is ${widths.scroll} px wide`).toBeLessThanOrEqual(widths.viewport);
    expect(
      await smallestChartText(page.locator('svg.book-chart')),
      "the smallest text of the offer's book chart",
    ).toBeGreaterThanOrEqual(11);
    await screenshot('16b-phone-offer-book');
  });

  describe('in a second tab, with a long order book and a clock the test moves', () => {
    let other: Page;
    /** While the test has the tab offline, the browser logs each request it cuts off: those are not the page's errors. */
    let offline = false;
    const eventRequests: (string | undefined)[] = [];

    /** One made-up order of the book the second tab is answered (newest first: BOOK99999, BOOK99998, ...). */
    const madeUpOrder = (n: number) => ({
      order_id: `BOOK${String(99_999 - n).padStart(5, '0')}`,
      exchange: 'NSE_EQ',
      scrip_token: 500112,
      symbol: 'SBIN',
      series: 'OF',
      transaction_type: 'BUY',
      product_type: 'OFS',
      order_type: 'RL',
      status: 'CANCELLED',
      total_quantity: 1,
      traded_quantity: 0,
      pending_quantity: 0,
      disclosed_quantity: 0,
      order_price: '101.00',
      trigger_price: '0.00',
      traded_price: '0.00',
      validity: 'DAY',
      validity_days: 0,
      order_timestamp: '2026-01-02 10:00:00',
      exchange_timestamp: '2026-01-02 10:00:00',
      last_modified: '2026-01-02 10:00:00',
      error_reason: '',
      exchange_order_no: '',
      client_id: state.demo.user_id,
      order_identifier: '',
      algo_id: '',
      strategy_id: '',
      part_code: '',
      vender_code: '',
      category: 'RETAIL',
      offer_id: '',
      bid_category: '',
      margin_type: '',
      carried_forward: false,
    });

    it('reads every page of a long order book, and says so when it holds more than the console reads', async () => {
      other = await watchedPage(browser, STEP_MS, problems, {
        label: 'second tab',
        // The test takes the tab offline on purpose.
        ignore: (message) => offline && /ERR_INTERNET_DISCONNECTED/.test(message.text()),
      });
      other.on('request', (request) => {
        if (new URL(request.url()).pathname === '/transactional/v1/orders/events')
          eventRequests.push(request.headers()['last-event-id']);
      });
      // The clock runs as usual until the test moves it (the next test); it must be installed before the page loads.
      await other.clock.install();
      // The order book answers are a made-up book of 6,500 orders.
      const asked: string[] = [];
      await other.route(/\/transactional\/v1\/orders\?/, async (route) => {
        const url = new URL(route.request().url());
        asked.push(url.search);
        const page = Number(url.searchParams.get('offset'));
        const limit = Number(url.searchParams.get('limit'));
        const data = Array.from({ length: Math.max(0, Math.min(limit, 6_500 - (page - 1) * limit)) }, (_, i) =>
          madeUpOrder((page - 1) * limit + i),
        );
        await route.fulfill({
          json: {
            status: 'success',
            code: 's-101',
            message: 'Order book fetched successfully',
            data,
            metadata: { total_records: 6_500, offset: page, limit },
          },
        });
      });
      await logIn(other, server.url, state.demo);
      await other.getByRole('link', { name: 'Orders', exact: true }).click();
      const note = other.locator('.book-note');
      await expect
        .poll(() => note.innerText(), { timeout: STEP_MS })
        .toBe(
          'Your 6,500 orders are more than the console reads: the newest 5,000 (and any placed since) are shown, older ones are not.',
        );
      // Five pages of the largest size the API gives, then it stops.
      expect(asked).toEqual([1, 2, 3, 4, 5].map((page) => `?offset=${page}&limit=1000`));
      expect(await other.locator('tr[data-order-id^="BOOK"]').count()).toBe(5_000);
      expect(await other.locator('tbody tr').first().getAttribute('data-order-id')).toBe('BOOK99999');
      expect(await other.locator('tbody tr').last().getAttribute('data-order-id')).toBe('BOOK95000');
      await other.screenshot({ path: join(SCREENSHOTS, '17-orders-capped.png') });
    }, 60_000);

    it('takes a silent stream (a laptop asleep, a NAT gone) for dropped: offline, said once, then live again from where it was', async () => {
      const indicator = other.locator('header .stream-state');
      const text = indicator.locator('.stream-state-text');
      await expect.poll(() => text.innerText()).toBe('Live');
      expect(eventRequests).toEqual([undefined]);
      const announced = async (words: string) =>
        (await other.locator('#announcer p').allTextContents()).filter((line) => line.includes(words)).length;

      // The connection stays open but nothing reaches the page, and 46 s pass at once: past the silence limit
      // (three heartbeats missed), the page drops the stream and tries again, which fails while offline.
      offline = true;
      await other.context().setOffline(true);
      await other.clock.fastForward('00:46');
      await expect.poll(() => text.innerText(), { timeout: STEP_MS }).toMatch(/^Offline, retrying in \d+ s$/);
      expect(await indicator.getAttribute('data-state')).toBe('offline');
      await other.screenshot({ path: join(SCREENSHOTS, '18-stream-offline.png') });
      // The retries (1 s, then 2 s) fail too: the loss is announced once, not at each retry.
      await other.waitForTimeout(3_500);
      expect(eventRequests.length).toBeGreaterThanOrEqual(3);
      expect(await announced('Live order updates are offline')).toBe(1);

      await other.context().setOffline(false);
      await expect.poll(() => text.innerText(), { timeout: STEP_MS }).toBe('Live');
      offline = false;
      expect(await announced('Live order updates are offline')).toBe(1);
      expect(await announced('Live order updates are back')).toBe(1);
      // Each reconnection asked for the events after the last one it had (the id the stream opened with).
      expect(eventRequests.slice(1).every((id) => id !== undefined && /^\d+$/.test(id))).toBe(true);
      await other.close();
    }, 60_000);
  });

  it('logged no console error and broke no CSP rule', () => {
    expect(problems).toEqual([]);
  });
});
