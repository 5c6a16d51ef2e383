/** The order statuses (ODIN vocabulary, product.md) and which of them are still working. */
export const OrderStatus = {
  /** Accepted and queued for the OMS. */
  OMSXMITTED: 'OMSXMITTED',
  /** Sent to the exchange. */
  EXXMITTED: 'EXXMITTED',
  /** Live at the exchange. */
  PENDING: 'PENDING',
  /** Rejected by the OMS. */
  OMSREJECT: 'OMSREJECT',
  /** Rejected by the exchange. */
  ORDERERROR: 'ORDERERROR',
  /** Cancelled by the user, or not allotted at close. */
  CANCELLED: 'CANCELLED',
  /** Allotted: traded quantity = allotted quantity. */
  EXECUTED: 'EXECUTED',
} as const;
export type OrderStatus = (typeof OrderStatus)[keyof typeof OrderStatus];

/** Statuses of an order that is still working: it may be modified or cancelled, and counts in limits. */
export const LIVE_STATUSES: readonly OrderStatus[] = [
  OrderStatus.OMSXMITTED,
  OrderStatus.EXXMITTED,
  OrderStatus.PENDING,
];

const LIVE = new Set<string>(LIVE_STATUSES);

export function isLiveStatus(status: string): boolean {
  return LIVE.has(status);
}
