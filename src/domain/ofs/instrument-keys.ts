/**
 * The instruments the OMS keeps apart (docs/design/oms.md, "One instrument's failure is its own"): an
 * offer, or an issue of the one-listing model. The key names one in the OMS's failure records, in its
 * logs and in `ordergate oms stuck`; the store builds the same keys in SQL (store/ofs/instrument-faults.ts).
 */

/** `offer:<offer_id>`. */
export function offerInstrument(offerId: string): string {
  return `offer:${offerId}`;
}

/** `issue:<exchange>:<scrip_token>`. */
export function issueInstrument(exchange: string, scripToken: number): string {
  return `issue:${exchange}:${scripToken}`;
}

/** The instrument an order bids in. */
export function instrumentOfOrder(order: { offerId: string | null; exchange: string; scripToken: number }): string {
  return order.offerId === null ? issueInstrument(order.exchange, order.scripToken) : offerInstrument(order.offerId);
}

/** An instrument the OMS set aside after repeated failures: what failed, how often in a row, and since when. */
export interface SetAsideInstrument {
  instrument: string;
  step: string;
  failures: number;
  setAsideAt: number;
}
