/**
 * One exchange session at a time across nodes (docs/exchanges.md, "Several nodes"): an exchange may end an
 * API user's session at its next login, so the OMS workers of several nodes must not each log in. The node
 * whose worker holds the session's lease (src/store/orders/exchange-sessions.ts) runs the link; the others
 * stand by (their workers claim no outbox entries) and one takes over when the holder stops renewing the
 * lease: within `leaseMs` of its node's death, or at once when it stops cleanly (it releases the lease).
 */
import type { Logger } from 'pino';
import type { BidTerms } from '../../domain/ofs/rules.js';
import type { ExchangeSessionRepository } from '../../store/orders/exchange-sessions.js';
import type {
  ChangeResult,
  ExchangeAdapter,
  ExchangeBid,
  ExchangeBook,
  ExchangeEvent,
  ExchangeOrder,
  LinkHealth,
  PlaceResult,
} from '../exchange.js';

/** How long a lease lasts unless renewed: a node that dies holds up the others' sending this long at most. */
export const DEFAULT_SESSION_LEASE_MS = 15_000;

export interface LeasedExchangeOptions {
  sessions: Pick<ExchangeSessionRepository, 'take' | 'release'>;
  /** The lease's name: the exchange and the API user, e.g. `NSE_EQ:api-user`. */
  name: string;
  /** This node's name in the lease (the OMS worker's id). */
  holder: string;
  now: () => number;
  leaseMs?: number;
  logger?: Logger;
}

export class LeasedExchange implements ExchangeAdapter {
  private held = false;
  /** Until when the lease is ours, as the database last said (epoch ms). */
  private heldUntil = 0;
  /** Who held the lease when this node last looked, for its health. */
  private heldBy: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  private readonly leaseMs: number;

  constructor(
    private readonly inner: ExchangeAdapter,
    private readonly options: LeasedExchangeOptions,
  ) {
    this.leaseMs = options.leaseMs ?? DEFAULT_SESSION_LEASE_MS;
  }

  /**
   * Whether this node holds the session: its worker claims outbox entries only then. Started, the lease is
   * renewed on its own timer; else (a worker's runOnce, the tests) it is taken or renewed now.
   */
  async ready(): Promise<boolean> {
    if (this.timer === null) await this.renew(false);
    return this.holds();
  }

  /**
   * Held, and not within a fifth of the lease of its end: a renewal that hangs (the database slow, not
   * failing) must not leave this node sending after another took over. Nodes' clocks are assumed within
   * that margin of each other (NTP).
   */
  private holds(): boolean {
    return this.held && this.options.now() < this.heldUntil - this.leaseMs / 5;
  }

  /**
   * Whether this node holds the session now, as last renewed, without taking or renewing the lease: for
   * work beside the OMS's (reading the exchange's listings) that must not take the session itself.
   */
  holdsSession(): boolean {
    return this.holds();
  }

  /**
   * Takes or renews the lease now; starts the inner link's own work on taking it (when started), stops it
   * on losing it. A failed renewal (the database out) lets the lease run out: the link stands by.
   */
  renew(startInner = this.timer !== null): Promise<void> {
    this.renewing ??= this.takeLease(startInner).finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async takeLease(startInner: boolean): Promise<void> {
    const { sessions, name, holder, now, logger } = this.options;
    let held: boolean;
    try {
      const at = now();
      const lease = await sessions.take(name, holder, at, at + this.leaseMs);
      held = lease.holder === holder;
      this.heldBy = lease.holder;
      if (held) this.heldUntil = lease.heldUntil;
    } catch (error) {
      logger?.error({ err: error, session: name }, 'could not renew the exchange session lease; standing by');
      held = false;
    }
    if (held === this.held) return;
    this.held = held;
    logger?.info(
      { session: name, holder: this.heldBy },
      held ? 'took the exchange session' : 'lost the exchange session',
    );
    // Stopped meanwhile: the link stays stopped.
    if (!startInner || this.timer === null) return;
    if (held) this.inner.start?.();
    else await this.inner.stop?.();
  }

  start(): void {
    if (this.timer !== null) return;
    this.timer = setInterval(() => void this.renew(true), Math.max(100, Math.floor(this.leaseMs / 3)));
    void this.renew(true);
  }

  async stop(): Promise<void> {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    // A renewal under way is not waited for: one that hangs (the database stuck) must not hold up the stop.
    void this.renewing?.catch(() => undefined);
    await this.inner.stop?.();
    if (this.held) {
      this.held = false;
      await this.options.sessions.release(this.options.name, this.options.holder).catch(() => undefined);
    }
  }

  async runOnce(): Promise<void> {
    if (this.held) await this.inner.runOnce?.();
  }

  health(): LinkHealth[] {
    return (this.inner.health?.() ?? []).map((link) =>
      this.held
        ? link
        : {
            ...link,
            connected: false,
            // Which node holds it is in the log ("took the exchange session"), not on an answer without a token.
            problem: `standing by: ${this.heldBy === null ? 'the session lease is not taken yet' : 'another node holds the exchange session'}`,
          },
    );
  }

  private standingBy(): Error {
    return new Error(`this node does not hold the exchange session ${this.options.name}`);
  }

  findBids(orderIds: readonly string[]): Promise<Map<string, ExchangeOrder>> {
    if (!this.holds()) return Promise.reject(this.standingBy());
    return this.inner.findBids(orderIds);
  }

  placeBids(bids: readonly ExchangeBid[]): Promise<PlaceResult[]> {
    if (!this.holds())
      return Promise.resolve(
        bids.map(() => ({
          accepted: null,
          outcome: 'not-sent',
          why: this.standingBy().message,
          retryAfterMs: this.leaseMs,
        })),
      );
    return this.inner.placeBids(bids);
  }

  modify(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.holds() ? this.inner.modify(bid, terms) : this.notSent();
  }

  cancel(bid: ExchangeBid): Promise<ChangeResult> {
    return this.holds() ? this.inner.cancel(bid) : this.notSent();
  }

  carryForward(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.holds() ? this.inner.carryForward(bid, terms) : this.notSent();
  }

  private notSent(): Promise<ChangeResult> {
    return Promise.resolve({
      done: null,
      outcome: 'not-sent',
      why: this.standingBy().message,
      retryAfterMs: this.leaseMs,
    });
  }

  /** The exchange's book, through the session this node holds; refused while it stands by. */
  readBook(exchange: string, symbol: string): Promise<ExchangeBook | null> {
    if (!this.holds()) return Promise.reject(this.standingBy());
    return this.inner.readBook?.(exchange, symbol) ?? Promise.resolve(null);
  }

  pollEvents(skip?: Pick<ReadonlySet<string>, 'has'>): Promise<ExchangeEvent[]> {
    return this.holds() ? this.inner.pollEvents(skip) : Promise.resolve([]);
  }

  acknowledge(eventIds: readonly string[]): Promise<void> {
    return this.inner.acknowledge(eventIds);
  }
}
