/**
 * The console's bid form and issue cards in headless Chromium (issue 25 rows 1 and 2): the order value and
 * what the retail limit still allows, a confirmation before the bid goes, success and refusal told apart
 * (mark and style) and read to screen readers, a refusal said once in a trader's words beside its field,
 * the form cleared after a placed bid (a second click places nothing), and a card whose window is not open
 * saying whether it opens later or has closed, and when.
 */
import { type Browser, type Page } from 'playwright-core';
import { chromiumRuns, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { logIn } from '../support/console-page.js';

const STEP_MS = 20_000;
const HOUR = 60 * 60 * 1000;
const runs = chromiumRuns('test/e2e/console-bid.test.ts');

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

  it('asks for a confirmation, places the bid as a success (mark, style), and clears the form so that a second click places nothing', async () => {
    await form().getByRole('button', { name: 'Review bid' }).click();
    await expect
      .poll(() => form().locator('.bid-confirm').innerText())
      .toContain('Buy 10 SBIN OF at 101.50 on NSE_EQ, Rs 1,015.00?');
    expect(await ordersOfRavi()).toBe(0); // nothing sent before the confirmation
    await form().getByRole('button', { name: 'Confirm bid' }).click();
    const outcome = form().getByRole('status');
    await expect.poll(() => outcome.innerText()).toMatch(/Bid placed: order \S+\./);
    expect(await outcome.getAttribute('class')).toContain('ok');
    expect(await outcome.locator('.outcome-mark').innerText()).toBe('\u2713');
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
