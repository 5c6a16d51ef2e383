/**
 * Reconciliation's runs (docs/reconciliation.md): the exchange's book of each listing of an offer against
 * ordergate's orders of it (the rule: src/domain/ofs/reconciliation.ts), at every close and at the
 * operator's request. It runs beside the OMS worker, on its own timer and clock, never in the bid path, and
 * only where the exchange session is held (`exchange.ready()`): a node standing by, or a CLI process, never
 * reads the book (a login of its own would end the holder's session); the operator's request waits in the
 * database (ofs_reconciliations) for the holder's next pass.
 *
 * - At a close: each listing of an offer whose T or T+1 closed `afterCloseMs` ago (so that the exchange's
 *   allotments have come and been applied; at most `lookbackMs` ago), once per close and listing (the
 *   report's unique close key: several nodes may try, one report is kept). A close whose book the exchange
 *   does not give (it does not answer, or a link has no book yet, or its book was written before the close:
 *   BSE's latest bid-book download may predate it) is tried again `retryMs` later.
 * - On request: each queued request, leased to this node while it runs; one the exchange does not answer
 *   fails with the reason (the operator asks again).
 *
 * Our orders are read before and after the book: an order that changed in between (or was placed meanwhile)
 * is taken as in flight and not compared, so that a bid moving while the book is read is never reported; so
 * is an order changed after the book was written (`book.asOf`: BSE's book is its latest bid-book download,
 * which may be minutes old; NSE's is read live). The report tells the age of an old book.
 * Nothing in the orders is changed: a reconciliation only reports.
 */
import type { Logger } from 'pino';
import type { ReconciliationMetrics } from '../metrics/operator-metrics.js';
import {
  bookAgeNote,
  changedSince,
  reconcile,
  type OurBid,
  type Reconciliation,
} from '../domain/ofs/reconciliation.js';
import type {
  DueClose,
  ReconciliationListing,
  ReconciliationRepository,
  ReconciliationReport,
} from '../store/ofs/reconciliations.js';
import { ExchangeUnavailableError, type ExchangeAdapter, type ExchangeBook } from './exchange.js';

/** How often the reconciler looks for queued requests and closes due. */
export const DEFAULT_RECONCILE_POLL_MS = 2_000;
/** How long after a close its run waits: the allotments of the close come and are applied meanwhile. */
export const DEFAULT_RECONCILE_AFTER_CLOSE_MS = 5 * 60_000;
/** Closes older than this are not run (a node started long after an offer does not reconcile its past). */
export const DEFAULT_RECONCILE_LOOKBACK_MS = 3 * 24 * 60 * 60_000;
/** The wait before a close whose book could not be read is tried again. */
export const DEFAULT_RECONCILE_RETRY_MS = 60_000;
/** How long a queued request stays with the node running it (a node that dies leaves it to another). */
const REQUEST_LEASE_MS = 5 * 60_000;

export interface ReconcilerOptions {
  reports: Pick<
    ReconciliationRepository,
    'claimQueued' | 'complete' | 'fail' | 'recordClose' | 'dueCloses' | 'ourBids'
  >;
  exchange: Pick<ExchangeAdapter, 'readBook' | 'ready'>;
  now: () => number;
  logger: Logger;
  /** This node's name in the requests' leases. */
  holder: string;
  metrics?: ReconciliationMetrics;
  pollMs?: number;
  afterCloseMs?: number;
  lookbackMs?: number;
  retryMs?: number;
}

/** Why a run did not compare: the exchange out, or no book yet. */
class NotRun extends Error {
  constructor(
    readonly outcome: 'unavailable' | 'no_book',
    message: string,
  ) {
    super(message);
  }
}

export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<number> = Promise.resolve(0);
  /** Closes whose run failed, and when each may be tried again (epoch ms). */
  private readonly retryAt = new Map<string, number>();

  constructor(private readonly options: ReconcilerOptions) {}

  /** Runs a pass every pollMs until stop(). */
  start(): void {
    if (this.timer !== null) return;
    const pollMs = this.options.pollMs ?? DEFAULT_RECONCILE_POLL_MS;
    const next = () => {
      this.timer = setTimeout(() => {
        void this.runOnce()
          .catch((error: unknown) => this.options.logger.error({ err: error }, 'reconciliation pass failed'))
          .finally(() => {
            if (this.timer !== null) next();
          });
      }, pollMs);
    };
    next();
  }

  /** Stops the passes; resolves once the pass under way has finished. */
  async stop(): Promise<void> {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.pass.catch(() => undefined);
  }

  /** One pass, now: the queued requests, then the closes due. Answers how many runs it made. Never beside another. */
  runOnce(): Promise<number> {
    const next = this.pass.catch(() => 0).then(() => this.due());
    this.pass = next;
    return next;
  }

  private async due(): Promise<number> {
    const { exchange, reports, now, holder } = this.options;
    if (exchange.readBook === undefined) return 0;
    // Only the holder of the exchange session reads the book.
    if (!((await exchange.ready?.()) ?? true)) return 0;
    let runs = 0;
    const at = now();
    for (const request of await reports.claimQueued(holder, at, at + REQUEST_LEASE_MS)) {
      await this.runRequest(request);
      runs += 1;
    }
    const afterMs = this.options.afterCloseMs ?? DEFAULT_RECONCILE_AFTER_CLOSE_MS;
    const lookbackMs = this.options.lookbackMs ?? DEFAULT_RECONCILE_LOOKBACK_MS;
    for (const close of await reports.dueCloses(now(), afterMs, lookbackMs)) {
      const key = `${close.offerId}|${close.exchange}|${close.trigger}`;
      if ((this.retryAt.get(key) ?? 0) > now()) continue;
      if (await this.runClose(close, key)) runs += 1;
    }
    return runs;
  }

  private async runRequest(request: ReconciliationReport): Promise<void> {
    const { reports, now, logger } = this.options;
    try {
      const { result, book } = await this.compare(request);
      const runAt = now();
      await reports.complete(request.id, result, book.asOf, runAt);
      this.report(request, request.trigger, result, bookAgeNote(book.asOf, runAt));
    } catch (error) {
      const why = this.whyNotRun(error);
      await reports.fail(request.id, why, now());
      logger.warn(
        { reconciliation: request.id, offerId: request.offerId, exchange: request.exchange, why },
        'reconciliation not run',
      );
    }
  }

  /** A close's run; answers whether it ran. */
  private async runClose(close: DueClose, key: string): Promise<boolean> {
    const { reports, now, logger } = this.options;
    try {
      const { result, book } = await this.compare(close, close.closedAt);
      this.retryAt.delete(key);
      const runAt = now();
      if (await reports.recordClose(close, close.trigger, result, book.asOf, runAt))
        this.report(close, close.trigger, result, bookAgeNote(book.asOf, runAt));
      return true;
    } catch (error) {
      const why = this.whyNotRun(error);
      this.retryAt.set(key, now() + (this.options.retryMs ?? DEFAULT_RECONCILE_RETRY_MS));
      logger.warn(
        { offerId: close.offerId, exchange: close.exchange, trigger: close.trigger, why },
        'reconciliation of a close not run; trying again later',
      );
      return false;
    }
  }

  /**
   * Reads our orders, the book, our orders again, and compares. `closedAt`: a close's run, whose book must
   * have been written at or after the close (an older one counts as no book yet).
   */
  private async compare(
    listing: ReconciliationListing,
    closedAt?: number,
  ): Promise<{ result: Reconciliation; book: ExchangeBook }> {
    const { reports, exchange } = this.options;
    const before = new Map((await reports.ourBids(listing.offerId, listing.exchange)).map((bid) => [bid.orderId, bid]));
    let book: ExchangeBook | null;
    try {
      book = await exchange.readBook!(listing.exchange, listing.symbol);
    } catch (error) {
      if (error instanceof ExchangeUnavailableError)
        throw new NotRun('unavailable', `the exchange did not answer the book query (${error.unanswered.why})`);
      throw error;
    }
    if (book === null)
      throw new NotRun('no_book', `the link to ${listing.exchange} has no book of ${listing.symbol} to give yet`);
    if (closedAt !== undefined && book.asOf < closedAt)
      throw new NotRun(
        'no_book',
        `the book of ${listing.symbol} the link to ${listing.exchange} gives is as of ${new Date(book.asOf).toISOString()}, ` +
          `before the close at ${new Date(closedAt).toISOString()}: no book of the close yet`,
      );
    const asOf = book.asOf;
    const after = await reports.ourBids(listing.offerId, listing.exchange);
    const ours = after.map((bid): OurBid =>
      moved(before.get(bid.orderId), bid) || changedSince(bid, asOf) ? { ...bid, inFlight: true } : bid,
    );
    return { result: reconcile(ours, book.entries), book };
  }

  private whyNotRun(error: unknown): string {
    const outcome = error instanceof NotRun ? error.outcome : 'error';
    this.options.metrics?.run(outcome);
    if (outcome === 'error') this.options.logger.error({ err: error }, 'reconciliation failed');
    return error instanceof Error ? error.message : String(error);
  }

  private report(listing: ReconciliationListing, trigger: string, result: Reconciliation, note: string | null): void {
    const { logger, metrics } = this.options;
    metrics?.run(result.differences.length === 0 ? 'clean' : 'differences');
    const fields = {
      offerId: listing.offerId,
      exchange: listing.exchange,
      trigger,
      differences: result.differences.length,
      inFlight: result.inFlight,
      counts: result.counts,
      ...(note === null ? {} : { note }),
    };
    if (result.differences.length === 0)
      logger.info(fields, 'reconciliation: the exchange’s book agrees with ordergate’s orders');
    else logger.warn(fields, 'reconciliation: the exchange’s book differs from ordergate’s orders');
  }
}

/** Whether an order changed between the two reads (or was placed in between): not compared then. */
function moved(before: OurBid | undefined, after: OurBid): boolean {
  return (
    before === undefined ||
    before.inFlight ||
    before.status !== after.status ||
    before.quantity !== after.quantity ||
    before.pricePaise !== after.pricePaise ||
    before.orderType !== after.orderType ||
    before.exchangeOrderId !== after.exchangeOrderId ||
    before.carriedForward !== after.carriedForward ||
    before.updatedAt !== after.updatedAt
  );
}
