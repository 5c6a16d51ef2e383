/**
 * Debian's Chromium for the browser tests, driven by playwright-core (nothing is downloaded at run time).
 * Under CI it must be there (`.ci/run` installs it); elsewhere, without it, a browser test is skipped and
 * says so.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

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
  process.stderr.write(`\n${CHROMIUM} is missing: ${file} is SKIPPED; install Debian's chromium package to run it.\n\n`);
  return false;
}

/** Starts Chromium; each of its steps waits at most `timeoutMs`. */
export async function launchChromium(timeoutMs: number): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);
  return chromium.launch({ executablePath: CHROMIUM, args: ARGS, timeout: timeoutMs });
}
