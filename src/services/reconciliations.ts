/**
 * Reconciliation for the operator (docs/reconciliation.md): a request for an offer's listings, queued for
 * the node holding the exchange session (src/oms/reconciler.ts runs it), and the reports. Operators only.
 */
import { ApiError, Errors } from '../domain/errors.js';
import type { BidSide } from '../domain/ofs/reconciliation.js';
import type { ReconciliationReportData } from '../schemas/reconciliations.js';
import type { UserRepository } from '../store/access/users.js';
import type { ReconciliationReport, ReconciliationRepository } from '../store/ofs/reconciliations.js';
import type { Caller } from './auth.js';

/** The reports a list answers by default. */
export const DEFAULT_RECONCILIATIONS_LIMIT = 20;

const instant = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function side(bid: BidSide | null) {
  if (bid === null) return null;
  return {
    status: bid.status,
    order_type: bid.orderType,
    price: bid.orderType === 'RL-MKT' ? null : bid.pricePaise / 100,
    quantity: bid.quantity,
    exchange_order_id: bid.exchangeOrderId,
  };
}

/** A report on the wire. */
export function toReconciliationReport(report: ReconciliationReport): ReconciliationReportData {
  return {
    id: report.id,
    offer_id: report.offerId,
    exchange: report.exchange,
    symbol: report.symbol,
    trigger: report.trigger,
    state: report.state,
    requested_by: report.requestedBy,
    requested_at: instant(report.requestedAt)!,
    run_at: instant(report.runAt),
    book_as_of: instant(report.bookAsOf),
    ours: report.result?.ours ?? null,
    book: report.result?.book ?? null,
    matched: report.result?.matched ?? null,
    in_flight: report.result?.inFlight ?? null,
    counts: report.result?.counts ?? null,
    differences: report.differences.map((d) => ({
      kind: d.kind,
      order_id: d.orderId,
      exchange_order_id: d.exchangeOrderId,
      reference: d.reference,
      ours: side(d.ours),
      theirs: side(d.theirs),
      message: d.message,
    })),
    error: report.error,
    note: report.note,
  };
}

export class ReconciliationService {
  constructor(
    private readonly reports: ReconciliationRepository,
    private readonly users: Pick<UserRepository, 'find'>,
    private readonly now: () => number,
  ) {}

  /** Queues a request for each listing of the offer (or the one on `exchange`); answers the requests. */
  async request(caller: Caller, offerId: string, exchange?: string): Promise<ReconciliationReportData[]> {
    await this.requireOperator(caller);
    const listings = await this.listingsOf(offerId, exchange);
    return (await this.reports.request(listings, caller.userId, this.now())).map(toReconciliationReport);
  }

  /** The offer's reports and requests, newest first. */
  async list(
    caller: Caller,
    offerId: string,
    options: { exchange?: string; limit?: number } = {},
  ): Promise<ReconciliationReportData[]> {
    await this.requireOperator(caller);
    await this.listingsOf(offerId, options.exchange);
    return (
      await this.reports.list(offerId, {
        ...(options.exchange !== undefined && { exchange: options.exchange }),
        limit: options.limit ?? DEFAULT_RECONCILIATIONS_LIMIT,
      })
    ).map(toReconciliationReport);
  }

  private async listingsOf(offerId: string, exchange: string | undefined) {
    const listings = await this.reports.listings(offerId);
    if (listings.length === 0)
      throw new ApiError(Errors.OFS_OFFER_NOT_FOUND, `No OFS offer has offer_id ${JSON.stringify(offerId)}`, [
        { field: 'offer_id', message: 'no such offer' },
      ]);
    if (exchange === undefined) return listings;
    const listing = listings.filter((l) => l.exchange === exchange);
    if (listing.length === 0)
      throw new ApiError(Errors.OFS_OFFER_NOT_FOUND, `The OFS offer ${offerId} is not listed on ${exchange}`, [
        { field: 'exchange', message: 'the offer has no listing on this exchange' },
      ]);
    return listing;
  }

  /** The operator flag is read on every call (`ordergate users set-operator <id> false` takes effect at once). */
  private async requireOperator(caller: Caller): Promise<void> {
    if ((await this.users.find(caller.userId))?.operator === true) return;
    throw new ApiError(
      Errors.OPERATOR_REQUIRED,
      'This call is for operators; `ordergate users set-operator <user_id> true` makes a user one',
    );
  }
}
