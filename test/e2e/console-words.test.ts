/**
 * The console's messages in a trader's words (issue 51, "Words" and "one bid ticket"), on a desktop
 * (1366 x 800) and a phone (390 x 844), the browser in New York time. Each fault is said once, beside the
 * field it names, without the API's error code, its JSON paths or a UTC instant; the code stays in a details
 * line for support. An offer bid refused for its quantity or its price says so beside that field; a cart's
 * faulty line is named "Line N", never orders[i]; the one-listing issues' bid form follows the order as the
 * offers' ticket does, so that a bid the OMS rejects for funds turns into a rejection (it stayed a green
 * "Bid placed"), and a bid the OMS rejects because the window closed says when in India time, no UTC.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type Locator, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OmsWorker } from '../../src/oms/worker.js';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { ROOT } from '../cli/run-ordergate.js';
import { chromiumRuns, launchChromium } from '../support/chromium.js';
import { logIn, openView, textWithout } from '../support/console-page.js';
import { offerImport } from '../support/offers.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';

const STEP_MS = 20_000;
const MINUTE = 60 * 1000;
const HOUR = 60 * MINUTE;
const OFFER_T = Date.parse('2026-12-01T03:45:00Z'); // 09:15 IST, Tuesday 1 December 2026
const OFFER_ID = 'WORDS-OFS-1';
const SCREENSHOTS = join(ROOT, 'test-artifacts', 'console-words');
const DEVICES = [
  { name: 'desktop', viewport: { width: 1366, height: 800 } },
  { name: 'phone', viewport: { width: 390, height: 844 } },
] as const;
/** API words that must not reach a trader: an error code, a field path, a cart line's path, a UTC instant. */
const CODE = /\be-\d{3}\b/;
const ISO_INSTANT = /\d{4}-\d\d-\d\dT\d\d:\d\d|\d\d:\d\d:\d\d(\.\d+)?Z/;

const runs = chromiumRuns('test/e2e/console-words.test.ts');

for (const device of DEVICES) {
  describe.runIf(runs)(`the console's messages in a trader's words, on a ${device.name}`, () => {
    let server: TestServer;
    let oms: OmsWorker;
    let browser: Browser;
    let page: Page;
    let nii: TestUser;
    let ravi: TestUser;

    /** The text of `locator` without its details line for support (what a trader reads). */
    const words = (locator: Locator) => textWithout(locator, '.support-line');
    /** The details line for support in `locator`: its text, or null when there is none. */
    const supportOf = async (locator: Locator) => {
      const line = locator.locator('.support-line');
      return (await line.count()) === 1 ? line.innerText() : null;
    };
    const offerForm = () => page.getByRole('form', { name: `Bid in WORDS (${OFFER_ID})` });
    const issueForm = () => page.getByRole('form', { name: 'Bid for SBIN OF (NSE_EQ)' });
    const fieldOf = (form: Locator, label: string) => form.locator('.field', { has: page.getByLabel(label) });
    async function openPage(user: TestUser, view: string) {
      await page?.context().close();
      const context = await browser.newContext({ viewport: device.viewport, timezoneId: 'America/New_York' });
      page = await context.newPage();
      page.setDefaultTimeout(STEP_MS);
      await logIn(page, server.url, { user_id: user.userId, password: user.password, api_key: user.apiKey });
      await openView(page, view);
    }
    async function bid(form: Locator, quantity: string, price: string) {
      await form.getByLabel('Quantity').fill(quantity);
      await form.getByLabel('Price (Rs)').fill(price);
      await form.getByRole('button', { name: 'Review bid' }).click();
      await form.getByRole('button', { name: 'Confirm bid' }).click();
    }

    beforeAll(async () => {
      await ensureConsoleBuilt();
      mkdirSync(SCREENSHOTS, { recursive: true });
      // 14:15 IST on T: the offer takes non-retail bids until 15:30; the issue's windows are open for 6 h.
      server = await startTestServer({ now: OFFER_T + 5 * HOUR });
      await server.admin.importOfs([
        offerImport(
          {
            offer_id: OFFER_ID,
            symbol: 'WORDS',
            listings: [
              { exchange: 'NSE_EQ', scrip_token: 700051, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' } },
            ],
            base_quantity: 1000,
            green_shoe_quantity: 0,
            employee_quantity: 0,
          },
          OFFER_T,
        ),
      ]);
      await server.registerIssue(); // SBIN OF on NSE_EQ 500112, floor 100.00, tick 0.05
      nii = await server.createUser('nii1', { category: 'NII' });
      ravi = await server.createUser('ravi', { category: 'RETAIL' });
      await server.deposit('nii1', '10000');
      await server.deposit('ravi', '1000');
      oms = server.omsWorker(`console-words-${device.name}`);
      browser = await launchChromium(STEP_MS);
    }, 60_000);

    afterAll(async () => {
      await browser?.close();
      await server?.close();
    });

    it('says an offer bid refused for its quantity once, beside the quantity, with the code only in the details line', async () => {
      await openPage(nii, 'OFS offers');
      await offerForm().waitFor();
      await bid(offerForm(), '5000', '100');
      const outcome = offerForm().getByRole('status');
      await expect.poll(() => outcome.getAttribute('class')).toContain('refused');
      const quantity = fieldOf(offerForm(), 'Quantity');
      await expect.poll(() => quantity.innerText()).toContain('5000 is more than the 1000 shares');
      const said = await words(offerForm());
      expect(said.split('is more than the 1000 shares').length - 1).toBe(1);
      expect(said).not.toMatch(CODE);
      expect(said).not.toContain('quantity:');
      expect(await offerForm().getByLabel('Quantity').getAttribute('aria-invalid')).toBe('true');
      expect(await supportOf(outcome)).toMatch(/^For support: e-382 \u00b7 request \S+$/);
    });

    it('says an offer bid refused for its price once, beside the price, without "price:", "(-)" or a code', async () => {
      await bid(offerForm(), '10', '99');
      const price = fieldOf(offerForm(), 'Price (Rs)');
      await expect.poll(() => price.innerText()).toContain('The price is below the floor price (100.00).');
      const said = await words(offerForm());
      expect(said.split('below the floor price').length - 1).toBe(1);
      expect(said).not.toMatch(CODE);
      expect(said).not.toContain('price:');
      expect(said).not.toContain('(-)');
      expect(said).not.toContain('(\u2212)');
      // The quantity's fault of the bid before is gone: each fault once, for the bid it is about.
      expect(await offerForm().getByLabel('Quantity').getAttribute('aria-invalid')).toBe(null);
      expect(await supportOf(offerForm().getByRole('status'))).toMatch(/^For support: e-356 \u00b7 request \S+$/);
      await page.screenshot({ path: join(SCREENSHOTS, `offer-refused-${device.name}.png`), fullPage: true });
    });

    it("follows an issue bid until the OMS decides: a bid rejected for funds is a rejection, not a green 'Bid placed'", async () => {
      await openPage(ravi, 'OFS issues');
      await issueForm().waitFor();
      await bid(issueForm(), '20', '101');
      const outcome = issueForm().getByRole('status');
      await expect.poll(() => outcome.innerText()).toMatch(/^Bid placed: order \S+\. Waiting for the OMS/);
      expect(await outcome.getAttribute('class')).toContain('pending');
      await oms.runOnce();
      await expect
        .poll(() => outcome.innerText(), { timeout: STEP_MS })
        .toMatch(/Bid rejected: order \S+\. Not enough funds: the bid needs Rs 2,020\.00; Rs 1,000\.00 available\.$/);
      expect(await outcome.getAttribute('class')).toContain('refused');
      expect(await outcome.locator('.outcome-mark').innerText()).toBe('\u2715');
      await page.screenshot({ path: join(SCREENSHOTS, `issue-rejected-${device.name}.png`), fullPage: true });
    });

    it('names a faulty cart line "Line N", beside its price, never orders[i], and the execution\'s results alike', async () => {
      await openView(page, 'Carts');
      await page.getByRole('button', { name: 'New cart' }).click();
      const editor = page.getByRole('form', { name: 'New cart' });
      await editor.getByLabel('Cart name').fill(`Words ${device.name}`);
      await editor.getByRole('button', { name: 'Add a line' }).click();
      const second = editor.getByRole('group', { name: 'Line 2' });
      await second.getByLabel('Quantity').fill('5');
      await second.getByLabel('Price (Rs)').fill('101.52');
      await editor.getByRole('button', { name: 'Create cart' }).click();
      const status = editor.getByRole('status');
      await expect.poll(() => status.innerText()).toMatch(/^Not saved: /);
      const said = await words(editor);
      expect(said).toContain('Line 2');
      expect(said).not.toContain('orders[');
      expect(said).not.toMatch(CODE);
      expect(said.split('is not a multiple of the tick size 0.05').length - 1).toBe(1);
      expect(await fieldOf(second, 'Price (Rs)').innerText()).toContain(
        'Price 101.52 is not a multiple of the tick size 0.05.',
      );
      expect(await supportOf(status)).toMatch(/^For support: e-353 \u00b7 request \S+$/);

      // Mended, and a line over the retail limit: saved, refused when executed, its result named in words.
      await second.getByLabel('Price (Rs)').fill('101.55');
      await second.getByLabel('Quantity').fill('5000');
      await editor.getByRole('button', { name: 'Create cart' }).click();
      const saved = page.getByRole('form', { name: `Cart Words ${device.name}` });
      await expect.poll(() => saved.getByRole('status').innerText()).toBe(`Cart created: Words ${device.name}`);
      await saved.getByRole('button', { name: 'Execute cart' }).click();
      const results = page.getByRole('table', { name: 'The execution, line by line' });
      await results.waitFor();
      const failed = results.locator('tr[data-line="1"]');
      expect(await failed.getAttribute('data-result')).toBe('error');
      const row = await words(failed);
      expect(row).toContain('Line 2');
      expect(row).toContain('Not placed: ');
      expect(row).not.toContain('orders[');
      expect(row).not.toMatch(CODE);
      expect(await supportOf(failed)).toBe('For support: e-360');
      await expect
        .poll(() => words(page.getByRole('form', { name: `Cart Words ${device.name}` }).getByRole('status')))
        .toMatch(/^Order cart partly executed/);
      const status2 = await words(page.getByRole('form', { name: `Cart Words ${device.name}` }).getByRole('status'));
      expect(status2).not.toContain('see each line in data');
      await page.screenshot({ path: join(SCREENSHOTS, `cart-${device.name}.png`), fullPage: true });
    });

    it('says when a closed window rejected an issue bid in India time, with no UTC instant', async () => {
      await openView(page, 'OFS issues');
      await issueForm().waitFor();
      await bid(issueForm(), '1', '101');
      const outcome = issueForm().getByRole('status');
      await expect.poll(() => outcome.innerText()).toMatch(/Bid placed: order \S+\./);
      // The retail window closes (now + 6 h) before the OMS checks the bid: it rejects it, saying when.
      server.clock.now += 7 * HOUR;
      await oms.runOnce();
      // The server's reason, which the order's history and the outcome show, is in India time alone.
      const orders = await server.call('GET', '/transactional/v1/orders?limit=100', { token: ravi.token });
      // (the cart's placed line waited for the OMS too, and is rejected alike)
      const reasons = (orders.body.data as { status: string; error_reason: string }[])
        .filter((o) => o.status === 'OMSREJECT' && o.error_reason.includes('window'))
        .map((o) => o.error_reason);
      expect(reasons.length).toBe(2);
      for (const reason of reasons) {
        expect(reason).toMatch(/closed at 2026-12-01 20:15 IST;/);
        expect(reason).not.toMatch(ISO_INSTANT);
      }
      await expect.poll(() => outcome.innerText(), { timeout: STEP_MS }).toMatch(/Bid rejected: order \S+\. /);
      const said = await words(outcome);
      expect(said).toMatch(/closed at 2026-12-01 20:15 IST/);
      expect(said).not.toMatch(ISO_INSTANT);
      expect(said).not.toContain('T04:');
    });
  });
}
