/**
 * The indicative prices the exchanges publish through T (docs/design/ofs.md), as a live feed for the
 * order-event streams: one poller per process reads the rows published since the last it saw, every
 * pollMs while at least one stream listens, and hands each to every listener (the figures are public:
 * every logged-in user may read them). A stream that starts gets what is published from then on; the
 * latest figures are in the offers' read calls.
 */
import type { PublishedIndicative } from '../domain/ofs/offer/offer.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';

export interface IndicativePoint extends PublishedIndicative {
  offerId: string;
}

export type IndicativeListener = (point: IndicativePoint) => void;

/** How often the feed looks for new figures by default: the exchange publishes them at each pass of an OMS. */
export const DEFAULT_INDICATIVE_POLL_MS = 1_000;

/** Rows read at once. */
const BATCH = 500;

export class IndicativeFeed {
  private readonly listeners = new Set<IndicativeListener>();
  private timer: NodeJS.Timeout | undefined;
  /** Everything published at or before this instant was handed over (or is older than the first listener). */
  private seenUntil: number | null = null;
  private polling = false;

  constructor(
    private readonly offers: Pick<OfsOfferRepository, 'indicativeSince' | 'latestIndicativeAt'>,
    private readonly pollMs = DEFAULT_INDICATIVE_POLL_MS,
    private readonly onError: (error: unknown) => void = () => undefined,
  ) {}

  /** Listens from now on; answers the call that stops listening. */
  subscribe(listener: IndicativeListener): () => void {
    this.listeners.add(listener);
    if (this.timer === undefined) this.schedule();
    return () => {
      this.listeners.delete(listener);
      if (this.listeners.size === 0) this.stop();
    };
  }

  /** One poll: what was published since the last, to every listener. Answers how many points it handed over. */
  async pollOnce(): Promise<number> {
    if (this.polling) return 0;
    this.polling = true;
    try {
      if (this.seenUntil === null) {
        this.seenUntil = (await this.offers.latestIndicativeAt()) ?? 0;
        return 0;
      }
      const points = await this.offers.indicativeSince(this.seenUntil, BATCH);
      for (const point of points) {
        this.seenUntil = Math.max(this.seenUntil, point.at);
        for (const listener of this.listeners) listener(point);
      }
      return points.length;
    } finally {
      this.polling = false;
    }
  }

  private schedule(): void {
    this.timer = setTimeout(
      () => {
        this.pollOnce()
          .catch(this.onError)
          .finally(() => {
            if (this.listeners.size > 0) this.schedule();
            else this.timer = undefined;
          });
      },
      this.seenUntil === null ? 0 : this.pollMs,
    );
  }

  private stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    // The next listener starts from what is published after it comes.
    this.seenUntil = null;
  }
}
