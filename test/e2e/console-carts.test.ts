/**
 * The console's cart editor end to end (issue 25, row 5): `npm start`'s server (dist/main.js) on a fresh
 * SQLite file seeded by `ordergate demo`, the console as scripts/build-console.ts builds it, and Debian's
 * Chromium driven by playwright-core, set up as test/e2e/console.test.ts is. The editor refuses a blank
 * name beside the field, offers only what this OMS can place (OFS, RL and RL-MKT), shows a line the server
 * refuses at save (off the tick) beside that line, numbers lines "Line 2" (never the JSON path orders[1]),
 * and words a cut-off line "12 at the cut-off price".
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { chromiumRuns, launchChromium, watchedPage } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { ROOT } from '../cli/run-ordergate.js';
import type { ServerProcess } from '../support/server-process.js';
import { demoWorkspace, startDemoServer, stopDemoServer } from '../support/demo-server.js';
import { openView } from '../support/console-page.js';
import { DELIVERY_LINE } from '../support/fixtures.js';

const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console');
/** Every wait in the page is bounded by this (generous: a whole suite may run beside it). */
const STEP_MS = 20_000;
const CART = '/transactional/v1/ordercart';
const BLANK_NAME = 'Cart name must hold a character other than white space: a name of spaces only shows as no name';

const runs = chromiumRuns('test/e2e/console-carts.test.ts');

describe.runIf(runs)("the console's cart editor in headless Chromium", () => {
  const { dir, env } = demoWorkspace('ordergate-console-carts-');
  let server: ServerProcess;
  let browser: Browser;
  let page: Page;
  /** Console errors, page errors and CSP violations seen in the page. */
  const problems: string[] = [];
  /** The cart writes (POST and PUT) the page sent. */
  const cartWrites: string[] = [];
  const state = {} as { demo: { user_id: string; password: string; api_key: string; access_token: string } };

  const screenshot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
  const statusOf = (form: Locator) => form.getByRole('status').innerText();
  /** The text of what a control's aria-describedby names, and whether it is shown within the control's own field. */
  const descriptionOf = (control: Locator) =>
    control.evaluate((element) => {
      const described = element.ownerDocument.getElementById(element.getAttribute('aria-describedby') ?? '');
      return {
        text: described?.textContent ?? '',
        beside: described !== null && element.parentElement!.contains(described) && !described.hidden,
      };
    });
  const optionsOf = (control: Locator) =>
    control.locator('option').evaluateAll((options) => options.map((o) => o.getAttribute('value')));
  const api = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${state.demo.access_token}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });

  beforeAll(async () => {
    await ensureConsoleBuilt();
    mkdirSync(SCREENSHOTS, { recursive: true });
    ({ server, demo: state.demo } = await startDemoServer<typeof state.demo>(env));
    browser = await launchChromium(STEP_MS);
    page = await watchedPage(browser, STEP_MS, problems, {
      // The browser logs every refused call; the save refused for its off-tick line (422) is on purpose.
      ignore: (message) => message.location().url.endsWith(CART) && /status of 422/.test(message.text()),
    });
    page.on('request', (request) => {
      if (new URL(request.url()).pathname === CART && request.method() !== 'GET') cartWrites.push(request.method());
    });
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await stopDemoServer(server, dir);
  });

  it('logs in and opens a new cart, which offers only OFS bids at a price (RL) or at the cut-off price (RL-MKT)', async () => {
    await page.goto(`${server.url}/console/`);
    await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('name')")).toBe('user_id');
    await page.keyboard.type(state.demo.user_id);
    await page.keyboard.press('Tab');
    await page.keyboard.type(state.demo.password);
    await page.keyboard.press('Tab'); // the TOTP code: the demo user has none
    await page.keyboard.press('Tab');
    await page.keyboard.type(state.demo.api_key);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { level: 2, name: 'OFS issues' }).waitFor();

    await openView(page, 'Carts');
    await page.getByRole('button', { name: 'New cart' }).click();
    const editor = page.getByRole('form', { name: 'New cart' });
    const first = editor.getByRole('group', { name: 'Line 1', exact: true });
    await first.waitFor();
    expect(await optionsOf(first.getByLabel('Product'))).toEqual(['OFS']);
    expect(await optionsOf(first.getByLabel('Order type'))).toEqual(['RL', 'RL-MKT']);
    // An OFS bid has no validity: nothing to choose (GTC, DAY... could never be placed).
    expect(await editor.getByLabel('Validity').count()).toBe(0);
  });

  it('refuses a blank name in the form, with its message beside the field, and sends nothing', async () => {
    const editor = page.getByRole('form', { name: 'New cart' });
    const name = editor.getByLabel('Cart name');
    for (const blank of ['   ', '']) {
      await name.fill(blank);
      await editor.getByRole('button', { name: 'Create cart' }).click();
      await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true');
      expect(await descriptionOf(name)).toEqual({ text: BLANK_NAME, beside: true });
      expect(await statusOf(editor)).toBe(`Not saved: ${BLANK_NAME}`);
      await expect.poll(() => page.evaluate("document.activeElement?.getAttribute('name')")).toBe('ordercartName');
    }
    expect(cartWrites).toEqual([]);
    await screenshot('20-cart-blank-name');
    // The server refuses it too, whatever client sends it.
    const res = await api('POST', CART, {
      ordercartName: '  ',
      orders: JSON.stringify([{ scripDetail: {}, TransactionType: 'BUY' }]),
      version: '1',
      createdBy: state.demo.user_id,
      modifiedBy: state.demo.user_id,
      executedNoTime: 0,
    });
    expect(res.status).toBe(400);
    expect(((await res.json()) as { code: string; errors: { field: string }[] }).errors.map((e) => e.field)).toEqual([
      'ordercartName',
    ]);

    // A name with other characters clears the message.
    await name.fill('Save checks');
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe(null);
    expect((await descriptionOf(name)).beside).toBe(false);
  });

  it('shows a line off the tick, refused at save, beside that line, named as the error names it', async () => {
    const editor = page.getByRole('form', { name: 'New cart' });
    const first = editor.getByRole('group', { name: 'Line 1', exact: true });
    await first.getByLabel('Quantity').fill('5');
    await first.getByLabel('Price (Rs)').fill('102.00');
    await editor.getByRole('button', { name: 'Add a line' }).click();
    const second = editor.getByRole('group', { name: 'Line 2', exact: true });
    await second.getByLabel('Price (Rs)').fill('101.52');
    await editor.getByRole('button', { name: 'Create cart' }).click();

    // The status line points at the line; the fault itself is said once, beside the line's price, in words.
    // The code stays, for support, on a line of its own.
    await expect
      .poll(() => statusOf(editor))
      .toMatch(/^Not saved: see the fault beside Line 2\.\s+For support: e-353 · request \S+$/);
    const price = second.getByLabel('Price (Rs)');
    expect(await descriptionOf(price)).toEqual({
      text: 'Price 101.52 is not a multiple of the tick size 0.05.',
      beside: true,
    });
    expect(await price.getAttribute('aria-invalid')).toBe('true');
    expect(await first.getByLabel('Price (Rs)').getAttribute('aria-invalid')).not.toBe('true');
    const words = await editor.innerText();
    expect(words).not.toContain('orders[');
    expect(words.match(/e-353/g)).toHaveLength(1);
    expect(cartWrites).toEqual(['POST']);
    expect((await (await api('GET', CART)).json()) as { data: unknown[] }).toMatchObject({ data: [] });
    await screenshot('21-cart-off-tick-refused');
  });

  it('saves once mended; executes; the results number lines as the errors do, and word a cut-off line', async () => {
    const editor = page.getByRole('form', { name: 'New cart' });
    const second = editor.getByRole('group', { name: 'Line 2', exact: true });
    await second.getByLabel('Price (Rs)').fill('101.55');
    // At the cut-off price: the line has no price of its own.
    await second.getByLabel('Order type').selectOption('RL-MKT');
    await second.getByLabel('Quantity').fill('12');
    expect(await second.getByLabel('Price (Rs)').isDisabled()).toBe(true);
    expect(await second.getByLabel('Price (Rs)').inputValue()).toBe('0');
    // A third line beyond the retail limit of Rs 2,00,000: saved, refused when executed.
    await editor.getByRole('button', { name: 'Add a line' }).click();
    const third = editor.getByRole('group', { name: 'Line 3', exact: true });
    await third.getByLabel('Quantity').fill('5000');
    await editor.getByRole('button', { name: 'Create cart' }).click();
    const saved = page.getByRole('form', { name: 'Cart Save checks' });
    await expect.poll(() => statusOf(saved)).toBe('Cart created: Save checks');

    await saved.getByRole('button', { name: 'Execute cart' }).click();
    const results = page.getByRole('table', { name: 'The execution, line by line' });
    await results.waitFor();
    await expect
      .poll(() => statusOf(page.getByRole('form', { name: 'Cart Save checks' })))
      .toMatch(/^Order cart partly executed/);
    const cells = (index: number) => results.locator(`tr[data-line="${index}"] td`).allInnerTexts();

    expect(await results.locator('tr[data-line="0"]').getAttribute('data-result')).toBe('success');
    expect((await cells(0)).slice(0, 2)).toEqual(['Line 1', 'SBIN OF OFS 5 at 102.00']);
    expect(await results.locator('tr[data-line="1"]').getAttribute('data-result')).toBe('success');
    expect((await cells(1)).slice(0, 2)).toEqual(['Line 2', 'SBIN OF OFS 12 at the cut-off price']);
    expect(await results.locator('tr[data-line="2"]').getAttribute('data-result')).toBe('error');
    const [line, instrument, outcome] = await cells(2);
    expect([line, instrument]).toEqual(['Line 3', 'SBIN OF OFS 5000 at 101.00']);
    // The row's faults are in words: no JSON path, no other line named, no code outside the support line.
    expect(outcome).toMatch(/^Not placed: /);
    expect(outcome).not.toContain('orders[');
    expect(outcome).not.toMatch(/Line [12]\b/);
    await screenshot('22-cart-results-numbered');
  });

  it('shows a stored line this OMS cannot place as what it is, without offering its product', async () => {
    const line = { ...DELIVERY_LINE, validity: 'GTC' };
    const body = {
      ordercartName: 'From the API',
      orders: JSON.stringify([line]),
      version: '1',
      createdBy: state.demo.user_id,
      modifiedBy: state.demo.user_id,
      executedNoTime: 0,
    };
    expect((await api('POST', CART, body)).status).toBe(200);
    await openView(page, 'OFS issues');
    await openView(page, 'Carts');
    await page.getByRole('button', { name: 'Open cart From the API' }).click();
    const first = page
      .getByRole('form', { name: 'Cart From the API' })
      .getByRole('group', { name: 'Line 1', exact: true });
    await first.waitFor();
    expect(await first.getByLabel('Product').inputValue()).toBe('DELIVERY');
    expect(await first.getByLabel('Product').locator('option:checked').innerText()).toBe(
      'DELIVERY (this OMS cannot place it)',
    );
    expect(await first.innerText()).toContain('this OMS places OFS bids (RL or RL-MKT) only');
  });

  it('makes a new cart clicked before the issues are read with its first line all the same (it waits for them)', async () => {
    // The issues' answer held back 1.5 s: the click comes first, as a quick hand's (or a loaded machine's) does.
    const issues = '**/transactional/v1/ofs/issues*';
    await page.route(issues, async (route) => {
      await new Promise((resolve) => setTimeout(resolve, 1500));
      await route.continue();
    });
    try {
      await openView(page, 'OFS issues');
      await openView(page, 'Carts');
      await page.getByRole('button', { name: 'New cart' }).click();
      const first = page.getByRole('form', { name: 'New cart' }).getByRole('group', { name: 'Line 1', exact: true });
      await first.waitFor();
      expect(await first.getByLabel('Symbol').inputValue()).toBe('SBIN');
    } finally {
      await page.unroute(issues);
    }
  });

  it('logged no error and broke no Content-Security-Policy rule', () => {
    expect(problems).toEqual([]);
  });
});
