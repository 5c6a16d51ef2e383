/**
 * The operator's OFS chart in headless Chromium (issue 25): `npm start`'s server (dist/main.js) on a fresh
 * SQLite file seeded by `ordergate demo`, the console as scripts/build-console.ts builds it, Debian's
 * Chromium driven by playwright-core, as in test/e2e/console.test.ts. Retail and non-retail bids at several
 * prices go into the demo issue; the operator's book shows them with whole-share ticks on the quantity
 * axis, a price axis that starts at the floor, the floor and the retail cut-off marked, and a legend that
 * names only what is drawn. Then the issue closes and is allotted: the demand the allocation took stays on
 * the chart with the allotments drawn over it, and the tables and the chart's text description say the same
 * numbers as the chart. Then (issue 51) the charts read right on any screen, the browser in New York time:
 * their text is 12-13 px and no label overlaps another or leaves its chart at 1366, 390 and 360 px wide;
 * price ticks fall on biddable prices; an offer's indicative chart has its times in IST, 24-hour and
 * labelled, in the chart and its description. Screenshots are kept in test-artifacts/console-chart/.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { chromiumRuns, CSP_REPORTER, launchChromium, watchProblems } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrdergateClient } from '../../packages/client/src/index.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { closedNow, importOfsIssues, ROOT, runOrdergate } from '../cli/run-ordergate.js';
import type { ServerProcess } from '../support/server-process.js';
import { demoWorkspace, startDemoServer, stopDemoServer } from '../support/demo-server.js';
import { logIn, openView } from '../support/console-page.js';
import { offerImport } from '../support/offers.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console-chart');
/** Every wait in the page is bounded by this (as in console.test.ts: one step of Chromium under load took over 10 s). */
const STEP_MS = 20_000;

const runs = chromiumRuns('test/e2e/console-chart.test.ts');

/** A whole number of shares as the console writes it (en-IN grouping: 1,00,000). */
const WHOLE = /^\d{1,3}(,\d\d)*(,\d{3})?$|^\d+$/;

const DESKTOP = { width: 1366, height: 800 };
const SIZES = [
  { name: 'desktop', viewport: DESKTOP },
  { name: 'phone', viewport: { width: 390, height: 844 } },
  { name: 'narrow', viewport: { width: 360, height: 740 } },
] as const;

/** How a chart's text lies: each text's size in CSS px as drawn, its box, and the chart's box. */
interface TextLayout {
  chart: { left: number; top: number; right: number; bottom: number };
  texts: { text: string; size: number; left: number; top: number; right: number; bottom: number }[];
}

/** The layout of the text of each chart `charts` finds (the function runs in the page). */
function chartTexts(charts: Locator): Promise<TextLayout[]> {
  return charts.evaluateAll((svgs) => {
    // The page's types, which the test's own (no DOM library) lack.
    type Rect = { left: number; top: number; right: number; bottom: number; width: number };
    type Text = { textContent: string | null; getBoundingClientRect(): Rect };
    type Svg = {
      viewBox: { baseVal: { width: number } };
      getBoundingClientRect(): Rect;
      querySelectorAll(selector: string): ArrayLike<Text>;
    };
    const { getComputedStyle } = globalThis as unknown as { getComputedStyle(element: unknown): { fontSize: string } };
    const box = (r: Rect) => ({ left: r.left, top: r.top, right: r.right, bottom: r.bottom });
    return (svgs as unknown as Svg[]).map((svg) => {
      const scale = svg.getBoundingClientRect().width / svg.viewBox.baseVal.width;
      return {
        chart: box(svg.getBoundingClientRect()),
        texts: Array.from(svg.querySelectorAll('text'), (text) => ({
          text: text.textContent ?? '',
          size: parseFloat(getComputedStyle(text).fontSize) * scale,
          ...box(text.getBoundingClientRect()),
        })),
      };
    });
  });
}

/** What is wrong with the charts' text: a size outside 12-13 px, a label over another or out of its chart. */
async function textFaults(charts: Locator): Promise<string[]> {
  const faults: string[] = [];
  const layouts = await chartTexts(charts);
  if (layouts.length === 0) faults.push('no chart');
  for (const { chart, texts } of layouts) {
    for (const t of texts) {
      if (t.size < 11.9 || t.size > 13.1) faults.push(`"${t.text}" is ${t.size.toFixed(1)} px`);
      if (
        t.left < chart.left - 0.5 ||
        t.right > chart.right + 0.5 ||
        t.top < chart.top - 0.5 ||
        t.bottom > chart.bottom + 0.5
      )
        faults.push(`"${t.text}" leaves the chart`);
    }
    texts.forEach((a, i) =>
      texts.slice(i + 1).forEach((b) => {
        const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (x > 0.5 && y > 0.5) faults.push(`"${a.text}" overlaps "${b.text}"`);
      }),
    );
  }
  return faults;
}

/**
 * The faults of the charts `charts` finds at each size, each named with its size: once the page is made
 * that size (a phone turned, a window narrowed), then once `reopen` has drawn the view anew at it; each
 * given a few seconds to settle. The charts are photographed as `name`-size.png.
 */
async function faultsAtEachSize(
  page: Page,
  charts: Locator,
  name: string,
  reopen: () => Promise<void>,
): Promise<string[]> {
  const faults: string[] = [];
  const settled = async (label: string) => {
    let found = await textFaults(charts);
    for (
      const deadline = Date.now() + 5_000;
      found.length > 0 && Date.now() < deadline;
      found = await textFaults(charts)
    )
      await page.waitForTimeout(100);
    faults.push(...found.map((fault) => `${label}: ${fault}`));
  };
  for (const { name: size, viewport } of SIZES) {
    await page.setViewportSize(viewport);
    await settled(`${size} (resized)`);
    await reopen();
    await charts.first().waitFor();
    await settled(size);
    await charts.first().screenshot({ path: join(SCREENSHOTS, `${name}-${size}.png`) });
  }
  await page.setViewportSize(DESKTOP);
  return faults;
}

/** Whether `price` is biddable: the floor plus a whole number of ticks. */
const biddable = (price: number, floor: number, tick: number) =>
  price >= floor && Math.abs((price - floor) / tick - Math.round((price - floor) / tick)) < 1e-6;

/** The minutes of the day of `at` in IST, and a tick's "HH:MM" or "HH:MM:SS". */
const istMinuteOfDay = (at: string) => {
  const [hh, mm] = new Intl.DateTimeFormat('en-GB', {
    timeZone: 'Asia/Kolkata',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  })
    .format(Date.parse(at))
    .split(':')
    .map(Number);
  return hh! * 60 + mm!;
};
const tickMinuteOfDay = (tick: string) => Number(tick.slice(0, 2)) * 60 + Number(tick.slice(3, 5));

/** Each series the legend may name, and what the chart draws of it. */
const SERIES: Record<string, string> = {
  'Retail demand': 'path.demand-retail',
  'Non-retail demand': 'path.demand-non_retail',
  Offer: 'line.offer',
  'Clearing price': 'line.clearing',
  'Allotted at a price': 'rect.allotted',
};

describe.runIf(runs)("the operator's OFS chart in headless Chromium", () => {
  const { dir, env } = demoWorkspace('ordergate-console-chart-');
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  /** Console errors, page errors and CSP violations seen in the page. */
  const problems: string[] = [];
  const state = {} as {
    demo: { user_id: string; password: string; api_key: string; access_token: string; ofs_issues: object[] };
    orderIds: string[];
  };

  const screenshot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const chart = () => page.locator('svg.book-chart');
  const summaryCell = (side: 'retail' | 'non_retail', column: number) =>
    page
      .getByRole('table', { name: 'Offer, demand and clearing by category' })
      .locator(`tr[data-side="${side}"] td`)
      .nth(column);

  /** The legend's entries, and the series the chart draws: they must be the same. */
  async function legendAndDrawn(): Promise<{ legend: string[]; drawn: string[] }> {
    const legend = await page.locator('figure.chart ul.legend li').allTextContents();
    const drawn: string[] = [];
    for (const [name, selector] of Object.entries(SERIES))
      if ((await chart().locator(selector).count()) > 0) drawn.push(name);
    return { legend, drawn };
  }

  /** The quantity axis's tick labels, both panels. */
  async function quantityTicks(): Promise<string[]> {
    return chart().locator('text.tick-y').allTextContents();
  }

  beforeAll(async () => {
    await ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ server, demo: state.demo } = await startDemoServer<typeof state.demo>(env));
    // The demo user is an operator already; an operator says so, as one would for any user.
    const operator = await runOrdergate(['users', 'set-operator', state.demo.user_id, 'true'], { env });
    expect(operator.code, operator.stderr).toBe(0);
    browser = await launchChromium(STEP_MS);
    // A trader abroad: the browser's clock is New York's; the desktop is 1366 x 800.
    const context = await browser.newContext({ viewport: DESKTOP, timezoneId: 'America/New_York' });
    page = await context.newPage();
    page.setDefaultTimeout(STEP_MS);
    watchProblems(page, problems);
    await page.addInitScript(CSP_REPORTER);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopDemoServer(server, dir);
  });

  it('takes bids at several prices in the demo issue, retail and non-retail', async () => {
    const api = new OrdergateClient({ baseUrl: server.url }).withToken(state.demo.access_token, state.demo.api_key);
    const scrip = { exchange: 'NSE_EQ' as const, scrip_token: 500112, symbol: 'SBIN', series: 'OF' };
    const place = async (order_type: 'RL' | 'RL-MKT', quantity: string, price: number) =>
      (
        await api.place({
          scrip_info: scrip,
          transaction_type: 'BUY',
          product_type: 'OFS',
          order_type,
          quantity,
          price,
        })
      ).data.orderId;
    // Retail 190 shares (the issue's report: a quantity axis of 190 had a tick at 47.5): 60 at 102.00, 50 at
    // 101.50, 40 at 101.00 and 40 at the cut-off (101.00).
    state.orderIds = [
      await place('RL', '60', 102),
      await place('RL', '50', 101.5),
      await place('RL', '40', 101),
      await place('RL-MKT', '40', 0),
    ];
    // Non-retail 500 shares: the demo user bids as an NII for a moment.
    const nii = await runOrdergate(['users', 'set-category', state.demo.user_id, 'NII'], { env });
    expect(nii.code, nii.stderr).toBe(0);
    state.orderIds.push(await place('RL', '200', 102), await place('RL', '300', 100.5));
    const retail = await runOrdergate(['users', 'set-category', state.demo.user_id, 'RETAIL'], { env });
    expect(retail.code, retail.stderr).toBe(0);
    await expect
      .poll(async () => (await api.orderBook()).data.filter((order) => order.status === 'PENDING').length, {
        timeout: STEP_MS,
      })
      .toBe(state.orderIds.length);
  });

  it('logs in and opens the OFS book', async () => {
    await logIn(page, server.url, state.demo);
    await openView(page, 'OFS book');
    await chart().waitFor();
    await expect
      .poll(
        () =>
          page
            .getByRole('table', { name: /^Live demand by price/ })
            .locator('tbody tr')
            .count(),
        { timeout: STEP_MS },
      )
      .toBe(4);
  });

  describe('before the allotment', () => {
    it('the quantity axis has whole-share ticks, from 0 to above the demand', async () => {
      await screenshot('01-book-before-allotment');
      const ticks = await quantityTicks();
      expect(ticks.length).toBeGreaterThan(4);
      for (const tick of ticks) expect(tick).toMatch(WHOLE);
      const retail = (await chart().locator('g.panel-retail text.tick-y').allTextContents()).map((t) =>
        Number(t.replace(/,/g, '')),
      );
      expect(retail[0]).toBe(0);
      expect(retail.every((t, i) => i === 0 || t > retail[i - 1]!)).toBe(true);
      expect(retail.at(-1)).toBeGreaterThanOrEqual(190);
    });

    it('the price axis starts at the floor, 100.00, not below it', async () => {
      for (const side of ['retail', 'non_retail']) {
        const prices = (await chart().locator(`g.panel-${side} text.tick-x`).allTextContents()).map(Number);
        expect(prices[0], side).toBe(100);
        expect(Math.min(...prices), side).toBe(100);
      }
    });

    it('marks the floor on both panels and the retail cut-off on the retail panel', async () => {
      expect(await chart().locator('line.marker-floor').count()).toBe(2);
      expect(await chart().locator('text.marker-label-floor').allTextContents()).toEqual([
        'Floor 100.00',
        'Floor 100.00',
      ]);
      expect(await chart().locator('g.panel-retail line.marker-cutoff').count()).toBe(1);
      expect(await chart().locator('g.panel-retail text.marker-label-cutoff').allTextContents()).toEqual([
        'Cut-off 101.00',
      ]);
      expect(await chart().locator('g.panel-non_retail .marker-cutoff').count()).toBe(0);
      // The floor's line is where the price axis starts; the cut-off's sits right of it.
      const floorX = Number(await chart().locator('g.panel-retail line.marker-floor').getAttribute('x1'));
      const axisX = Number(await chart().locator('g.panel-retail line.axis').nth(1).getAttribute('x1'));
      expect(floorX).toBe(axisX);
      expect(Number(await chart().locator('g.panel-retail line.marker-cutoff').getAttribute('x1'))).toBeGreaterThan(
        floorX,
      );
    });

    it('names in the legend only the series drawn', async () => {
      // 190 and 500 shares against offers of 1,00,000 and 9,00,000: the offers are named on the panels, not
      // drawn, and the demand fits, so there is no clearing price; the legend names the two demand lines.
      expect(await chart().locator('line.offer').count()).toBe(0);
      expect(await chart().locator('line.clearing').count()).toBe(0);
      const { legend, drawn } = await legendAndDrawn();
      expect(legend).toEqual(drawn);
      expect(legend).toEqual(['Retail demand', 'Non-retail demand']);
    });

    it('the tables and the description say what the chart draws', async () => {
      expect((await summaryCell('retail', 3).innerText()).trim()).toBe('190');
      expect((await summaryCell('non_retail', 3).innerText()).trim()).toBe('500');
      const description = await chart().locator('desc').textContent();
      expect(description).toContain('Retail: 190 shares bid against an offer of 1,00,000');
      expect(description).toContain('Non-retail: 500 shares bid against an offer of 9,00,000');
      expect(description).toContain('Floor price 100.00; retail cut-off price 101.00.');
    });
  });

  describe('after the allotment', () => {
    it('the issue closes and every bid is allotted', async () => {
      // The demo issue with both windows closing now: the OMS allots it at its next pass.
      await importOfsIssues([closedNow(state.demo.ofs_issues[0]!)], env);
      const api = new OrdergateClient({ baseUrl: server.url }).withToken(state.demo.access_token, state.demo.api_key);
      await expect
        .poll(async () => (await api.orderBook()).data.filter((order) => order.status === 'EXECUTED').length, {
          timeout: STEP_MS,
        })
        .toBe(state.orderIds.length);
      // The view reads the book every 2 s until it is allotted, and says so once.
      await expect
        .poll(() => page.getByRole('status').innerText(), { timeout: STEP_MS })
        .toBe('Allotted: 190 retail and 500 non-retail shares.');
      await screenshot('02-book-after-allotment');
    }, 60_000);

    it('the demand the allocation took is still drawn: both lines and every level', async () => {
      expect(await chart().locator('path.demand-retail').count()).toBe(1);
      expect(await chart().locator('path.demand-non_retail').count()).toBe(1);
      expect(await chart().locator('circle.level-retail title').allTextContents()).toEqual([
        '101.00: 190 shares at or above',
        '101.50: 110 shares at or above',
        '102.00: 60 shares at or above',
      ]);
      expect(await chart().locator('circle.level-non_retail title').allTextContents()).toEqual([
        '100.50: 500 shares at or above',
        '102.00: 200 shares at or above',
      ]);
      // The offers' notes count that demand, not 0.
      expect(await chart().locator('text.offer-off-scale').allTextContents()).toEqual([
        'Offer 1,00,000 above the scale (0.19 % bid)',
        'Offer 9,00,000 above the scale (0.06 % bid)',
      ]);
    });

    it('the allotments are drawn over the demand', async () => {
      // Every retail bid in full at 101.00 (the lowest retail bid price: the demand fits), every non-retail
      // one at 100.50.
      expect(await chart().locator('g.panel-retail rect.allotted title').allTextContents()).toEqual([
        '101.00: 190 shares allotted',
      ]);
      expect(await chart().locator('g.panel-non_retail rect.allotted title').allTextContents()).toEqual([
        '100.50: 500 shares allotted',
      ]);
      for (const side of ['retail', 'non_retail']) {
        const drawn = await chart()
          .locator(`g.panel-${side}`)
          .evaluate((group) => [...group.children].map((child) => child.getAttribute('class') ?? ''));
        expect(drawn.indexOf(`allotted allotted-${side}`), side).toBeGreaterThan(
          drawn.indexOf(`demand demand-${side}`),
        );
        expect(drawn.indexOf(`demand demand-${side}`), side).toBeGreaterThanOrEqual(0);
      }
    });

    it('still has whole-share ticks, the floor and the cut-off, and a legend of what is drawn', async () => {
      for (const tick of await quantityTicks()) expect(tick).toMatch(WHOLE);
      expect(await chart().locator('text.marker-label-floor').count()).toBe(2);
      expect(await chart().locator('text.marker-label-cutoff').count()).toBe(1);
      expect((await chart().locator('g.panel-retail text.tick-x').allTextContents())[0]).toBe('100.00');
      const { legend, drawn } = await legendAndDrawn();
      expect(legend).toEqual(drawn);
      expect(legend).toEqual(['Retail demand', 'Non-retail demand', 'Allotted at a price']);
    });

    it('the tables show the real demand beside what was allotted', async () => {
      expect((await summaryCell('retail', 3).innerText()).trim()).toBe('190');
      expect((await summaryCell('retail', 5).innerText()).trim()).toBe('190');
      expect((await summaryCell('non_retail', 3).innerText()).trim()).toBe('500');
      expect((await summaryCell('non_retail', 5).innerText()).trim()).toBe('500');
      const demand = page.getByRole('table', { name: /^Demand at close by price/ });
      const rows = await demand.locator('tbody tr').allInnerTexts();
      expect(rows.map((row) => row.replace(/\s+/g, ' ').trim())).toEqual([
        '102.00 60 0 60 200 200 2',
        '101.50 50 0 110 0 200 1',
        '101.00 80 40 190 0 200 2',
        '100.50 0 0 190 300 500 1',
      ]);
      const allotted = page.getByRole('table', { name: 'Allotted by trade price, highest first' });
      expect((await allotted.locator('tbody').innerText()).replace(/\s+/g, ' ').trim()).toBe(
        '101.00 190 0 100.50 0 500',
      );
    });

    it('the description says the shares bid and what was allotted of them', async () => {
      const description = (await chart().locator('desc').textContent()) ?? '';
      expect(description).toMatch(/^Retail: 190 shares bid against an offer of 1,00,000 .*, 190 allotted\./);
      expect(description).toMatch(/Non-retail: 500 shares bid against an offer of 9,00,000 .*, 500 allotted\./);
      expect(description).toContain('Floor price 100.00; retail cut-off price 101.00.');
    });
  });

  describe('on any screen (issue 51)', () => {
    it('the book chart has 12-13 px text, every title whole, and no label over another or out of the chart, at 1366, 390 and 360 px', async () => {
      const reopen = async () => {
        await openView(page, 'OFS issues');
        await openView(page, 'OFS book');
      };
      expect(await faultsAtEachSize(page, chart(), '03-book', reopen)).toEqual([]);
      for (const { name, viewport } of SIZES) {
        await page.setViewportSize(viewport);
        const titles = await chart()
          .locator('text.panel-title')
          .evaluateAll((texts) => texts.map((text) => (text.textContent ?? '').replace(/\s+/g, ' ').trim()));
        expect(titles, name).toEqual([
          'Retail: cumulative demand at close by price, and allotted',
          'Non-retail: cumulative demand at close by price, and allotted',
        ]);
      }
      await page.setViewportSize(DESKTOP);
      await reopen();
    }, 90_000);

    it('the book chart has price ticks on biddable prices only', async () => {
      await chart().waitFor();
      const prices = (await chart().locator('text.tick-x').allTextContents()).map(Number);
      expect(prices.length).toBeGreaterThan(2);
      for (const price of prices) expect(biddable(price, 100, 0.05), `${price}`).toBe(true);
    });

    describe("an offer's charts", () => {
      const offerChart = () => page.locator('article[data-offer="GAMMA-OFS-1"] svg.indicative-chart');
      const history: { at: string; price: number | null }[] = [];

      it('an offer on day T has bids at 101.35 and 100.85 and an indicative price', async () => {
        const at = (ms: number) => new Date(ms).toISOString();
        const offer = offerImport({
          offer_id: 'GAMMA-OFS-1',
          symbol: 'GAMMA',
          settlement_delay_seconds: 60,
          listings: [
            { exchange: 'NSE_EQ', scrip_token: 700003, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
            { exchange: 'BSE_EQ', scrip_token: 800003, series: { RETAIL: 'C', NON_RETAIL: 'C' } },
          ],
          base_quantity: 100_000,
          green_shoe_quantity: 0,
          employee_quantity: 0,
          t_day: { opens_at: at(Date.now() - 60 * 60 * 1000), closes_at: at(Date.now() + 60 * 60 * 1000) },
          t1_day: { opens_at: at(Date.now() + 2 * 60 * 60 * 1000), closes_at: at(Date.now() + 3 * 60 * 60 * 1000) },
        });
        const file = join(dir, 'offer-gamma.json');
        writeFileSync(file, JSON.stringify([offer]));
        const imported = await runOrdergate(['ofs', 'import', file], { env });
        expect(imported.code, imported.stderr).toBe(0);
        const nii = await runOrdergate(['users', 'set-category', state.demo.user_id, 'NII'], { env });
        expect(nii.code, nii.stderr).toBe(0);
        const api = new OrdergateClient({ baseUrl: server.url }).withToken(state.demo.access_token, state.demo.api_key);
        const scrip = { exchange: 'NSE_EQ' as const, scrip_token: 700003, symbol: 'GAMMA', series: 'IS' };
        for (const [quantity, price] of [
          ['300', 101.35],
          ['200', 100.85],
        ] as const)
          await api.place({
            scrip_info: scrip,
            transaction_type: 'BUY',
            product_type: 'OFS',
            order_type: 'RL',
            quantity,
            price,
          });
        await expect
          .poll(async () => (await api.offer('GAMMA-OFS-1')).data.indicative_history.length, { timeout: STEP_MS })
          .toBeGreaterThan(0);
        const retail = await runOrdergate(['users', 'set-category', state.demo.user_id, 'RETAIL'], { env });
        expect(retail.code, retail.stderr).toBe(0);
        history.push(...(await api.offer('GAMMA-OFS-1')).data.indicative_history);
      });

      it('the indicative chart has its times in IST, 24-hour and labelled, in the chart and its description', async () => {
        expect(await page.evaluate('Intl.DateTimeFormat().resolvedOptions().timeZone')).toBe('America/New_York');
        await openView(page, 'OFS offers');
        await offerChart().waitFor();
        const first = istMinuteOfDay(history[0]!.at);
        const last = istMinuteOfDay(history[history.length - 1]!.at);
        const times = await offerChart().locator('g.panel-quantity text.tick-x').allTextContents();
        expect(times.length).toBeGreaterThan(1);
        for (const time of times) {
          expect(time).toMatch(/^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$/);
          // Within a minute of the bids' time in India (New York's is 9.5 or 10.5 hours off).
          const minute = tickMinuteOfDay(time);
          expect(minute, time).toBeGreaterThanOrEqual(first - 1);
          expect(minute, time).toBeLessThanOrEqual(last + 1);
        }
        expect(await offerChart().locator('text.axis-label-x').allTextContents()).toEqual(['Time (IST)']);
        const hhmm = (minute: number) =>
          `${String(Math.floor(minute / 60)).padStart(2, '0')}:${String(minute % 60).padStart(2, '0')}`;
        expect(await offerChart().locator('desc').textContent()).toContain(
          `from ${hhmm(first)} IST to ${hhmm(last)} IST`,
        );
      });

      it('the indicative chart has price ticks on biddable prices only', async () => {
        const indicative = (await offerChart().locator('g.panel-price text.tick-y').allTextContents()).map(Number);
        expect(indicative.length).toBeGreaterThan(1);
        for (const price of indicative) expect(biddable(price, 100, 0.05), `indicative ${price}`).toBe(true);
      });

      it('the indicative chart has 12-13 px text and no label over another or out of the chart, at 1366, 390 and 360 px', async () => {
        const reopen = async () => {
          await openView(page, 'OFS issues');
          await openView(page, 'OFS offers');
        };
        expect(await faultsAtEachSize(page, offerChart(), '05-indicative', reopen)).toEqual([]);
      }, 90_000);

      it("the offer's book has price ticks on biddable prices only", async () => {
        await page
          .locator('article[data-offer="GAMMA-OFS-1"]')
          .getByRole('link', { name: 'Book of GAMMA (GAMMA-OFS-1)' })
          .click();
        await chart().waitFor();
        const book = (await chart().locator('text.tick-x').allTextContents()).map(Number);
        expect(book.length).toBeGreaterThan(2);
        for (const price of book) expect(biddable(price, 100, 0.05), `offer book ${price}`).toBe(true);
      });

      it("the offer's book chart has 12-13 px text and no label over another or out of the chart, at 1366, 390 and 360 px", async () => {
        const reopen = async () => {
          await openView(page, 'OFS issues');
          await page.evaluate("location.hash = '#/offers/GAMMA-OFS-1/book'");
        };
        expect(await faultsAtEachSize(page, chart(), '04-offer-book', reopen)).toEqual([]);
      }, 90_000);
    });
  });

  it('logged no console error and broke no CSP rule', () => {
    expect(problems).toEqual([]);
  });
});
