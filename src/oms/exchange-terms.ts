/**
 * Offers read from the exchange (issue 50, item 3; docs/operations.md, "Forecast and the exchange's terms"):
 * the session holder reads NSE's `activeSecurities` at start and every few minutes and keeps the last
 * answer per listing (src/store/ofs/exchange-terms.ts), for `ordergate ofs exchange-terms` to compare with
 * the imported offer (src/domain/ofs/offer/exchange-terms.ts). Nothing read is applied.
 *
 * A read that fails (the exchange down, an answer not of the shape) is logged and kept as the exchange's
 * last error; the last answers stay, and the next turn reads again. Nothing here throws to its caller.
 *
 * Wiring (src/wiring.ts, beside the NSE link, under its session lease: only the holder logs in):
 *   const terms = new ExchangeTermsRefresher({
 *     read: () => nseClient.activeSecurities(),
 *     repository: new ExchangeTermsRepository(store.db),
 *     now,
 *     logger,
 *     shouldRead: () => leasedNse.ready(),
 *   });
 *   terms.start();   // with the OMS worker's start;  await terms.stop() with its stop
 */
import type { Logger } from 'pino';
import type { ExchangeListingTerms, ExchangeSeriesTerms } from '../domain/ofs/offer/exchange-terms.js';
import type { ExchangeTermsRepository } from '../store/ofs/exchange-terms.js';
import { paiseOf, type NseActiveSecurity, type NseActiveSeries } from './links/nse-eofs/mapping.js';

/** How often the listings are read by default. */
export const DEFAULT_TERMS_REFRESH_MS = 5 * 60 * 1000;
/** After a turn skipped (this node not the session's holder), the next one. */
const SKIPPED_RETRY_MS = 10_000;

export interface ExchangeTermsRefresherOptions {
  /** One read of the exchange's open listings (NseClient.activeSecurities); throws when there is no answer. */
  read: () => Promise<NseActiveSecurity[]>;
  repository: Pick<ExchangeTermsRepository, 'recordRead' | 'recordFailure'>;
  now: () => number;
  logger?: Logger;
  /** The exchange segment the answers are kept under (default NSE_EQ). */
  exchange?: string;
  /** Between two reads while started (default 5 minutes). */
  intervalMs?: number;
  /** Whether this node may read now (the session lease's holder: LeasedExchange.ready); default always. */
  shouldRead?: () => boolean | Promise<boolean>;
}

/** What one refresh did. */
export type TermsRefresh =
  { kind: 'read'; listings: number; at: number } | { kind: 'failed'; error: string; at: number } | { kind: 'skipped' };

export class ExchangeTermsRefresher {
  /** The last read that failed, kept until one succeeds; null: none since the last success. */
  lastError: { error: string; at: number } | null = null;
  /** When the last read succeeded; null: none yet. */
  lastReadAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<TermsRefresh> | null = null;
  private stopped = true;
  private readonly exchange: string;
  private readonly intervalMs: number;

  constructor(private readonly options: ExchangeTermsRefresherOptions) {
    this.exchange = options.exchange ?? 'NSE_EQ';
    this.intervalMs = options.intervalMs ?? DEFAULT_TERMS_REFRESH_MS;
  }

  /** Reads the exchange's listings once and stores them; a failure is logged and kept, never thrown. One at a time. */
  refresh(): Promise<TermsRefresh> {
    this.running ??= this.readOnce().finally(() => (this.running = null));
    return this.running;
  }

  /** Reads now, then every interval until stop(). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const turn = () => {
      void this.refresh().then((done) => {
        // Not this node's turn (the session not held yet, as just after start): asked again soon.
        const next = done.kind === 'skipped' ? Math.min(this.intervalMs, SKIPPED_RETRY_MS) : this.intervalMs;
        if (!this.stopped) this.timer = setTimeout(turn, next);
      });
    };
    turn();
  }

  /** No further read; waits for one under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  private async readOnce(): Promise<TermsRefresh> {
    const { read, repository, now, logger, shouldRead } = this.options;
    try {
      if (shouldRead !== undefined && !(await shouldRead())) return { kind: 'skipped' };
    } catch (error) {
      logger?.warn(
        { err: error, exchange: this.exchange },
        "could not tell whether this node reads the exchange's terms",
      );
      return { kind: 'skipped' };
    }
    let securities: NseActiveSecurity[];
    try {
      securities = await read();
      if (!Array.isArray(securities)) throw new Error('the answer is not a list of securities');
    } catch (error) {
      return this.failed(error);
    }
    const at = now();
    try {
      await repository.recordRead(
        this.exchange,
        securities.map((security) => ({ symbol: security.symbol, terms: security })),
        at,
      );
    } catch (error) {
      return this.failed(error, 'could not keep what the exchange answered');
    }
    this.lastReadAt = at;
    this.lastError = null;
    logger?.debug({ exchange: this.exchange, listings: securities.length }, "read the exchange's listings");
    return { kind: 'read', listings: securities.length, at };
  }

  private async failed(error: unknown, what = "could not read the exchange's listings"): Promise<TermsRefresh> {
    const at = this.options.now();
    const text = `${what}: ${error instanceof Error ? error.message : String(error)}`;
    this.lastError = { error: text, at };
    this.options.logger?.warn({ err: error, exchange: this.exchange }, `${what}; the last answers stand`);
    try {
      await this.options.repository.recordFailure(this.exchange, text, at);
    } catch (storeError) {
      this.options.logger?.error({ err: storeError, exchange: this.exchange }, 'could not keep the failed read');
    }
    return { kind: 'failed', error: text, at };
  }
}

/** An instant as the wire writes it (ISO 8601); NaN when it is not one. */
const instantOf = (text: unknown) => (typeof text === 'string' ? Date.parse(text) : Number.NaN);

/**
 * The exchange's entry for a listing as the domain compares it (paise, epoch ms), from what was stored. A
 * field the entry lacks reads as what no offer has (NaN, an empty text), so that it shows as a difference.
 */
export function listingTermsOf(security: NseActiveSecurity): ExchangeListingTerms {
  const series = (s: NseActiveSeries): ExchangeSeriesTerms => ({
    series: String(s.series),
    floorPricePaise: typeof s.basePrice === 'number' ? paiseOf(s.basePrice) : Number.NaN,
    openOnDate: typeof s.openOnDate === 'string' ? s.openOnDate : '',
    opensAt: instantOf(s.mktOpenTime),
    closesAt: instantOf(s.mktCloseTime),
    modCxlOpensAt: instantOf(s.mktModCxlOpenTime),
    modCxlClosesAt: instantOf(s.mktModCxlCloseTime),
    valueLimitPaise:
      s.orderValueUpperLimit === null || s.orderValueUpperLimit === undefined
        ? null
        : typeof s.orderValueUpperLimit === 'number'
          ? paiseOf(s.orderValueUpperLimit)
          : Number.NaN,
  });
  return {
    symbol: security.symbol,
    tickSizePaise: typeof security.tickSize === 'number' ? paiseOf(security.tickSize) : Number.NaN,
    lotSize: typeof security.regularLotSize === 'number' ? security.regularLotSize : Number.NaN,
    series: Array.isArray(security.series) ? security.series.map(series) : [],
  };
}
