/** How numbers, prices, times and durations read on the page. */

const quantityFormat = new Intl.NumberFormat('en-IN');
const compactFormat = new Intl.NumberFormat('en-IN', { notation: 'compact', maximumFractionDigits: 1 });

export const formatQuantity = (quantity: number): string => quantityFormat.format(quantity);
export const formatCompact = (quantity: number): string => compactFormat.format(quantity);

/**
 * A price per share: two decimals, not grouped ("101.50"), from the API's "101.50" strings or plain numbers.
 * Amounts of money use formatRupees.
 */
export function formatPrice(price: string | number | null | undefined): string {
  if (price === null || price === undefined || price === '') return '-';
  const value = Number(price);
  return Number.isFinite(value) ? value.toFixed(2) : String(price);
}

/**
 * An instant from the API: ISO 8601, or ODIN's India-time "2026-04-17 12:46:34" (UTC+05:30, no daylight
 * saving).
 */
export function parseInstant(text: string): number {
  const india = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/.exec(text);
  return Date.parse(india ? `${india[1]}T${india[2]}+05:30` : text);
}

const instantFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** An instant as the reader's local date and time (one formatter for all: a long order book has thousands). */
export function formatInstant(text: string): string {
  const at = parseInstant(text);
  return Number.isNaN(at) ? text : instantFormat.format(at);
}

/** "2 d 3 h", "1 h 05 min", "4 min 09 s", "12 s". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  const two = (n: number) => String(n).padStart(2, '0');
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${two(minutes)} min`;
  if (minutes > 0) return `${minutes} min ${two(rest)} s`;
  return `${rest} s`;
}

export const issueKey = (issue: { exchange: string; scrip_token: number }): string => `${issue.exchange}:${issue.scrip_token}`;

export const issueName = (issue: { exchange: string; symbol: string; series: string }): string => `${issue.symbol} ${issue.series} (${issue.exchange})`;

const groupedFormat = new Intl.NumberFormat('en-IN');
const rupeeFormat = new Intl.NumberFormat('en-IN', { minimumFractionDigits: 2, maximumFractionDigits: 2 });

/**
 * An amount of money in rupees, grouped the Indian way with two decimals: "Rs 10,00,000.00", "Rs -510.00".
 * The API's "1000000.00" strings are grouped digit for digit (no rounding through a float); anything else
 * goes through a number.
 */
export function formatRupees(amount: string | number | null | undefined): string {
  if (amount === null || amount === undefined || amount === '') return '-';
  const exact = typeof amount === 'string' ? /^(-?)(\d+)(?:\.(\d{1,2}))?$/.exec(amount.trim()) : null;
  if (exact !== null) return `Rs ${exact[1]}${groupedFormat.format(BigInt(exact[2]!))}.${(exact[3] ?? '').padEnd(2, '0')}`;
  const value = Number(amount);
  return Number.isFinite(value) ? `Rs ${rupeeFormat.format(value)}` : String(amount);
}
