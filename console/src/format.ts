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

/** India time: UTC+05:30 all year (no daylight saving), the exchanges' and the API's clock. */
const IST_OFFSET_MS = (5 * 60 + 30) * 60_000;
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const two = (n: number) => String(n).padStart(2, '0');

/**
 * The India-time fields of an epoch instant. Worked out by hand, not by Intl's time zones: the same in every
 * browser and every reader's zone (a trader abroad reads the exchanges' time too).
 */
function indiaTime(at: number): { date: string; clock: string } {
  const india = new Date(at + IST_OFFSET_MS);
  return {
    date: `${india.getUTCDate()} ${MONTHS[india.getUTCMonth()]} ${india.getUTCFullYear()}`,
    clock: `${two(india.getUTCHours())}:${two(india.getUTCMinutes())}:${two(india.getUTCSeconds())}`,
  };
}

const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];

/**
 * An instant's India time of day to the minute, its seconds shown only when it has any: "17:00 IST",
 * "08:57:39 IST". For the times an offer's notice sets (deadlines, pay-outs), which fall on the minute: a
 * trader reads "13:30", not "13:30:00". Text that is no instant is shown as it is.
 */
export function formatTimeOfDay(text: string): string {
  const at = parseInstant(text);
  if (Number.isNaN(at)) return text;
  const { clock } = indiaTime(at);
  return `${clock.endsWith(':00') ? clock.slice(0, 5) : clock} IST`;
}

/**
 * An instant's India weekday, date and time, short: "Wed 2 Dec 13:30 IST" (the year left out: an offer's
 * days and pay-outs are days away, and the weekday says which). Text that is no instant is shown as it is.
 */
export function formatDayTime(text: string): string {
  const at = parseInstant(text);
  if (Number.isNaN(at)) return text;
  const india = new Date(at + IST_OFFSET_MS);
  return `${WEEKDAYS[india.getUTCDay()]} ${india.getUTCDate()} ${MONTHS[india.getUTCMonth()]} ${formatTimeOfDay(text)}`;
}

/** Whether two instants fall on the same day in India. */
export function sameIndiaDay(a: string, b: string): boolean {
  return indiaTime(parseInstant(a)).date === indiaTime(parseInstant(b)).date;
}

/**
 * What `quantity` shares cost at `price` rupees, as the API writes an amount ("6120.00"), worked out in
 * paise (BigInt: a 15-digit quantity times a price passes 2^53), for formatRupees.
 */
export function amountOf(quantity: number, price: number): string {
  const paise = BigInt(Math.round(price * 100)) * BigInt(Math.trunc(quantity));
  const sign = paise < 0n ? '-' : '';
  const digits = (paise < 0n ? -paise : paise).toString().padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

/** An epoch instant's time of day, to the second, in India time: "12:46:34 IST". */
export function formatClock(at: number): string {
  return `${indiaTime(at).clock} IST`;
}

/**
 * An instant from the API as its date and time to the second, in India time whatever the reader's zone:
 * "17 Apr 2026, 12:46:34 IST". Text that is no instant is shown as it is.
 */
export function formatInstant(text: string): string {
  const parts = instantParts(text);
  return parts === null ? text : `${parts.date}, ${parts.clock}`;
}

/**
 * formatInstant's two parts, "17 Apr 2026" and "12:46:34 IST", and whether the date is today's in India
 * (`now` an epoch instant); null for text that is no instant.
 */
export function instantParts(text: string, now = Date.now()): { date: string; clock: string; today: boolean } | null {
  const at = parseInstant(text);
  if (Number.isNaN(at)) return null;
  const { date, clock } = indiaTime(at);
  return { date, clock: `${clock} IST`, today: date === indiaTime(now).date };
}

/**
 * An order id as a table shows it: a UUID's last 8 characters ("…1a2b3c4d": its random part, telling
 * apart the orders of one book), a short id as it is. The full id goes beside it (a title, the history).
 */
export function formatOrderId(orderId: string): string {
  return orderId.length > 12 ? `\u2026${orderId.slice(-8)}` : orderId;
}

/** "2 d 3 h", "1 h 05 min", "4 min 09 s", "12 s". */
export function formatDuration(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3600);
  const minutes = Math.floor((seconds % 3600) / 60);
  const rest = seconds % 60;
  if (days > 0) return `${days} d ${hours} h`;
  if (hours > 0) return `${hours} h ${two(minutes)} min`;
  if (minutes > 0) return `${minutes} min ${two(rest)} s`;
  return `${rest} s`;
}

export const issueKey = (issue: { exchange: string; scrip_token: number }): string =>
  `${issue.exchange}:${issue.scrip_token}`;

export const issueName = (issue: { exchange: string; symbol: string; series: string }): string =>
  `${issue.symbol} ${issue.series} (${issue.exchange})`;

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
  if (exact !== null)
    return `Rs ${exact[1]}${groupedFormat.format(BigInt(exact[2]!))}.${(exact[3] ?? '').padEnd(2, '0')}`;
  const value = Number(amount);
  return Number.isFinite(value) ? `Rs ${rupeeFormat.format(value)}` : String(amount);
}
