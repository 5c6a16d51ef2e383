/**
 * The OFS instrument of a bid, as the OMS reads it (domain/ofs/instrument.ts): its offer, by the id the
 * order carries, or its issue, by its listing; each read once per reader (one transaction's).
 */
import type { OfsInstrument } from '../domain/ofs/instrument.js';
import { issueInstrument } from '../domain/ofs/issue/instrument.js';
import { offerInstrument } from '../domain/ofs/offer/instrument.js';
import type { Order } from '../domain/orders/order.js';
import type { OfsIssueRepository } from '../store/ofs/issues.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';
import type { StoreTx } from '../store/sql/write-tx.js';

export type InstrumentReader = (order: Pick<Order, 'exchange' | 'scripToken' | 'offerId'>) => Promise<OfsInstrument>;

export function instrumentReader(
  issues: OfsIssueRepository,
  offers: OfsOfferRepository,
  tx?: StoreTx,
): InstrumentReader {
  const issueOf = issues.reader(tx);
  const read = new Map<string, Promise<OfsInstrument>>();
  return (order) => {
    const key =
      order.offerId === null ? `issue\u0000${order.exchange}\u0000${order.scripToken}` : `offer\u0000${order.offerId}`;
    let instrument = read.get(key);
    if (instrument === undefined) {
      const { offerId } = order;
      instrument =
        offerId === null
          ? issueOf(order.exchange, order.scripToken).then(issueInstrument)
          : offers.find(offerId, tx).then((registration) => offerInstrument(registration, offerId));
      read.set(key, instrument);
    }
    return instrument;
  };
}
