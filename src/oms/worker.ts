/**
 * The OMS worker: takes the outbox entries (PLACE, MODIFY, CANCEL) in commit order, runs the OMS risk
 * check, talks to the exchange adapter, and applies the exchange's allocation events. Every change goes
 * through OrderRepository.apply, which writes the order's history.
 *
 * This file does the I/O: it reads and locks the orders (and the funds accounts), calls the exchange and
 * applies the changes. The outbox loop (passes, leases, back-off) is outbox-loop.ts; what becomes of an
 * order at each step is decided by the pure functions of transitions.ts, and what it blocks of its
 * bidder's funds by src/domain/funds/blocking.ts.
 *
 * Placements go in batches: the whole batch is admitted (EXXMITTED) in one commit, sent to the exchange in
 * one call, and settled (PENDING or ORDERERROR, with its outbox entries done) in one more commit. With an
 * exchange whose book is in our database and that answers at once (the simulated exchange), the three are
 * one transaction, one commit (placeAtOnce).
 *
 * Crash safety. An entry is marked done only after its work has committed (see outbox-loop.ts). A placement
 * in two steps commits EXXMITTED before it calls the exchange, and an EXXMITTED order is always looked up
 * at the exchange (find) before it is placed: if the exchange already has it, it is not sent again. (In
 * one transaction, the exchange's book commits with the orders, or neither does.) Status changes
 * are made only from the status the worker expects (the order row is locked in that status first), so a
 * step repeated after a crash, or an event delivered twice, changes nothing the second time.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { availablePaise } from '../domain/funds/funds.js';
import { blockFollowsTerms, blockToRaisePaise } from '../domain/funds/blocking.js';
import type { BidTerms, IssuePrices } from '../domain/ofs/rules.js';
import type { Order, OrderChange } from '../domain/orders/order.js';
import { OrderStatus } from '../domain/orders/status.js';
import type { ExchangeOperation, ExchangeOutcome, OmsMetrics } from '../metrics/operator-metrics.js';
import type { Store } from '../store/sql/database.js';
import type { FundsRepository } from '../store/funds/funds.js';
import type { OfsIssueRepository } from '../store/ofs/issues.js';
import type { OfsOfferRepository } from '../store/ofs/offers.js';
import type { OmsRepository, OutboxEntry } from '../store/orders/outbox.js';
import type { OrderRepository } from '../store/orders/orders.js';
import type { StoreTx } from '../store/sql/write-tx.js';
import {
  ExchangeUnavailableError,
  heldTerms,
  type ChangeAnswer,
  type ChangeResult,
  type ExchangeAdapter,
  type ExchangeBid,
  type ExchangeEvent,
  type ExchangeOrder,
  type PlaceAnswer,
  type PlaceResult,
  type Unanswered,
} from './exchange.js';
import type { InstrumentGuard } from './instrument-guard.js';
import { instrumentReader } from './instrument-reader.js';
import { instrumentOfOrder } from '../domain/ofs/instrument-keys.js';
import { NO_HOLIDAYS } from '../domain/ofs/trading-calendar.js';
import type { TradingHolidayRepository } from '../store/ofs/trading-holidays.js';
import { DatabaseUnavailableError } from '../domain/errors.js';
import { OutboxLoop, yieldToEventLoop, type BatchLease } from './outbox-loop.js';
import {
  admit,
  applyEvents,
  awaitingExchange,
  bidOf,
  cancellationAnswered,
  cancellationNotPossible,
  carryForwardAnswered,
  carryForwardRefusedForFunds,
  isAtExchange,
  modificationRefused,
  modified,
  raiseBlock,
  settle,
  termsOf,
  toTransmit,
  type DeliveredEvent,
  type ModificationRefusal,
  type Placement,
} from './transitions.js';

export { DEFAULT_BATCH_SIZE, DEFAULT_LEASE_MS, DEFAULT_POLL_MS, MAX_RETRY_DELAY_MS } from './outbox-loop.js';

/** The orders whose waiting this worker remembers having noted (see waitingNoted). */
const MAX_WAITING_NOTED = 100_000;

export interface OmsWorkerOptions {
  store: Pick<Store, 'writeTransaction'>;
  orders: OrderRepository;
  issues: OfsIssueRepository;
  /** The offers (docs/design/ofs.md): bids on their listings are judged by the offer's rules. */
  offers: OfsOfferRepository;
  oms: OmsRepository;
  /** The bidders' funds accounts, locked while a bid's funds are judged. */
  funds: FundsRepository;
  exchange: ExchangeAdapter;
  now: () => number;
  logger: Logger;
  /** Names the worker in outbox leases; unique per worker by default, and must stay so (see OutboxLoopOptions.workerId). */
  workerId?: string;
  /** The pause between two passes of the loop. */
  pollMs?: number;
  /** How long a claimed outbox entry stays with this worker before another may take it. */
  leaseMs?: number;
  /** Outbox entries claimed at once; their status changes share one commit. */
  batchSize?: number;
  /** Where its exchange calls and failed passes are counted (the operator's metrics). */
  metrics?: OmsMetrics;
  /** Keeps each instrument's work apart (instrument-guard.ts); the simulated exchange shares it. */
  guard: InstrumentGuard;
  /** The exchanges' holidays: an offer's allotments settle on trading days. */
  holidays: Pick<TradingHolidayRepository, 'calendar'>;
}

export class OmsWorker {
  readonly workerId: string;
  private readonly loop: OutboxLoop;

  constructor(private readonly options: OmsWorkerOptions) {
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    const { oms, now, logger, pollMs, leaseMs, batchSize, metrics } = options;
    this.loop = new OutboxLoop(
      { oms, now, logger, workerId: this.workerId, pollMs, leaseMs, batchSize, metrics },
      {
        processBatch: (batch, lease) => this.processBatch(batch, lease),
        afterOutbox: (stopping) => this.processEvents(stopping),
        mayClaim: async () => (await options.exchange.ready?.()) ?? true,
      },
    );
  }

  /** Runs passes every pollMs until stop(), and the exchange's own (exchange.ts). */
  start(): void {
    this.options.exchange.start?.();
    this.loop.start();
  }

  /** Stops the loop; resolves once the batch under way has finished (the rest waits for the next start). */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.options.exchange.stop?.();
  }

  /** Work may have arrived: an idle loop passes within pollMs (OutboxLoop.wake). */
  wake(): void {
    this.loop.wake();
  }

  /**
   * One turn of the whole market, at the caller's word (the tests): the
   * OMS sends what is due, the exchange takes its own step (its allotments, exchange.ts), and the OMS
   * applies what the exchange answered. Answers how many outbox entries and events it handled. Runs after
   * the pass under way, never beside it. A started worker's passes leave the exchange to its own.
   */
  runOnce(): Promise<number> {
    const { exchange } = this.options;
    return this.loop.runOnce(exchange.runOnce && (() => exchange.runOnce!()));
  }

  /**
   * Changes orders in one transaction: locks them (on PostgreSQL in the order of their ids, as order entry
   * does), lets `decide` say what becomes of each, and applies the changes.
   */
  private changeOrders(
    orderIds: readonly string[],
    decide: (orders: Map<string, Order>, at: number, tx: StoreTx) => Promise<OrderChange[]> | OrderChange[],
    after?: (tx: StoreTx) => Promise<void>,
  ): Promise<void> {
    const { store, orders, now } = this.options;
    return store.writeTransaction(async (tx) => {
      const locked = await orders.lockOrders(tx, orderIds);
      const at = now();
      await orders.apply(tx, await decide(locked, at, tx), at);
      await after?.(tx);
    });
  }

  /** One call to the exchange, timed and counted by operation and outcome; `refused` tells a "not done" answer. */
  private async callExchange<T>(
    operation: ExchangeOperation,
    call: () => Promise<T>,
    outcomeOf: (answer: T) => ExchangeOutcome = () => 'ok',
  ): Promise<T> {
    const metrics = this.options.metrics;
    if (metrics === undefined) return call();
    const started = performance.now();
    let answer: T;
    try {
      answer = await call();
    } catch (error) {
      metrics.exchangeCall(operation, 'error', (performance.now() - started) / 1000);
      throw error;
    }
    metrics.exchangeCall(operation, outcomeOf(answer), (performance.now() - started) / 1000);
    return answer;
  }

  /** Placements the exchange left unanswered whose orders' history says so already (one line per wait). */
  private readonly waitingNoted = new Set<string>();

  /** A claimed batch of outbox entries: its placements all at once, then the rest one by one. */
  private async processBatch(batch: readonly OutboxEntry[], lease: BatchLease): Promise<number> {
    // Placements mark their entries done with their last commit; the others here.
    const placed = await this.placeAll(
      batch.filter((entry) => entry.action === 'PLACE'),
      lease,
    );
    const done = await this.processEach(
      batch.filter((entry) => entry.action !== 'PLACE'),
      lease,
    );
    await lease.complete(done);
    return placed + done.length;
  }

  /**
   * PLACE: OMSXMITTED -> risk check -> EXXMITTED (committed) -> the exchange -> PENDING or ORDERERROR, for
   * the whole batch at once. Answers how many entries it finished (marked done with the last commit).
   */
  private async placeAll(entries: readonly OutboxEntry[], lease: BatchLease): Promise<number> {
    if (entries.length === 0) return 0;
    const { exchange } = this.options;
    if (exchange.placeBidsInTransaction !== undefined)
      return this.placeAtOnce(entries, lease, exchange.placeBidsInTransaction.bind(exchange));
    const orderIds = entries.map((entry) => entry.orderId);
    let toSend: Order[] = [];
    // Orders EXXMITTED before this pass: they may be at the exchange already.
    const resumed = new Set<string>();
    try {
      await this.changeOrders(orderIds, async (locked, at, tx) => {
        const changes = await this.admit(tx, orderIds, locked, at);
        toSend = toTransmit(orderIds, locked, changes);
        for (const order of toSend)
          if (locked.get(order.orderId)?.status === OrderStatus.EXXMITTED) resumed.add(order.orderId);
        return changes;
      });
    } catch (error) {
      await lease.fail(entries, error);
      return 0;
    }

    // EXXMITTED is committed: from here a crash leaves orders that may or may not be at the exchange, and
    // each is looked up there before it is sent. Each step is a slice of its own for the event loop (SQLite
    // blocks it while a transaction runs).
    const answers = new Map<string, PlaceAnswer>();
    const unanswered = new Map<string, Unanswered>();
    try {
      await yieldToEventLoop();
      // The exchange's book is read for those only: a bid admitted by this pass cannot be there. A book the
      // exchange does not answer leaves them waiting (never sent unread); the new bids go on.
      let known = new Map<string, ExchangeOrder>();
      if (resumed.size > 0) {
        try {
          known = await this.callExchange('find_bids', () => exchange.findBids([...resumed]));
        } catch (error) {
          if (!(error instanceof ExchangeUnavailableError)) throw error;
          for (const orderId of resumed) unanswered.set(orderId, error.unanswered);
        }
      }
      for (const [orderId, bid] of known) {
        if (bid.status === 'AWAITED') unanswered.set(orderId, bid.unanswered);
        else
          answers.set(
            orderId,
            bid.status === 'REFUSED'
              ? { accepted: false, reason: bid.reason }
              : { accepted: true, exchangeOrderId: bid.exchangeOrderId },
          );
      }
      const unsent = toSend.filter((order) => !known.has(order.orderId) && !unanswered.has(order.orderId));
      const results = await this.callExchange(
        'place_bids',
        () => exchange.placeBids(unsent.map(bidOf)),
        (answer) => (answer.some((result) => result.accepted === null) ? 'unanswered' : 'ok'),
      );
      unsent.forEach((order, i) => {
        const result = results[i]!;
        if (result.accepted === null) unanswered.set(order.orderId, result);
        else answers.set(order.orderId, result);
      });
    } catch (error) {
      await lease.fail(entries, error);
      return 0;
    }

    // Entries of bids the exchange did not answer wait for its back-off, their orders EXXMITTED (the next
    // pass reads the exchange's book for them first); the rest are done with their answers.
    await yieldToEventLoop();
    const waiting = entries.filter((entry) => unanswered.has(entry.orderId));
    const toNote = [...unanswered].filter(([orderId]) => !this.waitingNoted.has(orderId));
    const finished = await this.finishPlacements(
      entries.filter((entry) => !unanswered.has(entry.orderId)),
      lease,
      [...answers.keys(), ...toNote.map(([orderId]) => orderId)],
      (locked, at) => [
        ...[...answers].flatMap(([orderId, result]) => settle(locked.get(orderId), result, at)),
        ...toNote.flatMap(([orderId, result]) => awaitingExchange(locked.get(orderId), result)),
      ],
    );
    for (const orderId of answers.keys()) this.waitingNoted.delete(orderId);
    // Orders another node settles are never deleted here: the set is dropped now and then (the cost: a
    // waiting order's note written once more).
    if (this.waitingNoted.size > MAX_WAITING_NOTED) this.waitingNoted.clear();
    for (const [orderId] of toNote) this.waitingNoted.add(orderId);
    // Each waits its own back-off: a lost answer's (long enough for a bid on its way to reach the book)
    // is never cut short by a refused connection's beside it.
    const byDelay = new Map<number, OutboxEntry[]>();
    for (const entry of waiting) {
      const delayMs = unanswered.get(entry.orderId)!.retryAfterMs;
      byDelay.set(delayMs, [...(byDelay.get(delayMs) ?? []), entry]);
    }
    for (const [delayMs, group] of byDelay) await lease.defer(group, delayMs, unanswered.get(group[0]!.orderId)!.why);
    return finished;
  }

  /**
   * PLACE with an exchange that takes the bids inside our transaction (exchange.ts): the batch admitted,
   * placed and settled, and its entries done, in one commit. The orders pass through EXXMITTED all the
   * same (its history row says what the OMS sent), but nothing is committed in between: a failure or a
   * crash leaves the batch as it was, to be taken again, and the exchange's book with it.
   */
  private async placeAtOnce(
    entries: readonly OutboxEntry[],
    lease: BatchLease,
    place: (tx: StoreTx, bids: readonly ExchangeBid[]) => Promise<PlaceResult[]>,
  ): Promise<number> {
    const orderIds = entries.map((entry) => entry.orderId);
    return this.finishPlacements(entries, lease, orderIds, async (locked, at, tx) => {
      const admission = await this.admit(tx, orderIds, locked, at);
      // Admitted now, or EXXMITTED by a two-step placement that failed after its admission.
      const toSend = toTransmit(orderIds, locked, admission);
      const results = await this.callExchange('place_bids', () => place(tx, toSend.map(bidOf)));
      return [...admission, ...toSend.flatMap((order, i) => settle(order, answered(results[i]!), at))];
    });
  }

  /**
   * A placement batch's last transaction: the orders' changes, and the batch's entries done with them.
   * Answers how many entries it finished: all, or none (the transaction failed, and the entries are
   * released to be taken again).
   */
  private async finishPlacements(
    entries: readonly OutboxEntry[],
    lease: BatchLease,
    orderIds: readonly string[],
    decide: (orders: Map<string, Order>, at: number, tx: StoreTx) => Promise<OrderChange[]> | OrderChange[],
  ): Promise<number> {
    try {
      await this.changeOrders(orderIds, decide, (tx) =>
        lease.complete(
          entries.map((entry) => entry.id),
          tx,
        ),
      );
    } catch (error) {
      await lease.fail(entries, error);
      return 0;
    }
    return entries.length;
  }

  /**
   * Reads what the risk check and the funds of placements need, then admits them (transitions.ts): their
   * listings, and their bidders' funds accounts, locked until the commit, so that bids on any node never
   * block more than there is.
   */
  private async admit(
    tx: StoreTx,
    orderIds: readonly string[],
    locked: Map<string, Order>,
    at: number,
  ): Promise<OrderChange[]> {
    const instrumentOf = instrumentReader(this.options.issues, this.options.offers, tx);
    const pending = orderIds.flatMap((orderId) => {
      const order = locked.get(orderId);
      // Any other status means it is past this step.
      return order?.status === OrderStatus.OMSXMITTED ? [order] : [];
    });
    const accounts = await this.options.funds.lockAccounts(tx, [...new Set(pending.map((order) => order.userId))]);
    const placements: Placement[] = [];
    for (const order of pending) {
      placements.push({ order, risk: (await instrumentOf(order)).risk(order, at) });
    }
    return admit(placements, new Map([...accounts].map(([userId, account]) => [userId, availablePaise(account)])), at);
  }

  /** MODIFY and CANCEL, one by one; answers the ids of the entries it finished. */
  private async processEach(entries: readonly OutboxEntry[], lease: BatchLease): Promise<number[]> {
    const done: number[] = [];
    for (const entry of entries) {
      await yieldToEventLoop();
      try {
        if (entry.action === 'MODIFY') await this.modify(entry);
        else if (entry.action === 'CANCEL') await this.cancel(entry.orderId);
        else if (entry.action === 'CARRY_FORWARD') await this.carryForward(entry.orderId);
        else throw new Error(`unknown outbox action ${String(entry.action)}`);
        done.push(entry.id);
      } catch (error) {
        if (error instanceof UnansweredError || error instanceof ExchangeUnavailableError)
          await lease.defer([entry], error.unanswered.retryAfterMs, error.message);
        else await lease.fail([entry], error);
      }
    }
    return done;
  }

  /**
   * Sends the order's new terms (already on the order row) to the exchange, or restores the exchange's. A
   * funds-checked bid goes with its new terms only once the funds they need are blocked; the block follows
   * the terms the exchange holds once it has answered.
   */
  private async modify(entry: OutboxEntry): Promise<void> {
    const { orders, oms, exchange } = this.options;
    const order = await orders.find(entry.orderId);
    if (order === undefined) return;
    const refusal = await this.sendModification(order);
    if (refusal === null) return;
    const held = heldTerms(
      (await this.callExchange('find_bids', () => exchange.findBids([order.orderId]))).get(order.orderId),
    );
    // A later modification carries the user's latest terms: restoring would undo it before it is sent.
    const restored = held !== undefined && !(await oms.hasLaterModify(order.orderId, entry.id)) ? held : undefined;
    // Refused, but the exchange holds the new terms: a modification sent again after a lost answer, which the
    // first had made. It is done.
    const terms = termsOf(order);
    const madeBefore =
      refusal.refusedBy === 'exchange' &&
      held !== undefined &&
      held.status === 'LIVE' &&
      held.orderType === terms.orderType &&
      held.pricePaise === terms.pricePaise &&
      held.quantity === terms.quantity;
    await this.changeOrders([order.orderId], async (locked, at, tx) => {
      const current = locked.get(order.orderId);
      if (current === undefined) return [];
      if (madeBefore) return modified(current, terms, await this.blockPricesOf(tx, current), at);
      return modificationRefused(
        current,
        refusal,
        restored && { terms: restored, prices: await this.blockPricesOf(tx, current) },
        at,
      );
    });
  }

  /**
   * Gets the order's terms to the exchange: the OMS refuses when the order is no longer there or the funds
   * the terms need cannot be blocked, the exchange when it will not take them. Answers the refusal, or null:
   * done, and the order's block follows the new terms.
   */
  private async sendModification(order: Order): Promise<ModificationRefusal | null> {
    if (!isAtExchange(order)) return { refusedBy: 'status', status: order.status };
    const terms = termsOf(order);
    const shortfall = order.fundsBlockedPaise === null ? null : await this.blockFor(order.orderId, terms);
    if (shortfall !== null) return { refusedBy: 'funds', shortfall };
    const result = answeredChange(
      await this.callExchange('modify', () => this.options.exchange.modify(bidOf(order), terms), changeOutcome),
    );
    if (!result.done) return { refusedBy: 'exchange', reason: result.reason };
    await this.changeOrders([order.orderId], async (locked, at, tx) => {
      const current = locked.get(order.orderId);
      return current === undefined ? [] : modified(current, terms, await this.blockPricesOf(tx, current), at);
    });
    return null;
  }

  /**
   * Blocks what `terms` need beyond the order's block, before they go to the exchange (its account locked
   * until the commit). Answers why it cannot (the amounts), or null: blocked, or nothing more needed.
   */
  private async blockFor(orderId: string, terms: BidTerms): Promise<string | null> {
    let shortfall: string | null = null;
    await this.changeOrders([orderId], async (locked, at, tx) => {
      const current = locked.get(orderId);
      if (current === undefined || !blockFollowsTerms(current)) return [];
      const prices = await this.pricesOf(tx, current);
      // A delisted issue: the exchange refuses the modification, and nothing more is blocked for it.
      if (prices === undefined) return [];
      const required = blockToRaisePaise(current, terms, prices);
      if (required === null) return [];
      const account = (await this.options.funds.lockAccounts(tx, [current.userId])).get(current.userId);
      const raised = raiseBlock(current, required, account && availablePaise(account), at);
      shortfall = raised.shortfall;
      return raised.changes;
    });
    return shortfall;
  }

  private async cancel(orderId: string): Promise<void> {
    const { orders, exchange } = this.options;
    const order = await orders.find(orderId);
    // Cancelled before it reached the exchange (the placement saw the request), or gone.
    if (order === undefined || order.status === OrderStatus.CANCELLED) return;
    if (!isAtExchange(order)) {
      await this.changeOrders([orderId], (locked) => cancellationNotPossible(locked.get(orderId), order.status));
      return;
    }
    let result = answeredChange(await this.callExchange('cancel', () => exchange.cancel(bidOf(order)), changeOutcome));
    // Refused, but the exchange's book has the bid cancelled: a cancellation sent again after a lost
    // answer, which the first had made. It is done.
    if (!result.done) {
      const held = (await this.callExchange('find_bids', () => exchange.findBids([orderId]))).get(orderId);
      if (held?.status === 'CANCELLED') result = { done: true };
    }
    const answer = result;
    await this.changeOrders([orderId], (locked, at) => cancellationAnswered(locked.get(orderId), answer, at));
  }

  /**
   * Carries the bid forward at the exchange, at the terms order entry took (a revision included): first its
   * funds are blocked again (a bid left live by the T allocation blocks nothing); a bidder who lacks them is
   * refused, finally. Should the exchange refuse (T+1 closed meanwhile, say), the order is no longer
   * carried forward, takes back the exchange's terms and releases the block; its history says why.
   */
  private async carryForward(orderId: string): Promise<void> {
    const { orders, exchange } = this.options;
    const order = await orders.find(orderId);
    if (order === undefined || order.carriedForwardAt === null || !isAtExchange(order)) return;
    const terms = termsOf(order);
    const shortfall = order.fundsBlockedPaise === null ? null : await this.blockFor(orderId, terms);
    if (shortfall !== null) {
      await this.changeOrders([orderId], (locked, at) =>
        carryForwardRefusedForFunds(locked.get(orderId), shortfall, at),
      );
      return;
    }
    const result = answeredChange(
      await this.callExchange('carry_forward', () => exchange.carryForward(bidOf(order), terms), changeOutcome),
    );
    const held = result.done
      ? undefined
      : heldTerms((await this.callExchange('find_bids', () => exchange.findBids([orderId]))).get(orderId));
    await this.changeOrders([orderId], (locked, at) => carryForwardAnswered(locked.get(orderId), result, held, at));
  }

  /** The prices that value the order's bid for its funds: its issue's, or its offer's (undefined: neither is registered). */
  private async pricesOf(tx: StoreTx, order: Order): Promise<IssuePrices | undefined> {
    return (await instrumentReader(this.options.issues, this.options.offers, tx)(order)).prices();
  }

  /** The prices of the order's block, read only when its block follows its terms (else nothing is read). */
  private async blockPricesOf(tx: StoreTx, order: Order): Promise<IssuePrices | undefined> {
    return blockFollowsTerms(order) ? this.pricesOf(tx, order) : undefined;
  }

  /**
   * Applies the exchange's events to the orders still live, one commit per delivery, then acknowledges
   * them; repeats until the exchange has nothing new. Delivery is at least once: an event delivered again
   * finds its order finished and changes nothing. A delivery that fails is applied again instrument by
   * instrument, each under its guard: the events of one that fails wait (unacknowledged) while the others'
   * are applied.
   */
  private async processEvents(stopping: () => boolean): Promise<number> {
    const { exchange, logger, guard } = this.options;
    guard.newPass();
    const seen = new Set<string>();
    let applied = 0;
    for (;;) {
      await yieldToEventLoop();
      if (stopping()) break;
      // Events already seen in this pass are not applied again, even if an adapter answers them again.
      const events = (await this.callExchange('poll_events', () => exchange.pollEvents(seen))).filter(
        (event) => !seen.has(event.eventId),
      );
      if (events.length === 0) break;
      for (const event of events) seen.add(event.eventId);
      const done = await this.applyDelivery(events);
      if (done.length > 0)
        await this.callExchange('acknowledge', () => exchange.acknowledge(done.map((event) => event.eventId)));
      for (const event of done) this.eventInstruments.delete(event.eventId);
      applied += done.length;
    }
    if (applied > 0)
      logger.info({ workerId: this.workerId, events: applied }, 'applied allocation events from the exchange');
    return applied;
  }

  /** The instrument of each event whose delivery failed once (to hold it back while its instrument pauses). */
  private readonly eventInstruments = new Map<string, string>();

  /** Applies a delivery: in one commit when it can, else instrument by instrument. Answers the events applied. */
  private async applyDelivery(events: readonly ExchangeEvent[]): Promise<ExchangeEvent[]> {
    const { guard } = this.options;
    // Events of an instrument that failed and pauses wait for it.
    const ready: ExchangeEvent[] = [];
    for (const event of events) {
      const instrument = this.eventInstruments.get(event.eventId);
      if (instrument === undefined || (await guard.mayRun(instrument, 'events'))) ready.push(event);
    }
    if (ready.length === 0) return [];
    try {
      await this.applyEvents(ready);
      for (const instrument of new Set(ready.map((event) => this.eventInstruments.get(event.eventId)))) {
        if (instrument !== undefined) await guard.succeeded(instrument, 'events');
      }
      return ready;
    } catch (error) {
      if (error instanceof DatabaseUnavailableError) throw error;
    }
    const byInstrument = new Map<string, ExchangeEvent[]>();
    for (const event of ready) {
      const order = await this.options.orders.find(event.orderId);
      const instrument = order === undefined ? `order:${event.orderId}` : instrumentOfOrder(order);
      this.eventInstruments.set(event.eventId, instrument);
      byInstrument.set(instrument, [...(byInstrument.get(instrument) ?? []), event]);
    }
    const done: ExchangeEvent[] = [];
    for (const [instrument, group] of byInstrument) {
      if ((await guard.run(instrument, 'events', () => this.applyEvents(group))) !== undefined) done.push(...group);
    }
    return done;
  }

  /** The events applied to their orders in one transaction, each allotment a trade settling when its terms say. */
  private async applyEvents(events: readonly ExchangeEvent[]): Promise<true> {
    // Read before the transaction: on SQLite its one connection is the transaction's until it ends.
    const calendar = events.some((event) => event.quantity > 0) ? await this.options.holidays.calendar() : NO_HOLIDAYS;
    await this.changeOrders(
      events.map((event) => event.orderId),
      async (locked, at, tx) => {
        const instrumentOf = instrumentReader(this.options.issues, this.options.offers, tx);
        const delivered: DeliveredEvent[] = [];
        for (const event of events) {
          const order = locked.get(event.orderId);
          const settlesAt =
            order !== undefined && event.quantity > 0
              ? (await instrumentOf(order)).settlesAt(at, event.day, calendar)
              : null;
          delivered.push({ event, settlesAt });
        }
        return applyEvents(locked, delivered, at);
      },
    );
    return true;
  }
}

/**
 * A change the exchange did not answer: its outbox entry waits for the link's back-off and is sent again
 * (a modification, cancellation or carry-forward sent twice leaves the bid as once).
 */
class UnansweredError extends Error {
  constructor(readonly unanswered: Unanswered) {
    super(`the exchange did not answer (${unanswered.why})`);
  }
}

/** How a change's answer is counted in the metrics. */
function changeOutcome(result: ChangeResult): ExchangeOutcome {
  return result.done === null ? 'unanswered' : result.done ? 'ok' : 'refused';
}

function answeredChange(result: ChangeResult): ChangeAnswer {
  if (result.done === null) throw new UnansweredError(result);
  return result;
}

/** An exchange that takes bids in our transaction answers each (exchange.ts): else the batch is tried again. */
function answered(result: PlaceResult): PlaceAnswer {
  if (result.accepted === null) throw new UnansweredError(result);
  return result;
}
