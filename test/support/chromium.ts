/**
 * Debian's Chromium for the browser tests, driven by playwright-core (nothing is downloaded at run time).
 * Under CI it must be there (`.ci/run` installs it); elsewhere, without it, a browser test is skipped and
 * says so.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser, type ConsoleMessage, type Page } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';

/** Headless, and none of Chromium's background calls, which this machine's closed network refuses. */
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Whether the browser test `file` runs; when it does not, why is written to stderr. */
export function chromiumRuns(file: string): boolean {
  if (existsSync(CHROMIUM) || process.env.CI === 'true') return true;
  process.stderr.write(
    `\n${CHROMIUM} is missing: ${file} is SKIPPED; install Debian's chromium package to run it.\n\n`,
  );
  return false;
}

/** Starts Chromium; each of its steps waits at most `timeoutMs`. */
export async function launchChromium(timeoutMs: number): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: timeoutMs });
}

/** An init script reporting each Content-Security-Policy violation as a console error (Playwright runs it outside the page's CSP). */
export const CSP_REPORTER =
  "document.addEventListener('securitypolicyviolation', (event) => console.error('CSP violation: ' + event.violatedDirective + ' ' + event.blockedURI))";

export interface ProblemOptions {
  /** Named in each problem (a second tab). */
  label?: string;
  /** A console message the test causes on purpose (a refused call it asks for). */
  ignore?: (message: ConsoleMessage) => boolean;
}

/** Collects in `problems` what the page reports as wrong: console errors, CSP violations and page errors. */
export function watchProblems(page: Page, problems: string[], { label, ignore }: ProblemOptions = {}): void {
  const prefix = label === undefined ? '' : `${label}, `;
  page.on('console', (message) => {
    if (ignore?.(message)) return;
    if (message.type() === 'error' || /content security policy/i.test(message.text()))
      problems.push(`${prefix}console ${message.type()}: ${message.text()}`);
  });
  page.on('pageerror', (error) => problems.push(`${prefix}page error: ${error.message}`));
}

/** A desktop page (1280 x 900) whose steps wait at most `timeoutMs`, its problems collected in `problems`. */
export async function watchedPage(
  browser: Browser,
  timeoutMs: number,
  problems: string[],
  options: ProblemOptions = {},
): Promise<Page> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(timeoutMs);
  watchProblems(page, problems, options);
  await page.addInitScript(CSP_REPORTER);
  return page;
}
