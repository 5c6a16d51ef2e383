/**
 * The order-event feed of one process: a single poller reads new order_history rows (in id order, in
 * batches) while at least one subscriber listens, and hands each to the subscribers of the order's owner.
 *
 * Rows are read in the order of their ids (every user's together); each user sees their events by their
 * own numbers (event ids 1, 2, 3, ... per user: nothing of other users' volume shows).
 *
 * Hand-over without gap or repeat: a subscriber is registered synchronously at the poller's position P
 * (every row up to P has been dispatched, every later row will be). Its replay (its user's events after
 * Last-Event-ID, rows up to P) comes from the store, while live rows (> P) wait in its buffer; then the
 * buffer is flushed. A user's event ids follow the order of their rows' ids (OrderRepository.apply numbers
 * them under a lock per user taken before the rows are written), so each subscriber remembers the last
 * event id it sent and skips anything not above it.
 *
 * The feed also holds the quota of long-lived connections its consumers share: the event stream and the
 * live order socket take their slots from `streams` (through their stream sessions, stream-session.ts).
 */
import type { Logger } from 'pino';
import { ApiError, Errors } from '../domain/errors.js';
import type { StreamCaps } from '../domain/access/stream-limits.js';
import { StreamQuota } from './stream-quota.js';
import type { OrderEvent } from '../schemas/events.js';
import { toOrderEvent } from '../schemas/mappers/orders.js';
import type { OrderEventRecord } from '../domain/orders/order.js';
import type { EventHorizon, OrderEventRepository } from '../store/orders/events.js';

/** The longest pause of the poller after failed polls (a database outage). */
const MAX_RETRY_DELAY_MS = 2_000;

export interface OrderEventsOptions {
  /** How often the poller looks for new rows (ms). */
  pollMs?: number;
  /** How often an idle stream gets a heartbeat comment (ms). */
  heartbeatMs?: number;
  /** Rows read at once, by the poller and by a replay. */
  batchSize?: number;
  logger?: Pick<Logger, 'error'>;
}

/** What bounds the streams of one node: how many, and when their sessions end. */
export interface StreamPolicy {
  /** MAX_STREAMS_PER_USER and MAX_STREAMS_PER_NODE: event streams and live order sockets together. */
  limits: StreamCaps;
  /** The sessions revoked and the users disabled at or after an instant (every node's, from the store). */
  endedSince?: (since: number) => Promise<SessionEndings>;
  /** The clock the sessions' endings are read on (the AuthService's). */
  now: () => number;
}

/** Where a subscription's events go (a stream session). */
export interface OrderEventConsumer {
  /** One event; `trade`, when the change made one (an allotment), is that trade (the live order socket's TRD_MSG). */
  send(event: OrderEvent, trade?: OrderEventRecord['trade']): void;
  /**
   * A live-only subscription (no Last-Event-ID) starts after this event id of its user, before anything is
   * sent: a client that loses the connection before its first event resumes from here and misses nothing.
   */
  startsAfter?(eventId: number): void;
  /** Resolves once the consumer has taken what it was sent (a replay waits for it between batches). */
  drained(): Promise<void>;
  /** The feed ends the subscription: the server shuts down. */
  close(): void;
  /**
   * Sessions of the subscription's user ended (revoked tokens by hash, or the user disabled): a consumer
   * whose token is among them ends at once, saying so; the feed sends it nothing more. Called again for a
   * while for the same endings: it must be idempotent.
   */
  sessionsEnded?(ended: { tokenHashes: ReadonlySet<string>; userDisabled: boolean }): void;
}

/** What ended lately: revoked sessions (token hash, user) and disabled users. */
export interface SessionEndings {
  revoked: { tokenHash: string; userId: string }[];
  disabledUsers: string[];
}

/**
 * How far back each poll looks for ended sessions: the instants are the nodes' clocks at the logout, and a
 * revocation may commit a little after its instant, so the poller looks back this much every time.
 */
export const SESSION_ENDINGS_LOOKBACK_MS = 10_000;

/** How often the poller asks for ended sessions at most: within a second of a logout on another node. */
const ENDINGS_CHECK_MS = 1_000;

export interface OrderEventSubscription {
  /** Sends the replay, if any, then the live events as they come. */
  start(): Promise<void>;
  /** Stops sending (the client went away); idempotent. */
  close(): void;
}

interface Subscriber {
  userId: string;
  consumer: OrderEventConsumer;
  /** Live rows that arrived while the replay was being sent. */
  buffer: OrderEventRecord[] | null;
  /** The user's event id last sent. */
  lastSentId: number;
}

export class OrderEventsService {
  readonly heartbeatMs: number;
  /** The slots of this node's event streams and live order sockets. */
  readonly streams: StreamQuota;
  private readonly pollMs: number;
  private readonly batchSize: number;
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private subscriberCount = 0;
  /** Every event up to this id has been dispatched (or is not to be: it was before the poller began). */
  private position = 0;
  /** The running poller: resolved once its starting position is known. */
  private polling: Promise<void> | null = null;
  private pollerDone: Promise<void> = Promise.resolve();
  private wake: (() => void) | null = null;
  private closed = false;
  /** When the poller last asked for ended sessions (performance.now), and whether it must ask at its next pass. */
  private endingsCheckedAt = -Infinity;
  private endingsDue = false;

  constructor(
    private readonly events: OrderEventRepository,
    /** A new horizon for each poller run (a horizon keeps its position). */
    private readonly newHorizon: () => EventHorizon,
    private readonly policy: StreamPolicy,
    private readonly options: OrderEventsOptions = {},
  ) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.pollMs = options.pollMs ?? 200;
    this.batchSize = options.batchSize ?? 500;
    this.streams = new StreamQuota(policy.limits);
  }

  /**
   * Registers a consumer of the user's events: after `lastEventId` when given (replay first), else from
   * now on. Rejects (before anything is sent) when the store cannot be read, and with e-124 when
   * `lastEventId` is after the user's last event.
   */
  async subscribe(
    userId: string,
    lastEventId: number | undefined,
    consumer: OrderEventConsumer,
  ): Promise<OrderEventSubscription> {
    if (this.closed) throw new ApiError(Errors.UNAVAILABLE, 'The server is shutting down');
    // Only ids the user was sent can come back: a larger one would skip their events until they caught up.
    if (lastEventId !== undefined && lastEventId > (await this.events.lastUserEvent(userId))) {
      throw new ApiError(
        Errors.EVENT_ID_AHEAD,
        `Last-Event-ID ${lastEventId} is after your last order event; reconnect without it`,
      );
    }
    // Until the hand-over below it takes nothing: what the poller dispatches meanwhile is in its replay.
    const subscriber: Subscriber = { userId, consumer, buffer: null, lastSentId: Number.MAX_SAFE_INTEGER };
    this.add(subscriber);
    try {
      await this.startPolling();
    } catch (error) {
      this.remove(subscriber);
      throw error;
    }
    if (this.closed) throw new ApiError(Errors.UNAVAILABLE, 'The server is shutting down');
    // From here on every row above `handOver` reaches the buffer; rows up to it come from the store.
    const handOver = this.position;
    subscriber.buffer = [];
    let started = false;
    return {
      start: async () => {
        if (started) return;
        started = true;
        try {
          if (lastEventId === undefined) {
            // Live only: after the user's last event up to the hand-over. Not up to where the poller has got
            // to by now: the client may take the stream as live (its headers) before this runs, and a bid it
            // places then must not be counted as before the stream.
            subscriber.lastSentId = await this.events.lastUserEventThrough(userId, handOver);
            consumer.startsAfter?.(subscriber.lastSentId);
          } else {
            subscriber.lastSentId = lastEventId;
            await this.replay(subscriber, handOver);
          }
        } catch (error) {
          this.remove(subscriber);
          throw error;
        }
        const buffered = subscriber.buffer ?? [];
        subscriber.buffer = null;
        for (const row of buffered) this.deliver(subscriber, row);
      },
      close: () => this.remove(subscriber),
    };
  }

  /** Ends every subscription and stops the poller (server shutdown). */
  async close(): Promise<void> {
    this.closed = true;
    for (const set of this.subscribers.values()) for (const subscriber of set) subscriber.consumer.close();
    this.subscribers.clear();
    this.subscriberCount = 0;
    this.wake?.();
    await this.pollerDone;
  }

  /** The user's events after lastSentId whose rows are up to `upToHistoryId`. */
  private async replay(subscriber: Subscriber, upToHistoryId: number): Promise<void> {
    for (;;) {
      const rows = await this.events.userEventsBetween(
        subscriber.userId,
        subscriber.lastSentId,
        upToHistoryId,
        this.batchSize,
      );
      if (!this.isSubscribed(subscriber)) return;
      for (const row of rows) this.deliver(subscriber, row);
      if (rows.length < this.batchSize) return;
      await subscriber.consumer.drained();
    }
  }

  private deliver(subscriber: Subscriber, row: OrderEventRecord): void {
    if (row.eventId <= subscriber.lastSentId || !this.isSubscribed(subscriber)) return;
    subscriber.lastSentId = row.eventId;
    subscriber.consumer.send(toOrderEvent(row), row.trade);
  }

  private dispatch(rows: OrderEventRecord[]): void {
    for (const row of rows) {
      const set = this.subscribers.get(row.userId);
      if (set !== undefined) {
        for (const subscriber of set) {
          if (subscriber.buffer !== null) subscriber.buffer.push(row);
          else this.deliver(subscriber, row);
        }
      }
      this.position = row.historyId;
    }
  }

  private startPolling(): Promise<void> {
    if (this.polling === null) {
      const horizon = this.newHorizon();
      const polling = horizon.advance().then((start) => {
        this.position = start;
        this.pollerDone = this.poll(polling, horizon);
      });
      polling.catch(() => {
        if (this.polling === polling) this.polling = null;
      });
      this.polling = polling;
    }
    return this.polling;
  }

  /** Runs while anyone listens; the next subscriber starts a new poller from the newest event. */
  private async poll(polling: Promise<void>, horizon: EventHorizon): Promise<void> {
    try {
      let failures = 0;
      while (!this.closed && this.subscriberCount > 0) {
        let full = false;
        try {
          const upTo = horizon.value > this.position ? horizon.value : await horizon.advance();
          const rows = await this.events.eventsBetween(this.position, upTo, this.batchSize);
          // Read after the events: a session ended before they were read is ended before they are sent.
          await this.endSessions();
          this.dispatch(rows);
          full = rows.length === this.batchSize;
          // Ids up to the horizon that were not read were never committed.
          if (!full) this.position = Math.max(this.position, upTo);
          failures = 0;
        } catch (error) {
          // The database may be out: streams stay open, and the poller backs off (at most 2 s) until it is back.
          failures += 1;
          this.options.logger?.error({ err: error, failures }, 'order-event poll failed; retrying');
        }
        if (!full)
          await this.sleep(
            failures === 0
              ? this.pollMs
              : Math.max(this.pollMs, Math.min(this.pollMs * 2 ** failures, MAX_RETRY_DELAY_MS)),
          );
      }
    } finally {
      // Synchronous with the loop's last check: a subscriber added later starts a new poller.
      if (this.polling === polling) this.polling = null;
    }
  }

  /**
   * Ends the subscriptions of the sessions that ended lately on any node (a logout, the operator's
   * revocation, a disabled user): each consumer whose token is among them ends at once.
   */
  private async endSessions(): Promise<void> {
    if (this.policy.endedSince === undefined) return;
    // Every ENDINGS_CHECK_MS at most (a 200 ms poll would ask five times a second), or at once when woken for it.
    const at = performance.now();
    if (!this.endingsDue && at - this.endingsCheckedAt < ENDINGS_CHECK_MS) return;
    this.endingsDue = false;
    this.endingsCheckedAt = at;
    const { revoked, disabledUsers } = await this.policy.endedSince(this.policy.now() - SESSION_ENDINGS_LOOKBACK_MS);
    const byUser = new Map<string, { tokenHashes: Set<string>; userDisabled: boolean }>();
    const of = (userId: string) => {
      let ended = byUser.get(userId);
      if (ended === undefined) byUser.set(userId, (ended = { tokenHashes: new Set(), userDisabled: false }));
      return ended;
    };
    for (const { tokenHash, userId } of revoked)
      if (this.subscribers.has(userId)) of(userId).tokenHashes.add(tokenHash);
    for (const userId of disabledUsers) if (this.subscribers.has(userId)) of(userId).userDisabled = true;
    for (const [userId, ended] of byUser)
      for (const subscriber of [...(this.subscribers.get(userId) ?? [])]) subscriber.consumer.sessionsEnded?.(ended);
  }

  /** Looks at once for ended sessions and new events (a logout on this node ends its streams at once). */
  pollNow(): void {
    this.endingsDue = true;
    this.wake?.();
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.wake = null;
        resolve();
      }, ms);
      this.wake = () => {
        clearTimeout(timer);
        this.wake = null;
        resolve();
      };
    });
  }

  private add(subscriber: Subscriber): void {
    const set = this.subscribers.get(subscriber.userId) ?? new Set<Subscriber>();
    set.add(subscriber);
    this.subscribers.set(subscriber.userId, set);
    this.subscriberCount += 1;
  }

  private remove(subscriber: Subscriber): void {
    const set = this.subscribers.get(subscriber.userId);
    if (set === undefined || !set.delete(subscriber)) return;
    if (set.size === 0) this.subscribers.delete(subscriber.userId);
    this.subscriberCount -= 1;
  }

  private isSubscribed(subscriber: Subscriber): boolean {
    return this.subscribers.get(subscriber.userId)?.has(subscriber) ?? false;
  }
}
