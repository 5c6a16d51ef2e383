/**
 * The console's order book as a trader's terminal, end to end (issue 25, rows 3 and 9): `npm start`'s
 * server (dist/main.js) on a fresh SQLite file seeded by `ordergate demo`, the console as
 * scripts/build-console.ts builds it, and Debian's Chromium driven by playwright-core, in a browser whose
 * clock is New York's. Bids placed, cancelled and allotted through the API (the TypeScript client) give a
 * live, a cancelled and an executed order and a trade. The book shows them in open / finished / trades tabs
 * (read again live), each status as its state's badge, a polite notice for each change, ids shortened
 * (the full id in the history, copyable), Modify and Cancel on open orders only, and times to the second in
 * India time; the holdings label their value as a cost. A second tab, answered a made-up book, shows the
 * badge of every status. Every tab fits a 390 px phone. The page must log no error and break no CSP rule.
 * Screenshots are kept in test-artifacts/console-orders/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { chromiumRuns, launchChromium, CSP_REPORTER, watchProblems } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrdergateClient } from '../../packages/client/src/index.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { demoOfsIssue } from '../../src/cli/demo.js';
import { ROOT, runOrdergate } from '../cli/run-ordergate.js';
import type { ServerProcess } from '../support/server-process.js';
import { demoWorkspace, startDemoServer, stopDemoServer } from '../support/demo-server.js';
import { logIn, openView, rowLayout } from '../support/console-page.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console-orders');
/** Every wait in the page is bounded by this (generous: a loaded machine slows Chromium's steps a lot). */
const STEP_MS = 20_000;
/** How long after its import the closing issue's windows close: time enough to place, cancel and open the trades tab. */
const CLOSES_IN_MS = 20_000;

const runs = chromiumRuns('test/e2e/console-orders.test.ts');

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
/** ODIN's India-time "2026-04-17 12:46:34" as the console must show it: "17 Apr 2026, 12:46:34 IST". */
const inIst = (odin: string) => {
  const [, year, month, day, clock] = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}:\d{2}:\d{2})$/.exec(odin)!;
  return `${Number(day)} ${MONTHS[Number(month) - 1]} ${year}, ${clock} IST`;
};
const lastEight = (orderId: string) => `\u2026${orderId.slice(-8)}`;
/** How a badge looks: its fill, its text colour and its border's style (the function runs in the page). */
const look = (badge: Locator): Promise<string> =>
  badge.evaluate((element) => {
    type Style = Record<'backgroundColor' | 'color' | 'borderTopStyle', string>;
    const style = (globalThis as unknown as { getComputedStyle(element: unknown): Style }).getComputedStyle(element);
    return `${style.backgroundColor} ${style.color} ${style.borderTopStyle}`;
  });

describe.runIf(runs)('the order book in headless Chromium', () => {
  const { dir, env } = demoWorkspace('ordergate-console-orders-');
  let server: ServerProcess;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let api: OrdergateClient;
  /** Console errors, page errors and CSP violations seen in the pages. */
  const problems: string[] = [];
  const state = {} as {
    demo: { user_id: string; password: string; api_key: string; access_token: string };
    /** When the closing issue's windows close (epoch ms). */
    closesAt: number;
    /** A bid left live, one cancelled, one allotted at the close. */
    live: string;
    cancelled: string;
    executed: string;
  };

  const screenshot = (name: string, on: Page = page) =>
    on.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const orderRow = (orderId: string, on: Page = page) => on.locator(`tr[data-order-id="${orderId}"]`);
  const tab = (name: RegExp, on: Page = page) =>
    on.getByRole('tablist', { name: 'Your orders and trades' }).getByRole('tab', { name });
  const notices = () => page.locator('.order-notices');
  const text = async (locator: Locator) => (await locator.innerText()).replace(/\s+/g, ' ').trim();
  beforeAll(async () => {
    await ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ server, demo: state.demo } = await startDemoServer<typeof state.demo>(env));
    api = new OrdergateClient({ baseUrl: server.url }).withToken(state.demo.access_token, state.demo.api_key);
    browser = await launchChromium(STEP_MS);
    // A trader abroad: the page's clock is New York's, and the console still shows India time.
    context = await browser.newContext({
      viewport: { width: 1366, height: 800 },
      timezoneId: 'America/New_York',
      permissions: ['clipboard-read', 'clipboard-write'],
    });
    context.setDefaultTimeout(STEP_MS);
    await context.addInitScript(CSP_REPORTER);
    page = await context.newPage();
    watchProblems(page, problems, { label: 'first tab' });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopDemoServer(server, dir);
  });

  it('logs in and opens the order book', async () => {
    await logIn(page, server.url, state.demo);
    await openView(page, 'Orders');
  });

  it('shows bids placed through the API as they go live', async () => {
    // An issue like the demo's on BSE_EQ 543210 whose windows close shortly, its allotments settled at once.
    state.closesAt = Date.now() + CLOSES_IN_MS;
    const issue = {
      ...demoOfsIssue(Date.now(), CLOSES_IN_MS),
      exchange: 'BSE_EQ' as const,
      scrip_token: 543210,
      settlement_delay_seconds: 0,
    };
    const file = join(dir, 'closing-issue.json');
    writeFileSync(file, JSON.stringify([issue]));
    const imported = await runOrdergate(['ofs', 'import', file], { env });
    expect(imported.code, imported.stderr).toBe(0);
    const closing = { exchange: 'BSE_EQ' as const, scrip_token: 543210, symbol: 'SBIN', series: 'OF' };
    const demoIssue = { exchange: 'NSE_EQ' as const, scrip_token: 500112, symbol: 'SBIN', series: 'OF' };
    const bid = { transaction_type: 'BUY', product_type: 'OFS', order_type: 'RL' } as const;
    state.executed = (await api.place({ ...bid, scrip_info: closing, quantity: '40', price: 102 })).data.orderId;
    state.live = (
      await api.place({ ...bid, scrip_info: demoIssue, quantity: '10', price: 101.5, order_identifier: 'e2e-live' })
    ).data.orderId;
    state.cancelled = (await api.place({ ...bid, scrip_info: demoIssue, quantity: '5', price: 101 })).data.orderId;
    for (const orderId of [state.executed, state.live, state.cancelled]) {
      await expect.poll(() => orderRow(orderId).getAttribute('data-status'), { timeout: STEP_MS }).toBe('PENDING');
    }
    expect(Date.now()).toBeLessThan(state.closesAt - 5_000);
  });

  it('tells each change of an order in a notice, from the live updates, and says it aloud once', async () => {
    await api.cancel('NSE_EQ', state.cancelled);
    await expect
      .poll(() => orderRow(state.cancelled).getAttribute('data-status'), { timeout: STEP_MS })
      .toBe('CANCELLED');
    const region = notices();
    // Said aloud once, by the page's announcer; the notices are for the eye (no second live region).
    expect(await region.getAttribute('aria-live')).toBeNull();
    await expect
      .poll(() => page.locator('#announcer').innerText())
      .toContain(`Order ${state.cancelled}, SBIN 5 at 101.00: CANCELLED`);
    const notice = region.locator(`[data-notice-order="${state.cancelled}"]`);
    // Read aloud as "PENDING to CANCELLED" (the time is for the eye); shown with an arrow.
    await expect
      .poll(() => notice.first().innerText())
      .toMatch(
        new RegExp(
          `^\\d\\d:\\d\\d:\\d\\d IST\\s*Order ${lastEight(state.cancelled)} \\(SBIN 5 at 101\\.00\\): PENDING\\s+to\\s+CANCELLED$`,
        ),
      );
    expect(await region.locator('p').first().getAttribute('data-notice-order')).toBe(state.cancelled);
    await screenshot('01-notice-cancelled');
  });

  it('lists the trades in their own tab, read again live when a bid is allotted', async () => {
    await tab(/^Trades/).click();
    const panel = page.getByRole('tabpanel', { name: /^Trades/ });
    await expect.poll(() => panel.innerText()).toContain('No trades yet');
    expect(Date.now()).toBeLessThan(state.closesAt);
    // The issue closes: the allotment comes on the event stream, and the tab reads the trades again, no click.
    const trades = panel.getByRole('table', { name: 'Your trades (allotments), newest first' });
    await expect
      .poll(() => trades.locator('tbody tr').count(), { timeout: state.closesAt - Date.now() + STEP_MS })
      .toBe(1);
    const [trade] = (await api.tradeBook()).data;
    expect(trade!.order_id).toBe(state.executed);
    const cells = trades.locator(`tr[data-trade-id="${trade!.trade_id}"] td`);
    const amount = ((Math.round(Number(trade!.traded_price) * 100) * trade!.traded_quantity) / 100).toFixed(2);
    expect(await cells.allInnerTexts()).toEqual([
      inIst(trade!.trade_timestamp),
      lastEight(state.executed),
      'SBIN OF BSE_EQ',
      String(trade!.traded_quantity),
      trade!.traded_price,
      `Rs ${Number(amount).toLocaleString('en-IN', { minimumFractionDigits: 2 })}`,
    ]);
    expect(await tab(/^Trades/).innerText()).toBe('Trades (1)');
    await screenshot('02-trades');
  }, 60_000);

  it('tells the allotment in a notice too', async () => {
    await expect
      .poll(() => orderRow(state.executed).getAttribute('data-status'), {
        timeout: Math.max(0, state.closesAt - Date.now()) + STEP_MS,
      })
      .toBe('EXECUTED');
    const notice = notices().locator(`[data-notice-order="${state.executed}"]`);
    await expect
      .poll(() => notice.first().innerText())
      .toMatch(
        new RegExp(
          `Order ${lastEight(state.executed)} \\(SBIN 40 at 102\\.00\\): PENDING\\s+to\\s+EXECUTED; allotted 40 at \\d+\\.\\d\\d$`,
        ),
      );
  }, 60_000);

  it('keeps open and finished orders in their own tabs, moved between them with the keyboard', async () => {
    await tab(/^Open/).click();
    expect(await tab(/^Open/).getAttribute('aria-selected')).toBe('true');
    expect(await tab(/^Open/).innerText()).toBe('Open (1)');
    expect(await tab(/^Finished/).innerText()).toBe('Finished (2)');
    const open = page.getByRole('tabpanel', { name: /^Open/ });
    expect(
      await open
        .locator('tr[data-order-id]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-order-id'))),
    ).toEqual([state.live]);
    expect(await orderRow(state.live).isVisible()).toBe(true);
    expect(await orderRow(state.cancelled).isVisible()).toBe(false);
    await screenshot('03-open');

    // The ARIA tabs pattern: the arrows move between the tabs, each showing its panel.
    await tab(/^Open/).focus();
    await page.keyboard.press('ArrowRight');
    expect(await page.evaluate('document.activeElement?.id')).toBe('orders-tab-finished');
    expect(await tab(/^Finished/).getAttribute('aria-selected')).toBe('true');
    const finished = page.getByRole('tabpanel', { name: /^Finished/ });
    // Newest first: the cancelled bid was placed after the executed one.
    expect(
      await finished
        .locator('tr[data-order-id]')
        .evaluateAll((rows) => rows.map((row) => row.getAttribute('data-order-id'))),
    ).toEqual([state.cancelled, state.executed]);
    expect(await orderRow(state.cancelled).isVisible()).toBe(true);
    expect(await orderRow(state.live).isVisible()).toBe(false);
    await screenshot('04-finished');
    await page.keyboard.press('ArrowLeft');
    expect(await tab(/^Open/).getAttribute('aria-selected')).toBe('true');
  });

  it('shows each state as its own badge: live, executed and cancelled look different', async () => {
    const badge = (orderId: string) => orderRow(orderId).locator('td[data-label="Status"] .badge');
    expect(await badge(state.live).getAttribute('data-state')).toBe('live');
    expect(await badge(state.live).innerText()).toBe('PENDING');
    expect(await badge(state.executed).getAttribute('data-state')).toBe('executed');
    expect(await badge(state.cancelled).getAttribute('data-state')).toBe('cancelled');
    const looks = [
      await look(badge(state.live)),
      await look(badge(state.executed)),
      await look(badge(state.cancelled)),
    ];
    expect(new Set(looks).size).toBe(3);
  });

  it('offers Modify and Cancel on open orders only; any order has its history', async () => {
    const live = orderRow(state.live);
    expect(await live.getByRole('button', { name: `Modify order ${state.live}` }).isEnabled()).toBe(true);
    expect(await live.getByRole('button', { name: `Cancel order ${state.live}` }).isEnabled()).toBe(true);
    for (const orderId of [state.cancelled, state.executed]) {
      const row = orderRow(orderId);
      expect(await row.locator('[data-action="modify"], [data-action="cancel"]').count()).toBe(0);
      expect(await row.locator('button').allTextContents()).toEqual(['History']);
    }
  });

  it('shortens the order id in the table, and gives the full id in the history, to copy', async () => {
    const row = orderRow(state.live);
    const id = row.locator('td[data-label="Order"] code');
    expect(await id.innerText()).toBe(lastEight(state.live));
    expect(await id.getAttribute('title')).toBe(state.live);
    expect(await text(row.locator('td[data-label="Order"]'))).toBe(`${lastEight(state.live)} (e2e-live)`);
    // No longer the widest column: the id takes about 9 characters' room, not 36.
    expect((await id.boundingBox())!.width).toBeLessThan(100);

    await row.getByRole('button', { name: `History of order ${state.live}` }).click();
    const dialog = page.getByRole('dialog');
    try {
      await dialog.locator('.history li').first().waitFor();
      expect(await dialog.locator('.full-order-id').innerText()).toBe(state.live);
      expect(await dialog.locator('.history li').first().innerText()).toMatch(
        /^[A-Z]+.* \(\d{1,2} [A-Z][a-z]{2} \d{4}, \d\d:\d\d:\d\d IST\)$/,
      );
      await dialog.getByRole('button', { name: 'Copy order id' }).click();
      await expect.poll(() => dialog.getByRole('status').innerText()).toBe('Order id copied');
      expect(await page.evaluate('navigator.clipboard.readText()')).toBe(state.live);
      await screenshot('05-history');
    } finally {
      // Closed whatever happened: the modal dialog would keep the next tests' clicks off the page.
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'hidden' });
    }
  });

  it("shows times to the second in India time, whatever the reader's time zone: today's as the time alone", async () => {
    expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');
    const [order] = (await api.orderBook({ order_id: state.live })).data;
    const cell = orderRow(state.live).locator('td[data-label="Last change"]');
    expect(await cell.innerText()).toBe(inIst(order!.last_modified).split(', ')[1]);
    expect(await cell.locator('time').getAttribute('title')).toBe(inIst(order!.last_modified));
  });

  it('puts each order on one line of about 40 px on a 1366 px desktop, the table not scrolling sideways', async () => {
    for (const name of ['Open', 'Finished']) {
      await tab(new RegExp(`^${name}`)).click();
      const panel = page.getByRole('tabpanel', { name: new RegExp(`^${name}`) });
      const rows = panel.locator('tbody tr');
      await rows.first().waitFor();
      for (const row of await rows.all()) {
        const layout = await rowLayout(row);
        const what = `a row of the ${name} tab (${(await row.innerText()).replace(/\s+/g, ' ')})`;
        expect(layout.height, `${what} is ${layout.height} px high`).toBeLessThanOrEqual(44);
        // No cell wraps: the tallest is a 32 px button.
        expect(layout.tallestCell, `${what} has a cell ${layout.tallestCell} px high`).toBeLessThanOrEqual(44);
      }
      const wrap = await panel
        .locator('.table-wrap')
        .evaluate((element) => ({ scroll: element.scrollWidth, client: element.clientWidth }));
      expect(wrap.scroll, `the ${name} table is ${wrap.scroll} px wide in ${wrap.client}`).toBeLessThanOrEqual(
        wrap.client,
      );
      await screenshot(`03b-desktop-${name.toLowerCase()}`);
    }
    await tab(/^Open/).click();
  });

  it("labels the holdings' value as what they cost", async () => {
    await openView(page, 'Funds and holdings');
    const holdings = page.getByRole('table', { name: /^Holdings: settled shares, one per company/ });
    await holdings.waitFor();
    expect(await holdings.getByRole('columnheader').allInnerTexts()).toEqual([
      'Company',
      'Quantity',
      'Average price',
      'Cost (quantity \u00d7 average price)',
      'Settled',
    ]);
    const [holding] = (await api.holdings()).data;
    // One company, one lot: the company's row and its lot's cost the same.
    const cost = holdings.locator('tbody tr.holding-row').first().locator('td[data-label^="Cost"]');
    expect(await holdings.locator('tbody tr.lot-row td[data-label^="Cost"]').allInnerTexts()).toEqual([
      await cost.innerText(),
    ]);
    expect(await cost.innerText()).toBe(
      `Rs ${Number(holding!.value).toLocaleString('en-IN', { minimumFractionDigits: 2 })}`,
    );
    expect(Number(holding!.value)).toBeCloseTo(holding!.quantity * Number(holding!.average_price), 2);
    await screenshot('06-holdings');
  });

  it('fits a 390 px phone: a header under 64 px, each order and trade on one or two lines, no tab scrolling sideways', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    const fits = async (what: string) => {
      const widths = await page.evaluate<{ scroll: number; viewport: number }>(
        '({ scroll: document.documentElement.scrollWidth, viewport: document.documentElement.clientWidth })',
      );
      expect(widths.scroll, `${what} is ${widths.scroll} px wide`).toBeLessThanOrEqual(widths.viewport);
    };
    await fits('Funds and holdings');
    // The header is one row: the views and the session fold behind a Menu button.
    const header = page.locator('header.top');
    const headerHeight = (await header.boundingBox())!.height;
    expect(headerHeight, `the header is ${headerHeight} px high`).toBeLessThan(64);
    expect(await header.locator('.stream-state').isVisible()).toBe(true);
    const menu = page.getByRole('button', { name: 'Menu' });
    const ordersLink = page
      .getByRole('navigation', { name: 'Views' })
      .getByRole('link', { name: 'Orders', exact: true });
    expect(await ordersLink.isVisible()).toBe(false);
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    expect(await page.getByRole('button', { name: 'Log out' }).isVisible()).toBe(true);
    await ordersLink.focus();
    await page.keyboard.press('Escape');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Menu');
    expect(await ordersLink.isVisible()).toBe(false);
    await openView(page, 'Orders');
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    // The three tabs stay on one row.
    const tops = await page.getByRole('tab').evaluateAll((tabs) => tabs.map((tab) => tab.getBoundingClientRect().top));
    expect(new Set(tops).size, `the tabs' tops: ${tops.join(', ')}`).toBe(1);
    for (const name of ['Open', 'Finished', 'Trades']) {
      await tab(new RegExp(`^${name}`)).click();
      const rows = page.getByRole('tabpanel', { name: new RegExp(`^${name}`) }).locator('tbody tr');
      await rows.first().waitFor();
      await fits(`The ${name} tab`);
      for (const row of await rows.all()) {
        const layout = await rowLayout(row);
        const what = `a row of the ${name} tab (${(await row.innerText()).replace(/\s+/g, ' ')})`;
        expect(layout.lines, `${what} takes ${layout.lines} lines`).toBeLessThanOrEqual(2);
        expect(layout.tallestCell, `${what} has a cell ${layout.tallestCell} px high`).toBeLessThanOrEqual(40);
        expect(layout.height, `${what} is ${layout.height} px high`).toBeLessThanOrEqual(96);
      }
      await screenshot(`07-phone-${name.toLowerCase()}`);
    }
    await page.setViewportSize({ width: 1366, height: 800 });
  });

  it('draws the badge of every status, in a second tab answered a made-up book', async () => {
    const other = await context.newPage();
    watchProblems(other, problems, { label: 'second tab' });
    const statuses = ['OMSXMITTED', 'EXXMITTED', 'PENDING', 'EXECUTED', 'CANCELLED', 'OMSREJECT', 'ORDERERROR'];
    const [template] = (await api.orderBook({ order_id: state.live })).data;
    const made = statuses.map((status, n) => ({
      ...template!,
      order_id: `MADE-UP-${n}`,
      status,
      order_identifier: '',
    }));
    await other.route(/\/transactional\/v1\/orders\?/, (route) =>
      route.fulfill({
        json: {
          status: 'success',
          code: 's-101',
          message: 'Order book fetched successfully',
          data: made,
          metadata: { total_records: made.length, offset: 1, limit: 1000 },
        },
      }),
    );
    await logIn(other, server.url, state.demo);
    await other.getByRole('link', { name: 'Orders', exact: true }).click();
    for (const order of made) await orderRow(order.order_id, other).waitFor({ state: 'attached' });
    const badges = await Promise.all(
      made.map((order) =>
        (async () => {
          const badge = orderRow(order.order_id, other).locator('.badge');
          return { state: await badge.getAttribute('data-state'), look: await look(badge) };
        })(),
      ),
    );
    expect(badges.map((badge) => badge.state)).toEqual([
      'in-flight',
      'in-flight',
      'live',
      'executed',
      'cancelled',
      'rejected',
      'rejected',
    ]);
    // One look per state: the two in flight alike, the two rejected alike, the five states apart.
    expect(badges[0]!.look).toBe(badges[1]!.look);
    expect(badges[5]!.look).toBe(badges[6]!.look);
    expect(new Set(badges.map((badge) => badge.look)).size).toBe(5);
    await screenshot('08-every-badge', other);
    await other.close();
  });

  it('offers Carry forward only when the server would take it: T+1, after the T allocation, on a live non-retail bid not carried forward', async () => {
    const other = await context.newPage();
    watchProblems(other, problems, { label: 'carry-forward tab' });
    const now = Date.now();
    const hour = 3_600_000;
    /** An instant as ODIN's India time, "2026-04-17 12:46:34". */
    const odin = (at: number) => new Date(at + 5.5 * hour).toISOString().slice(0, 19).replace('T', ' ');
    const session = (from: number, to: number) => ({ opens_at: odin(from), closes_at: odin(to) });
    // Day T running; T closed and allocated, T+1 not open yet; T+1 open after the allocation.
    const offers: Record<string, { state: string; t_day: object; t1_day: object; t_cutoff_price: number | null }> = {
      'OFFER-T': {
        state: 'T_OPEN',
        t_day: session(now - hour, now + hour),
        t1_day: session(now + 20 * hour, now + 26 * hour),
        t_cutoff_price: null,
      },
      'OFFER-WAIT': {
        state: 'T_ALLOCATED',
        t_day: session(now - 6 * hour, now - hour),
        t1_day: session(now + 10 * hour, now + 16 * hour),
        t_cutoff_price: 100,
      },
      'OFFER-T1': {
        state: 'T1_OPEN',
        t_day: session(now - 20 * hour, now - 14 * hour),
        t1_day: session(now - hour, now + hour),
        t_cutoff_price: 100,
      },
    };
    const [template] = (await api.orderBook({ order_id: state.live })).data;
    const bid = (order_id: string, offer_id: string, changes: Partial<typeof template> = {}) => ({
      ...template!,
      order_id,
      order_identifier: '',
      status: 'PENDING',
      offer_id,
      bid_category: 'NII',
      carried_forward: false,
      total_quantity: 400,
      traded_quantity: 0,
      traded_price: '0.00',
      ...changes,
    });
    const made = [
      bid('ON-DAY-T', 'OFFER-T'),
      bid('BEFORE-T1', 'OFFER-WAIT', { traded_quantity: 250, traded_price: '101.00' }),
      bid('ON-T1', 'OFFER-T1', { traded_quantity: 250, traded_price: '101.00' }),
      bid('CARRIED', 'OFFER-T1', { carried_forward: true }),
      bid('ALL-ALLOTTED', 'OFFER-T1', { traded_quantity: 400, traded_price: '101.00' }),
      bid('RETAIL-T1', 'OFFER-T1', { bid_category: 'IND' }),
      // Older than today: its row shows the date alone on a desktop, the date and time on a phone.
      bid('OLDER', 'OFFER-T', { last_modified: '2026-01-05 10:00:00', status: 'CANCELLED' }),
    ];
    await other.route(/\/transactional\/v1\/orders\?/, (route) =>
      route.fulfill({
        json: {
          status: 'success',
          code: 's-101',
          message: 'Order book fetched successfully',
          data: made,
          metadata: { total_records: made.length, offset: 1, limit: 1000 },
        },
      }),
    );
    const read: string[] = [];
    await other.route(/\/transactional\/v1\/ofs\/offers\/([^/?]+)$/, (route) => {
      const offerId = decodeURIComponent(new URL(route.request().url()).pathname.split('/').pop()!);
      read.push(offerId);
      const offer = offers[offerId];
      if (offer === undefined) return route.fulfill({ status: 404, json: { status: 'error', code: 'e-404' } });
      return route.fulfill({
        json: {
          status: 'success',
          code: 's-101',
          message: 'Offer fetched successfully',
          data: { server_time: odin(Date.now()), offer: { offer_id: offerId, ...offer }, indicative_history: [] },
        },
      });
    });
    try {
      await logIn(other, server.url, state.demo);
      await other.getByRole('link', { name: 'Orders', exact: true }).click();
      const carry = (orderId: string) =>
        orderRow(orderId, other).getByRole('button', { name: `Carry forward order ${orderId}` });
      await expect.poll(() => carry('ON-T1').count(), { timeout: STEP_MS }).toBe(1);
      expect(await carry('ON-T1').isEnabled()).toBe(true);
      expect(await carry('ON-T1').innerText()).toBe('Carry forward');
      // Day T (always refused), T+1 not open yet, nothing unallotted, a retail bid: not offered.
      for (const orderId of ['ON-DAY-T', 'BEFORE-T1', 'ALL-ALLOTTED', 'RETAIL-T1']) {
        expect(await carry(orderId).count(), `${orderId} offers a carry-forward`).toBe(0);
      }
      // Carried forward: said, not offered again.
      expect(await carry('CARRIED').innerText()).toBe('Carried forward');
      expect(await carry('CARRIED').isDisabled()).toBe(true);
      expect(read).toContain('OFFER-T');

      // The T allocation runs: the offer is read again without a click, and the bid of day T may go forward on T+1.
      offers['OFFER-T'] = {
        ...offers['OFFER-T']!,
        state: 'T1_OPEN',
        t1_day: session(Date.now() - hour, Date.now() + hour),
        t_cutoff_price: 100,
      };
      await expect.poll(() => carry('ON-DAY-T').count(), { timeout: STEP_MS }).toBe(1);

      // An older day's last change: the date alone on a desktop (the instant in its title); both on a phone.
      await other.getByRole('tab', { name: /^Finished/ }).click();
      const older = orderRow('OLDER', other).locator('td[data-label="Last change"]');
      expect(await older.innerText()).toBe('5 Jan 2026');
      expect(await older.locator('time').getAttribute('title')).toBe('5 Jan 2026, 10:00:00 IST');
      expect((await rowLayout(orderRow('OLDER', other))).height).toBeLessThanOrEqual(44);
      await screenshot('09-carry-forward-desktop', other);
      await other.setViewportSize({ width: 390, height: 844 });
      expect(await older.innerText()).toBe('5 Jan 2026, 10:00:00 IST');
      await other.getByRole('tab', { name: /^Open/ }).click();
      const today = orderRow('ON-T1', other).locator('td[data-label="Last change"]');
      expect(await today.innerText()).toBe(inIst(template!.last_modified).split(', ')[1]);
      expect(await carry('ON-T1').isVisible()).toBe(true);
      await screenshot('10-carry-forward-phone', other);
    } finally {
      await other.close();
    }
  }, 60_000);

  it('logged no console error and broke no CSP rule', () => {
    expect(problems).toEqual([]);
  });
});
