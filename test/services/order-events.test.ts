/**
 * The feed's hand-over of a live-only stream, over a repository and a horizon that stand in for the store's,
 * so that the poller's position can be set between a subscription and its start. The same promises over
 * real HTTP and both databases: test/http/events.test.ts, test/faults/failover.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { StreamCaps } from '../../src/domain/access/stream-limits.js';
import type { OrderEventRecord } from '../../src/domain/orders/order.js';
import { OrderStatus } from '../../src/domain/orders/status.js';
import { OrderEventsService, type OrderEventConsumer } from '../../src/services/order-events.js';
import type { EventHorizon, OrderEventRepository } from '../../src/store/orders/events.js';
import { storedOrder } from '../support/fixtures.js';

const CAPS: StreamCaps = {
  streamsPerUser: 10,
  streamsPerNode: 10,
  pendingSocketsPerNode: 10,
  pendingSocketsPerAddress: 10,
};

/** Row `historyId` of the user's order history: their event `eventId`. */
function eventRow(historyId: number, userId: string, eventId: number): OrderEventRecord {
  const order = storedOrder({ orderId: `o${historyId}`, userId });
  return {
    eventId,
    historyId,
    userId,
    order,
    change: {
      orderId: order.orderId,
      status: OrderStatus.PENDING,
      reason: '',
      quantity: order.quantity,
      pricePaise: order.pricePaise,
      tradedQuantity: 0,
      tradedPricePaise: null,
      at: 1,
      actor: 'oms',
      requestId: null,
    },
  };
}

/** The committed history rows, and a horizon the test moves by hand. */
class FakeStore {
  readonly rows: OrderEventRecord[] = [];
  horizonValue = 0;
  /** The history ids the poller has read. */
  readonly read = new Set<number>();
  private onRead: (() => void) | null = null;

  /** Resolves once the poller has read row `historyId`. */
  readOf(historyId: number): Promise<void> {
    return new Promise((resolve) => {
      const check = () => (this.read.has(historyId) ? resolve() : (this.onRead = check));
      check();
    });
  }

  readonly repository = {
    eventsBetween: async (afterId: number, upToId: number, limit: number) => {
      const rows = this.rows.filter((row) => row.historyId > afterId && row.historyId <= upToId).slice(0, limit);
      for (const row of rows) this.read.add(row.historyId);
      this.onRead?.();
      return rows;
    },
    userEventsBetween: async (userId: string, afterEventId: number, upToHistoryId: number, limit: number) =>
      this.rows
        .filter((row) => row.userId === userId && row.eventId > afterEventId && row.historyId <= upToHistoryId)
        .slice(0, limit),
    lastUserEvent: async (userId: string) =>
      Math.max(0, ...this.rows.filter((row) => row.userId === userId).map((row) => row.eventId)),
    lastUserEventThrough: async (userId: string, historyId: number) =>
      Math.max(
        0,
        ...this.rows.filter((row) => row.userId === userId && row.historyId <= historyId).map((row) => row.eventId),
      ),
  } as unknown as OrderEventRepository;

  readonly horizon = {
    get value(): number {
      return store.horizonValue;
    },
    advance: async () => store.horizonValue,
  } as unknown as EventHorizon;
}
let store: FakeStore;

/** A consumer that keeps the ids it was told to start after and the events it was sent. */
function recorder() {
  const got = { startsAfter: [] as number[], sent: [] as number[] };
  const consumer: OrderEventConsumer = {
    send: (event) => void got.sent.push(event.event_id),
    startsAfter: (eventId) => void got.startsAfter.push(eventId),
    drained: () => Promise.resolve(),
    close: () => undefined,
  };
  return { got, consumer };
}

/** Lets the poller's pending promises run (it sleeps pollMs between passes, woken by nothing here). */
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('the order-event feed, a live-only stream', () => {
  it('counts an event committed after the subscription as live, even when the poller passed it before the stream started', async () => {
    store = new FakeStore();
    store.rows.push(eventRow(1, 'u1', 1), eventRow(2, 'u2', 1));
    store.horizonValue = 2;
    const feed = new OrderEventsService(
      store.repository,
      () => store.horizon,
      { limits: CAPS, now: () => 0 },
      { pollMs: 1 },
    );
    try {
      const { got, consumer } = recorder();
      const subscription = await feed.subscribe('u1', undefined, consumer);
      // The stream's headers are out (the client takes it as live) and the client's bid commits: the user's
      // event 2, row 3. The poller reads it before the stream's start has asked where the user stands.
      store.rows.push(eventRow(3, 'u1', 2));
      store.horizonValue = 3;
      await store.readOf(3);
      await settle();
      await subscription.start();
      await settle();
      expect(got).toEqual({ startsAfter: [1], sent: [2] });
      subscription.close();
    } finally {
      await feed.close();
    }
  });
});
