/**
 * An OMS test bench over a real SQLite file: a movable clock, users and an OFS issue, orders written as
 * order entry writes them (OMSXMITTED + outbox PLACE), modification and cancellation requests written as
 * the API writes them (contract: order row changed in place, history, outbox MODIFY / CANCEL), workers and
 * the simulated exchange over the same file, and readers for what the tests check.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import pino, { type Logger } from 'pino';
import type { OfsIssue } from '../../src/domain/ofs/issue/issue.js';
import type { BidTerms } from '../../src/domain/ofs/rules.js';
import type { ExchangeAdapter, ExchangeBid } from '../../src/oms/exchange.js';
import type { SimulatedExchange } from '../../src/oms/simulated-exchange.js';
import type { OmsWorker } from '../../src/oms/worker.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { ACCEPTED_REASON, acceptedOrder, type NewOrder, type Order } from '../../src/domain/orders/order.js';
import { OrderRepository, type OrderRow } from '../../src/store/orders/orders.js';
import type { BidderCategory } from '../../src/domain/ofs/rules.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createOmsWorker, createSimulatedExchange } from '../../src/wiring.js';
import { createMigratedTestDatabase } from '../support/databases.js';
import { sbinIssue } from '../support/fixtures.js';
import { testMemberData } from '../support/member-data.js';

export const HOUR = 60 * 60 * 1000;

const uuidShaped = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-7${hex.slice(13, 16)}-8${hex.slice(17, 20)}-${hex.slice(20, 32)}`;

/** What order entry stores of a test user's member data on each of their orders. */
function memberOfOrder(userId: string) {
  const { ucc, pan, clientType, custodianCode } = testMemberData(userId);
  return { ucc, pan, clientType, custodianCode };
}
/** A fixed start instant, so that reasons with instants are predictable. */
export const T0 = Date.parse('2026-11-23T05:00:00Z');

/**
 * NSE_EQ 500112 SBIN OF, floor 100.00, tick 0.05, cut-off 101.00, offer 1000 (10% retail), proportionate.
 * Both windows are open at T0; the non-retail one closes an hour later, the retail one two hours later.
 */
export function testIssue(overrides: Partial<OfsIssue> = {}): OfsIssue {
  return sbinIssue({
    offerQuantity: 1000,
    nonRetailOpensAt: T0 - HOUR,
    nonRetailClosesAt: T0 + HOUR,
    retailOpensAt: T0 - HOUR,
    retailClosesAt: T0 + 2 * HOUR,
    ...overrides,
  });
}

export interface BidSpec {
  userId?: string;
  category?: BidderCategory;
  orderType?: 'RL' | 'RL-MKT';
  pricePaise?: number;
  quantity?: number;
  exchange?: string;
  scripToken?: number;
}

export interface HistoryEntry {
  status: string;
  reason: string;
  quantity: number;
  price_paise: number;
  traded_quantity: number;
  at: number;
}

/** A logger that keeps its lines, so that tests can see what was reported. */
export function recordingLogger(): {
  logger: Logger;
  lines: () => { level: number; msg: string; [key: string]: unknown }[];
} {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk, _encoding, done) {
      lines.push(
        ...String(chunk)
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  return { logger: pino({ level: 'debug' }, sink), lines: () => lines.map((line) => JSON.parse(line)) };
}

type Method = 'find' | 'place' | 'modify' | 'cancel' | 'carryForward' | 'pollEvents' | 'acknowledge';

/** A promise that never settles: the process died at this point, nothing after it runs. */
export const crash = (): Promise<never> => new Promise<never>(() => undefined);

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * An exchange adapter around another that records every call (method and order id) and lets a test act
 * before or after a call: delay it, fail it, or crash (never settle) at that point.
 */
export class ObservedExchange implements ExchangeAdapter {
  readonly calls: { method: Method; orderId: string | null }[] = [];

  constructor(
    private readonly inner: ExchangeAdapter,
    private readonly hooks: {
      before?: (method: Method, orderId: string | null) => Promise<void> | void;
      after?: (method: Method, orderId: string | null) => Promise<void> | void;
    } = {},
  ) {}

  count(method: Method, orderId?: string): number {
    return this.calls.filter((call) => call.method === method && (orderId === undefined || call.orderId === orderId))
      .length;
  }

  private async call<T>(method: Method, orderId: string | null, run: () => Promise<T>): Promise<T> {
    this.calls.push({ method, orderId });
    await this.hooks.before?.(method, orderId);
    const result = await run();
    await this.hooks.after?.(method, orderId);
    return result;
  }

  /** A batch call: recorded, and its hooks run, once per order. */
  private async callEach<T>(method: Method, orderIds: readonly string[], run: () => Promise<T>): Promise<T> {
    for (const orderId of orderIds) this.calls.push({ method, orderId });
    for (const orderId of orderIds) await this.hooks.before?.(method, orderId);
    const result = await run();
    for (const orderId of orderIds) await this.hooks.after?.(method, orderId);
    return result;
  }

  findBids(orderIds: readonly string[]) {
    return this.callEach('find', orderIds, () => this.inner.findBids(orderIds));
  }
  placeBids(bids: readonly ExchangeBid[]) {
    return this.callEach(
      'place',
      bids.map((bid) => bid.orderId),
      () => this.inner.placeBids(bids),
    );
  }
  modify(bid: ExchangeBid, terms: BidTerms) {
    return this.call('modify', bid.orderId, () => this.inner.modify(bid, terms));
  }
  cancel(bid: ExchangeBid) {
    return this.call('cancel', bid.orderId, () => this.inner.cancel(bid));
  }
  carryForward(bid: ExchangeBid, terms: BidTerms) {
    return this.call('carryForward', bid.orderId, () => this.inner.carryForward(bid, terms));
  }
  pollEvents(skip?: Pick<ReadonlySet<string>, 'has'>) {
    return this.call('pollEvents', null, () => this.inner.pollEvents(skip));
  }
  acknowledge(eventIds: readonly string[]) {
    return this.call('acknowledge', null, () => this.inner.acknowledge(eventIds));
  }
  // The exchange's own passes (its allotments) go on as the inner exchange's, unobserved.
  start() {
    this.inner.start?.();
  }
  async stop() {
    await this.inner.stop?.();
  }
  async runOnce() {
    await this.inner.runOnce?.();
  }
  async ready() {
    return (await this.inner.ready?.()) ?? true;
  }
  health() {
    return this.inner.health?.() ?? [];
  }
}

export class OmsBench {
  readonly clock = { now: T0 };
  readonly now = () => this.clock.now;
  readonly log = recordingLogger();
  private orderCount = 0;
  private workerCount = 0;

  private constructor(
    readonly databaseUrl: string,
    readonly store: Store,
    private readonly dispose: () => Promise<void>,
  ) {}

  /**
   * Over a new database of the run's dialect (test/support/databases.ts): the same tests check SQLite
   * and PostgreSQL.
   */
  static async open(): Promise<OmsBench> {
    const { databaseUrl, dispose } = await createMigratedTestDatabase('ordergate_oms');
    const store = openStore(databaseUrl);
    await migrateToLatest(store);
    const bench = new OmsBench(databaseUrl, store, dispose);
    const users = new UserRepository(store.db, store.dialect);
    for (const [userId, category] of [
      ['retail1', 'RETAIL'],
      ['retail2', 'RETAIL'],
      ['inst1', 'NON_RETAIL'],
      ['inst2', 'NON_RETAIL'],
    ] as const) {
      await users.create({
        userId,
        passwordHash: 'not-used',
        category,
        totpSecret: null,
        now: T0,
        member: testMemberData(userId),
      });
    }
    await bench.registerIssue();
    return bench;
  }

  async registerIssue(overrides: Partial<OfsIssue> = {}): Promise<OfsIssue> {
    const issue = testIssue(overrides);
    await new OfsIssueRepository(this.store.db).upsert([issue], this.clock.now);
    return issue;
  }

  /** An accepted order, exactly as order entry stores it; answers its id. */
  async placeOrder(spec: BidSpec = {}): Promise<string> {
    const category = spec.category ?? (spec.userId?.startsWith('inst') ? 'NON_RETAIL' : 'RETAIL');
    const order: NewOrder = {
      // Ids that do not sort in placement order, so that no test passes by sorting on them.
      // UUID-shaped, as order entry's are: a link writes the id as a reference of 32 hexadecimal characters.
      orderId: uuidShaped(createHash('sha256').update(String(++this.orderCount)).digest('hex')),
      userId: spec.userId ?? (category === 'RETAIL' ? 'retail1' : 'inst1'),
      exchange: spec.exchange ?? 'NSE_EQ',
      scripToken: spec.scripToken ?? 500112,
      symbol: 'SBIN',
      series: 'OF',
      transactionType: 'BUY',
      productType: 'OFS',
      orderType: spec.orderType ?? (spec.pricePaise === 0 ? 'RL-MKT' : 'RL'),
      quantity: spec.quantity ?? 10,
      pricePaise: spec.pricePaise ?? 10_150,
      disclosedQuantity: 0,
      orderIdentifier: null,
      algoId: null,
      strategyId: null,
      partCode: null,
      venderCode: null,
      requestId: null,
      category,
      offerId: null,
      offerCategory: null,
      marginType: null,
      ...memberOfOrder(spec.userId ?? (category === 'RETAIL' ? 'retail1' : 'inst1')),
    };
    const now = this.clock.now;
    await this.store.writeTransaction((tx) =>
      this.orders.apply(
        tx,
        [
          {
            before: null,
            after: acceptedOrder(order, now),
            reason: ACCEPTED_REASON,
            origin: { actor: order.userId, requestId: null },
            outbox: 'PLACE',
          },
        ],
        now,
      ),
    );
    return order.orderId;
  }

  /** A modification request as the API records it. */
  async requestModification(
    orderId: string,
    terms: { orderType?: string; quantity: number; pricePaise: number },
  ): Promise<void> {
    await this.changeAsTheApi(orderId, 'Modification requested: test', 'MODIFY', (order, now) => ({
      ...order,
      orderType: terms.orderType ?? 'RL',
      quantity: terms.quantity,
      pricePaise: terms.pricePaise,
      updatedAt: now,
    }));
  }

  /** A cancellation request as the API records it. */
  async requestCancellation(orderId: string): Promise<void> {
    await this.changeAsTheApi(orderId, 'Cancellation requested by the user', 'CANCEL', (order, now) => ({
      ...order,
      cancelRequestedAt: now,
      updatedAt: now,
    }));
  }

  private get orders(): OrderRepository {
    return new OrderRepository(this.store.db, this.store.dialect);
  }

  private async changeAsTheApi(
    orderId: string,
    reason: string,
    outbox: 'MODIFY' | 'CANCEL',
    change: (order: Order, now: number) => Order,
  ): Promise<void> {
    const now = this.clock.now;
    await this.store.writeTransaction(async (tx) => {
      const order = (await this.orders.lockOrders(tx, [orderId])).get(orderId)!;
      await this.orders.apply(
        tx,
        [
          {
            before: order,
            after: change(order, now),
            reason,
            origin: { actor: order.userId, requestId: null },
            outbox,
          },
        ],
        now,
      );
    });
  }

  exchange(store: Store = this.store): SimulatedExchange {
    return createSimulatedExchange(store, this.now);
  }

  worker(
    options: { exchange?: ExchangeAdapter; workerId?: string; store?: Store; pollMs?: number; batchSize?: number } = {},
  ): OmsWorker {
    return createOmsWorker(options.store ?? this.store, {
      logger: this.log.logger,
      now: this.now,
      workerId: options.workerId ?? `test-worker-${++this.workerCount}`,
      ...(options.exchange && { exchange: options.exchange }),
      ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
      ...(options.batchSize !== undefined && { batchSize: options.batchSize }),
    });
  }

  async order(orderId: string): Promise<OrderRow> {
    return this.store.db.selectFrom('orders').selectAll().where('order_id', '=', orderId).executeTakeFirstOrThrow();
  }

  async status(orderId: string): Promise<string> {
    return (await this.order(orderId)).status;
  }

  async history(orderId: string): Promise<HistoryEntry[]> {
    const rows = await this.store.db
      .selectFrom('order_history')
      .select(['status', 'reason', 'quantity', 'price_paise', 'traded_quantity', 'at'])
      .where('order_id', '=', orderId)
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      ...row,
      quantity: Number(row.quantity),
      price_paise: Number(row.price_paise),
      traded_quantity: Number(row.traded_quantity),
      at: Number(row.at),
    }));
  }

  async statusTrail(orderId: string): Promise<string[]> {
    return (await this.history(orderId)).map((entry) => entry.status);
  }

  /** The exchange's book entry for the order, straight from its table. */
  async exchangeBid(orderId: string) {
    const row = await this.store.db
      .selectFrom('sim_exchange_bids')
      .selectAll()
      .where('order_id', '=', orderId)
      .executeTakeFirst();
    return (
      row && {
        ...row,
        quantity: Number(row.quantity),
        price_paise: Number(row.price_paise),
        transmissions: Number(row.transmissions),
      }
    );
  }

  async openOutbox(): Promise<number> {
    const rows = await this.store.db.selectFrom('outbox').select('id').where('done_at', 'is', null).execute();
    return rows.length;
  }

  async events() {
    return this.store.db.selectFrom('sim_exchange_events').selectAll().orderBy('id').execute();
  }

  /** Error lines the workers logged. */
  errors() {
    return this.log.lines().filter((line) => line.level >= 50);
  }

  async close(): Promise<void> {
    await this.store.close();
    await this.dispose();
  }
}
