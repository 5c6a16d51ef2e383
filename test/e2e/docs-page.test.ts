/**
 * The API reference at /docs in headless Chromium (issue 25 row 8): titled "ordergate API" with its own
 * wordmark, the endpoints first and the error catalog collapsed after the introduction, and the README's
 * real example bodies (the demo issue's bid, not generated placeholders); readable on a 390 px phone, its
 * viewport tag keeping the page at the phone's width (issue 51).
 */
import { type Browser, type Page } from 'playwright-core';
import { chromiumRuns, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../support/server.js';

const STEP_MS = 20_000;
const runs = chromiumRuns('test/e2e/docs-page.test.ts');

describe.runIf(runs)('the API reference at /docs', () => {
  let server: TestServer;
  let browser: Browser;
  let page: Page;
  const problems: string[] = [];

  beforeAll(async () => {
    server = await startTestServer();
    browser = await launchChromium(STEP_MS);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(STEP_MS);
    page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
    page.on('console', (message) => {
      if (/content security policy/i.test(message.text())) problems.push(message.text());
    });
    await page.goto(`${server.url}/docs/`);
    await page.locator('.opblock').first().waitFor();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  it('is titled "ordergate API", with its own wordmark', async () => {
    expect(await page.title()).toBe('ordergate API');
    const logo = await page.locator('.topbar-wrapper img').getAttribute('src');
    expect(logo).toMatch(/^data:image\/svg\+xml;base64,/);
    expect(Buffer.from(logo!.split(',')[1]!, 'base64').toString('utf8')).toContain('ordergate');
  });

  it('shows the endpoints within the first screen, the error catalog collapsed above them', async () => {
    const catalog = page.locator('.info details');
    await expect.poll(() => catalog.count()).toBe(1);
    expect(await catalog.evaluate((element) => (element as unknown as { open: boolean }).open)).toBe(false);
    const firstOperation = await page.locator('.opblock').first().boundingBox();
    expect(firstOperation!.y).toBeLessThan(900);
    // Opened, it lists every code.
    await catalog.locator('summary').click();
    await expect.poll(() => catalog.locator('td', { hasText: 'e-603' }).count()).toBeGreaterThan(0);
  });

  it("shows the README's bid as the place-order example, not generated placeholders", async () => {
    const place = page
      .locator('.opblock-post', { has: page.locator('[data-path="/transactional/v1/orders/regular"]') })
      .first();
    await place.locator('.opblock-summary').click();
    const example = place.locator('.body-param__example, .microlight').first();
    await example.waitFor();
    const text = await example.innerText();
    expect(text).toContain('"symbol": "SBIN"');
    expect(text).toContain('"price": 101.5');
    expect(text).not.toContain('"string"');
    expect(problems).toEqual([]);
  });

  it('is laid out at the width of a 390 px phone, not shrunk from a desktop page (its viewport tag)', async () => {
    // A phone (isMobile honours the viewport tag): without the tag Chromium lays the page out 980 px wide.
    const phone = await browser.newContext({
      viewport: { width: 390, height: 844 },
      isMobile: true,
      hasTouch: true,
      timezoneId: 'America/New_York',
    });
    try {
      const onPhone = await phone.newPage();
      onPhone.setDefaultTimeout(STEP_MS);
      await onPhone.goto(`${server.url}/docs/`);
      await onPhone.locator('.opblock').first().waitFor();
      expect(await onPhone.evaluate('window.innerWidth')).toBe(390);
      expect(await onPhone.evaluate('document.documentElement.clientWidth')).toBe(390);
      expect(await onPhone.evaluate('document.querySelector(\'meta[name="viewport"]\')?.getAttribute("content")')).toBe(
        'width=device-width, initial-scale=1',
      );
      expect(await onPhone.evaluate('window.visualViewport.scale')).toBe(1);
    } finally {
      await phone.close();
    }
  });
});
