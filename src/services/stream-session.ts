/**
 * The session of one long-lived stream of a user's order events, whatever carries it: the event stream
 * (server-sent events) and the live order socket (Socket.IO) both hold one. A session takes the stream's
 * slot of the node's and the user's caps (StreamQuota), subscribes to the user's order events
 * (OrderEventsService), checks the token again while it is open (every period, at its expiry, and at once
 * when the feed sees its session end on any node), cuts off a client that lets too much pile up unread, and
 * at its end gives everything back. The transport only frames what the session hands it and says why the
 * stream ends, each in its own way.
 */
import type { Logger } from 'pino';
import type { ApiError } from '../domain/errors.js';
import type { OrderEventRecord } from '../domain/orders/order.js';
import { endsSession, nextSessionCheckMs } from '../domain/access/stream-limits.js';
import type { OrderEvent } from '../schemas/events.js';
import { tokenRevoked, type AuthService, type Caller } from './auth.js';
import type { OrderEventConsumer, OrderEventsService, OrderEventSubscription } from './order-events.js';
import type { StreamSlot } from './stream-quota.js';

/** How often an open stream's token is checked again by default (ms), besides at its expiry. */
export const DEFAULT_SESSION_RECHECK_MS = 30_000;

export interface StreamSessionOptions {
  /** How often an open stream's token is checked again (ms), besides at its expiry; 30 s by default. */
  sessionRecheckMs?: number;
}

export interface StreamSessionSettings {
  /** The order-event feed, and the stream quota its streams share. */
  feed: Pick<OrderEventsService, 'subscribe' | 'streams'>;
  /** The token check of every call, made again while a stream is open. */
  auth: Pick<AuthService, 'authenticate'>;
  /** How often an open stream's token is checked again (ms), besides at its expiry. */
  recheckMs: number;
  /** The clock the tokens' expiry is read on (the AuthService's). */
  now: () => number;
}

/** Why a session ends its stream, for the transport to say in its own frames. */
export type StreamEnd =
  /** The session ended (a logout, an expiry, a disabled user): the refusal a call with the token would get. */
  | { why: 'session-ended'; refusal: ApiError }
  /** The server is shutting down: the client comes back shortly, on this node or another. */
  | { why: 'shutdown' }
  /** The client let more than the transport's limit pile up unread: cut off, nothing more can reach it. */
  | { why: 'unread' };

/** What carries a session's stream: it frames the events, knows how much is unread, and closes. */
export interface StreamTransport {
  /** One order event; `trade` is the trade the change made, if any (an allotment). */
  send(event: OrderEvent, trade?: OrderEventRecord['trade']): void;
  /** A live-only stream starts after this event id of its user (OrderEventConsumer.startsAfter). */
  startsAfter?(eventId: number): void;
  /** What the client has not read yet, in the transport's own measure (bytes, messages). */
  unread(): number;
  /** Beyond this much unread, the client is cut off. */
  readonly maxUnread: number;
  /** Resolves once the client has read what it was sent, or is gone. */
  drained(): Promise<void>;
  /** Says why (when there is something to say) and closes; the transport then ends the session. */
  close(end: StreamEnd): void;
}

/** The stream sessions of one transport, over the node's order-event feed and stream quota. */
export class StreamSessions {
  constructor(private readonly settings: StreamSessionSettings) {}

  /** How often an open stream's token is checked again (ms). */
  get recheckMs(): number {
    return this.settings.recheckMs;
  }

  /**
   * A stream whose caller is known as it opens (the event stream): its slot is taken now, for the node and
   * the caller, or the 429 (the user's cap) or the 503 (the node's) is thrown. The session gives it back.
   */
  open(userId: string, transport: StreamTransport, logger: Pick<Logger, 'warn'>): StreamSession {
    const slot = this.settings.feed.streams.open(userId);
    return new StreamSession(this.settings, transport, logger, slot, () => slot.release());
  }

  /**
   * A stream over a connection that holds its slot already (the live order socket's, from its acceptance),
   * counted for no user until its login. The connection gives the slot back as it closes.
   */
  attach(slot: StreamSlot, transport: StreamTransport, logger: Pick<Logger, 'warn'>): StreamSession {
    return new StreamSession(this.settings, transport, logger, slot, () => {});
  }
}

export class StreamSession {
  private caller: Caller | null = null;
  private authorization = '';
  private subscription: OrderEventSubscription | null = null;
  /** The next check of the token. */
  private recheck: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Where the feed hands this session's events, for as long as the session lasts. */
  private readonly consumer: OrderEventConsumer;

  constructor(
    private readonly settings: StreamSessionSettings,
    private readonly transport: StreamTransport,
    private readonly logger: Pick<Logger, 'warn'>,
    private readonly slot: StreamSlot,
    private readonly releaseSlot: () => void,
  ) {
    this.consumer = {
      send: (event, trade) => {
        if (this.stopped) return;
        transport.send(event, trade);
        this.checkUnread();
      },
      startsAfter: (eventId) => {
        if (!this.stopped) transport.startsAfter?.(eventId);
      },
      drained: () => (this.stopped ? Promise.resolve() : transport.drained()),
      close: () => this.endWith({ why: 'shutdown' }),
      sessionsEnded: ({ tokenHashes, userDisabled }) => {
        // The stream's current login: a socket's user may have logged it in again with another token.
        const caller = this.caller;
        if (caller === null || !(userDisabled || tokenHashes.has(caller.tokenHash))) return;
        this.endWith({ why: 'session-ended', refusal: tokenRevoked() });
      },
    };
  }

  /** The user whose events the stream carries, once subscribed. */
  get userId(): string | null {
    return this.caller?.userId ?? null;
  }

  /** Whether the session is over: it sends nothing more. */
  get ended(): boolean {
    return this.stopped;
  }

  /**
   * Subscribes the stream to the caller's order events: after `lastEventId` when given, else from now on.
   * A later login of the same user keeps the subscription (no event is lost) and the new token is the one
   * checked from then on; another user's replaces it, counted for that user from now on. Rejects (the
   * user's cap, e-124, the database) before anything is sent, and the session is then over.
   */
  async subscribe(caller: Caller, authorization: string, lastEventId?: number): Promise<void> {
    if (this.stopped) return;
    const previous = this.caller;
    // Set before the feed is awaited: an ending of this session that it reports meanwhile is this token's.
    this.caller = caller;
    this.authorization = authorization;
    if (previous?.userId !== caller.userId) {
      clearTimeout(this.recheck);
      this.subscription?.close();
      this.subscription = null;
      try {
        this.slot.assign(caller.userId);
        const subscription = await this.settings.feed.subscribe(caller.userId, lastEventId, this.consumer);
        if (this.stopped) return subscription.close();
        this.subscription = subscription;
      } catch (error) {
        this.end();
        throw error;
      }
    }
    this.scheduleRecheck(caller.expiresAt);
  }

  /** Sends the replay, if any, then the live events as they come; rejects when the replay cannot be read. */
  async start(): Promise<void> {
    await this.subscription?.start();
  }

  /**
   * The transport sent something of its own (an indicative price): a client that lets too much pile up
   * unread is cut off, whatever piled up.
   */
  checkUnread(): void {
    if (!this.stopped && this.transport.unread() > this.transport.maxUnread) this.endWith({ why: 'unread' });
  }

  /** The stream is over (the client left, or the transport closed it): everything is given back; idempotent. */
  end(): void {
    this.stop();
    this.releaseSlot();
  }

  /** Ends the stream for a reason of the session's, which the transport says before it closes. */
  private endWith(end: StreamEnd): void {
    if (this.stopped) return;
    // The slot is given back as the transport closes (end()): until then the connection is still there.
    this.stop();
    this.transport.close(end);
  }

  private stop(): void {
    if (this.stopped) return;
    this.stopped = true;
    clearTimeout(this.recheck);
    this.subscription?.close();
    this.subscription = null;
  }

  /** Checks the token again every recheck period, and at its expiry. */
  private scheduleRecheck(expiresAt: number): void {
    clearTimeout(this.recheck);
    const delay = nextSessionCheckMs(expiresAt, this.settings.now(), this.settings.recheckMs);
    this.recheck = setTimeout(() => void this.recheckSession(), delay);
  }

  private async recheckSession(): Promise<void> {
    const { authorization, caller } = this;
    if (caller === null) return;
    let expiresAt = caller.expiresAt;
    try {
      expiresAt = (await this.settings.auth.authenticate(authorization)).expiresAt;
    } catch (error) {
      // Unknown, expired, revoked, or its user disabled: whatever the auth check refuses ends the stream,
      // unless a later login has replaced the token meanwhile (that one is checked on its own).
      if (endsSession(error)) {
        if (authorization === this.authorization) this.endWith({ why: 'session-ended', refusal: error });
        return;
      }
      // A database outage ends no stream: the token is checked again at the next period.
      this.logger.warn({ err: error }, 'stream session: could not check the token again');
    }
    if (!this.stopped && authorization === this.authorization) this.scheduleRecheck(expiresAt);
  }
}
