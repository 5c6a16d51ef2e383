/**
 * The stream session both long-lived transports hold (the event stream and the live order socket), over a
 * feed and a transport that stand in for the real ones: it holds a slot of the caps until its stream closes,
 * ends the stream when its token is refused (at a re-check or by a logout the feed reports) or the server
 * shuts down, cuts off a client that does not read, and keeps or replaces its subscription as the socket's
 * logins require. The same promises over real HTTP and Socket.IO: test/http/events.test.ts,
 * test/http/stream-limits.test.ts, test/e2e/message-socket.test.ts.
 */
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError, Errors } from '../../src/domain/errors.js';
import type { Caller } from '../../src/services/auth.js';
import type { OrderEventConsumer } from '../../src/services/order-events.js';
import { StreamQuota } from '../../src/services/stream-quota.js';
import { StreamSessions, type StreamEnd, type StreamTransport } from '../../src/services/stream-session.js';
import type { OrderEvent } from '../../src/schemas/events.js';
import { testMember } from '../support/member-data.js';

const RECHECK_MS = 1_000;
const NOW = 1_000_000;
const CAPS = { streamsPerUser: 2, streamsPerNode: 10, pendingSocketsPerNode: 10, pendingSocketsPerAddress: 10 };

function callerOf(userId: string, token = `${userId}-token`, expiresAt = NOW + 60 * 60 * 1000): Caller {
  return { userId, category: 'RETAIL', member: testMember(userId), tokenHash: `hash-of-${token}`, expiresAt };
}

/** A feed that records its subscriptions: their consumers, and whether they were closed. */
class FakeFeed {
  readonly streams = new StreamQuota(CAPS);
  readonly subscriptions: { userId: string; consumer: OrderEventConsumer; closed: boolean }[] = [];
  refusal: Error | null = null;

  subscribe = async (userId: string, _lastEventId: number | undefined, consumer: OrderEventConsumer) => {
    if (this.refusal !== null) throw this.refusal;
    const subscription = { userId, consumer, closed: false };
    this.subscriptions.push(subscription);
    return { start: async () => {}, close: () => void (subscription.closed = true) };
  };

  get open() {
    return this.subscriptions.filter((subscription) => !subscription.closed);
  }
}

/** A transport that keeps what it was sent and how it was closed; `unreadNow` is what the client has not read. */
class FakeTransport implements StreamTransport {
  readonly sent: number[] = [];
  readonly ends: StreamEnd[] = [];
  readonly maxUnread = 3;
  unreadNow = 0;

  send(event: OrderEvent): void {
    this.sent.push(event.event_id);
    this.unreadNow += 1;
  }
  unread(): number {
    return this.unreadNow;
  }
  drained(): Promise<void> {
    return Promise.resolve();
  }
  close(end: StreamEnd): void {
    this.ends.push(end);
  }
}

const event = (eventId: number) => ({ event_id: eventId }) as OrderEvent;

describe('a stream session', () => {
  let feed: FakeFeed;
  let transport: FakeTransport;
  let authenticate: ReturnType<typeof vi.fn<(authorization: string | undefined) => Promise<Caller>>>;
  let sessions: StreamSessions;
  const logger = pino({ level: 'silent' });

  beforeEach(() => {
    vi.useFakeTimers({ now: NOW });
    feed = new FakeFeed();
    transport = new FakeTransport();
    authenticate = vi.fn(async () => callerOf('alice'));
    sessions = new StreamSessions({ feed, auth: { authenticate }, recheckMs: RECHECK_MS, now: () => Date.now() });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it("holds a slot of the node's and the user's caps from its opening until its stream closes, and gives it back if the subscription is refused", async () => {
    const session = sessions.open('alice', transport, logger);
    expect(feed.streams.usage().open).toBe(1);
    await session.subscribe(callerOf('alice'), 'Bearer alice-token');
    sessions.open('alice', new FakeTransport(), logger);
    expect(() => sessions.open('alice', new FakeTransport(), logger)).toThrow(
      expect.objectContaining({ kind: Errors.RATE_LIMITED }),
    );

    session.end();
    expect(feed.streams.usage().open).toBe(1);
    expect(feed.open).toEqual([]);

    feed.refusal = new ApiError(Errors.EVENT_ID_AHEAD, 'ahead');
    const refused = sessions.open('bob', transport, logger);
    await expect(refused.subscribe(callerOf('bob'), 'Bearer bob-token', 7)).rejects.toMatchObject({
      kind: Errors.EVENT_ID_AHEAD,
    });
    expect(refused.ended).toBe(true);
    expect(feed.streams.usage().open).toBe(1);
  });

  it('ends the stream when a re-check refuses the token, saying why; a database outage ends nothing', async () => {
    const session = sessions.open('alice', transport, logger);
    await session.subscribe(callerOf('alice'), 'Bearer alice-token');

    authenticate.mockRejectedValueOnce(new Error('connection refused'));
    await vi.advanceTimersByTimeAsync(RECHECK_MS);
    expect(authenticate).toHaveBeenCalledTimes(1);
    expect(transport.ends).toEqual([]);

    const expired = new ApiError(Errors.TOKEN_EXPIRED, 'expired');
    authenticate.mockRejectedValueOnce(expired);
    await vi.advanceTimersByTimeAsync(RECHECK_MS);
    expect(transport.ends).toEqual([{ why: 'session-ended', refusal: expired }]);
    expect(feed.open).toEqual([]);
    // The slot stays taken until the transport has closed.
    expect(feed.streams.usage().open).toBe(1);
    session.end();
    expect(feed.streams.usage().open).toBe(0);
    await vi.advanceTimersByTimeAsync(RECHECK_MS * 3);
    expect(authenticate).toHaveBeenCalledTimes(2);
  });

  it('checks the token at its expiry when that comes before the next period', async () => {
    const session = sessions.open('alice', transport, logger);
    await session.subscribe(callerOf('alice', 'short', NOW + 100), 'Bearer short');
    await vi.advanceTimersByTimeAsync(101);
    expect(authenticate).toHaveBeenCalledWith('Bearer short');
  });

  it('ends at once when the feed reports its token revoked or its user disabled, not for another token', async () => {
    await sessions.open('alice', transport, logger).subscribe(callerOf('alice'), 'Bearer alice-token');
    const { consumer } = feed.subscriptions[0]!;
    consumer.sessionsEnded?.({ tokenHashes: new Set(['hash-of-other']), userDisabled: false });
    expect(transport.ends).toEqual([]);
    consumer.sessionsEnded?.({ tokenHashes: new Set(['hash-of-alice-token']), userDisabled: false });
    consumer.sessionsEnded?.({ tokenHashes: new Set(), userDisabled: true });
    expect(transport.ends).toEqual([
      { why: 'session-ended', refusal: expect.objectContaining({ kind: Errors.TOKEN_REVOKED }) },
    ]);

    const disabled = new FakeTransport();
    await sessions.open('alice', disabled, logger).subscribe(callerOf('alice'), 'Bearer alice-token');
    feed.subscriptions[1]!.consumer.sessionsEnded?.({ tokenHashes: new Set(), userDisabled: true });
    expect(disabled.ends).toHaveLength(1);
  });

  it('says the server is shutting down when the feed closes', async () => {
    await sessions.open('alice', transport, logger).subscribe(callerOf('alice'), 'Bearer alice-token');
    feed.subscriptions[0]!.consumer.close();
    expect(transport.ends).toEqual([{ why: 'shutdown' }]);
  });

  it('cuts off a client that lets more than the transport takes pile up unread, whatever was sent, and sends it nothing more', async () => {
    const session = sessions.open('alice', transport, logger);
    await session.subscribe(callerOf('alice'), 'Bearer alice-token');
    const { consumer } = feed.subscriptions[0]!;
    for (const id of [1, 2, 3]) consumer.send(event(id));
    expect(transport.ends).toEqual([]);
    consumer.send(event(4));
    consumer.send(event(5));
    expect(transport.sent).toEqual([1, 2, 3, 4]);
    expect(transport.ends).toEqual([{ why: 'unread' }]);

    const other = new FakeTransport();
    const indicative = sessions.open('bob', other, logger);
    other.unreadNow = 4;
    indicative.checkUnread();
    expect(other.ends).toEqual([{ why: 'unread' }]);
  });

  it("on a connection's slot (the socket): counted for its user from the login, kept for a new token of the same user, moved for another user", async () => {
    const slot = feed.streams.openPending('127.0.0.1');
    const session = sessions.attach(slot, transport, logger);
    expect(feed.streams.usage()).toMatchObject({ open: 0, pending: 1 });

    await session.subscribe(callerOf('alice'), 'Bearer alice-token');
    expect(feed.streams.usage()).toMatchObject({ open: 1, pending: 0 });
    await session.subscribe(callerOf('alice', 'second'), 'Bearer second');
    expect(feed.subscriptions).toHaveLength(1);
    expect(session.userId).toBe('alice');

    await session.subscribe(callerOf('bob'), 'Bearer bob-token');
    expect(feed.open.map((subscription) => subscription.userId)).toEqual(['bob']);
    expect(session.userId).toBe('bob');
    // The new token is the one checked from then on.
    authenticate.mockResolvedValue(callerOf('bob'));
    await vi.advanceTimersByTimeAsync(RECHECK_MS);
    expect(authenticate).toHaveBeenLastCalledWith('Bearer bob-token');

    // The connection gives its slot back as it closes, not the session.
    session.end();
    expect(feed.open).toEqual([]);
    expect(feed.streams.usage().open).toBe(1);
    slot.release();
    expect(feed.streams.usage().open).toBe(0);
  });
});
