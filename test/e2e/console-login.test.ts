/**
 * The console's login in headless Chromium (issue 25 row 6): a refused login is said once, in a trader's
 * words, beside the field it is about, which gets the focus (a wrong API key: the key, not the password),
 * and a corrected login goes through.
 */
import { type Browser, type Page } from 'playwright-core';
import { chromiumRuns, launchChromium } from '../support/chromium.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureConsoleBuilt } from '../cli/build-dist.js';
import { startTestServer, TEST_PASSWORD, type TestServer, type TestUser } from '../support/server.js';

const STEP_MS = 20_000;
const runs = chromiumRuns('test/e2e/console-login.test.ts');

describe.runIf(runs)("the console's login", () => {
  let server: TestServer;
  let alice: TestUser;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    await ensureConsoleBuilt();
    server = await startTestServer();
    alice = await server.createUser('alice');
    browser = await launchChromium(STEP_MS);
    page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    page.setDefaultTimeout(STEP_MS);
    await page.goto(`${server.url}/console/`);
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await server?.close();
  });

  async function logIn(password: string, apiKey: string): Promise<void> {
    await page.getByLabel('User id').fill(alice.userId);
    await page.getByLabel('Password', { exact: true }).fill(password);
    await page.getByLabel('API key').fill(apiKey);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  const focusedName = () => page.evaluate("document.activeElement?.getAttribute('name')");
  const occurrences = async (text: string) => (await page.locator('body').innerText()).split(text).length - 1;

  it('says a wrong API key once, beside the key, and puts the focus there', async () => {
    await logIn(TEST_PASSWORD, 'not-a-key-of-alice');
    const sentence = 'This API key is not an active key of this user';
    await expect.poll(() => occurrences(sentence)).toBe(1);
    expect(await focusedName()).toBe('api_key');
    expect(await page.getByLabel('API key').getAttribute('aria-invalid')).toBe('true');
    // Read with the field: its description names the error.
    const described = await page.getByLabel('API key').getAttribute('aria-describedby');
    expect(await page.locator(`[id="${described!.split(' ').at(-1)}"]`).innerText()).toContain(sentence);
    // The API's own words are not shown to the trader.
    expect(await occurrences('api_key:')).toBe(0);
  });

  it('says a wrong password once, beside the password, and clears the key error', async () => {
    await logIn('wrong-password-1', alice.apiKey);
    await expect.poll(() => occurrences('Wrong user id or password.')).toBe(1);
    expect(await focusedName()).toBe('password');
    expect(await page.getByLabel('API key').getAttribute('aria-invalid')).toBeNull();
    expect(await occurrences('This API key is not an active key')).toBe(0);
  });

  it('logs in once both are right', async () => {
    await logIn(TEST_PASSWORD, alice.apiKey);
    await page.getByRole('heading', { level: 2, name: 'OFS issues' }).waitFor();
  });
});
