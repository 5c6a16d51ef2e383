/**
 * ODIN's vocabulary, where it differs from ordergate's own: the order-status filter codes of the order
 * book, its time formats, and the codes of the live order socket's messages (odin-compat.md). Clients map
 * these through fixed tables and fail on anything else, so every value here is exact.
 */
import { IST_OFFSET_MS } from '../ofs/rules.js';
import { LIVE_STATUSES, OrderStatus } from './status.js';

/** Finished orders: nothing more happens to them. */
export const FINISHED_STATUSES: readonly OrderStatus[] = [
  OrderStatus.EXECUTED,
  OrderStatus.CANCELLED,
  OrderStatus.OMSREJECT,
  OrderStatus.ORDERERROR,
];

/** The order book's `orderStatus` codes: `1` live, `2` completed, `-1` all. A status name also works. */
export const ORDER_STATUS_CODES = { '1': LIVE_STATUSES, '2': FINISHED_STATUSES, '-1': null } as const;
export type OrderStatusCode = keyof typeof ORDER_STATUS_CODES;

/** The statuses an `orderStatus` value selects (undefined: every status). */
export function statusesOf(orderStatus: string | undefined): readonly OrderStatus[] | undefined {
  if (orderStatus === undefined) return undefined;
  if (Object.hasOwn(ORDER_STATUS_CODES, orderStatus))
    return ORDER_STATUS_CODES[orderStatus as OrderStatusCode] ?? undefined;
  return [orderStatus as OrderStatus];
}

/** India time parts of an instant (India keeps no daylight saving time). */
function istParts(epochMs: number) {
  const d = new Date(epochMs + IST_OFFSET_MS);
  const two = (n: number) => String(n).padStart(2, '0');
  return {
    year: String(d.getUTCFullYear()),
    month: d.getUTCMonth(),
    day: two(d.getUTCDate()),
    hh: two(d.getUTCHours()),
    mm: two(d.getUTCMinutes()),
    ss: two(d.getUTCSeconds()),
    monthNumber: two(d.getUTCMonth() + 1),
  };
}

/** The REST answers' time: "2026-04-17 12:46:34", India time. */
export function odinTimestamp(epochMs: number): string {
  const t = istParts(epochMs);
  return `${t.year}-${t.monthNumber}-${t.day} ${t.hh}:${t.mm}:${t.ss}`;
}

/** ODIN's month names, in the socket's times. */
export const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'] as const;

/** The socket messages' time: "23-Nov-2026 11.34.54", India time. */
export function socketTimestamp(epochMs: number): string {
  const t = istParts(epochMs);
  return `${t.day}-${MONTHS[t.month]}-${t.year} ${t.hh}.${t.mm}.${t.ss}`;
}

/** `Exchange` of a socket message. */
export const SOCKET_EXCHANGE_CODES: Readonly<Record<string, number>> = { NSE_EQ: 1, BSE_EQ: 3 };

/** `OrderStatus` of a socket message. */
export const SOCKET_STATUS_CODES: Readonly<Record<OrderStatus, number>> = {
  OMSXMITTED: 3,
  EXXMITTED: 4,
  PENDING: 5,
  CANCELLED: 6,
  EXECUTED: 7,
  OMSREJECT: 10,
  ORDERERROR: 11,
};

/** `Buy_Sell` of a socket message. */
export const SOCKET_SIDE_CODES: Readonly<Record<string, number>> = { BUY: 1, SELL: 2 };

/** `OrderType` of a socket message. */
export const SOCKET_ORDER_TYPE_CODES: Readonly<Record<string, number>> = { RL: 1, 'RL-MKT': 2 };

/** `Product` of a socket message: delivery, for OFS bids (ODIN clients know no OFS code). */
export const SOCKET_PRODUCT_CODE = 'D';

/** `OrderValidity` of a socket message: DAY (an OFS bid is a day order). */
export const SOCKET_DAY_VALIDITY = '1';
