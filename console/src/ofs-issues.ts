/**
 * The registered OFS issues and the server's clock: the windows' time left is counted against the server's
 * time (its offset from this machine's clock taken at each load of the issues or the offers), not the
 * reader's clock.
 */
import { readData } from './api.js';
import { parseInstant } from './format.js';
import type { OfsIssue, WindowState } from './types.js';

let clockOffsetMs = 0;

export const serverNow = (): number => Date.now() + clockOffsetMs;

/** Takes the server's clock from an answer's `server_time`, for a call made at `started` (this machine's clock). */
export function syncServerClock(serverTimeText: string, started: number): void {
  const serverTime = parseInstant(serverTimeText);
  // The answer was written somewhere between the call and its answer: take the middle.
  if (!Number.isNaN(serverTime)) clockOffsetMs = serverTime - (started + Date.now()) / 2;
}

export async function loadIssues(): Promise<OfsIssue[]> {
  const started = Date.now();
  const answer = await readData((client) => client.ofsIssues());
  syncServerClock(answer.server_time, started);
  return answer.issues;
}

export interface BiddingWindow {
  label: 'Retail' | 'Non-retail';
  opensAt: number;
  closesAt: number;
}

export function windowsOf(issue: OfsIssue): BiddingWindow[] {
  return [
    { label: 'Retail', opensAt: parseInstant(issue.retail_opens_at), closesAt: parseInstant(issue.retail_closes_at) },
    {
      label: 'Non-retail',
      opensAt: parseInstant(issue.non_retail_opens_at),
      closesAt: parseInstant(issue.non_retail_closes_at),
    },
  ];
}

/** The window of the caller's category (retail when unknown). */
export function windowFor(issue: OfsIssue, category: string | null): BiddingWindow {
  const [retail, nonRetail] = windowsOf(issue) as [BiddingWindow, BiddingWindow];
  return category === 'NON_RETAIL' ? nonRetail : retail;
}

export function stateAt(window: BiddingWindow, now: number): WindowState {
  if (now < window.opensAt) return 'UPCOMING';
  return now < window.closesAt ? 'OPEN' : 'CLOSED';
}
