/**
 * The OMS worker: takes the outbox entries (PLACE, MODIFY, CANCEL) in commit order, runs the OMS risk
 * check, talks to the exchange adapter, and applies the exchange's allocation events. Every change goes
 * through OrderRepository.apply, which writes the order's history.
 *
 * Placements go in batches: the whole batch is admitted (EXXMITTED) in one commit, sent to the exchange in
 * one call, and settled (PENDING or ORDERERROR, with its outbox entries done) in one more commit.
 *
 * Crash safety. An entry is claimed under a lease (30 s, OMS_LEASE_MS) and marked done only after its work has
 * committed: a worker that dies leaves its entry to be taken again when the lease runs out. A placement
 * commits EXXMITTED before it calls the exchange, and an EXXMITTED order is always looked up at the
 * exchange (find) before it is placed: if the exchange already has it, it is not sent again. Status changes
 * are made only from the status the worker expects (the order row is locked in that status first), so a
 * step repeated after a crash, or an event delivered twice, changes nothing the second time.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { OfsIssue } from '../domain/ofs-issue.js';
import { availablePaise } from '../domain/funds.js';
import { fundsRequiredPaise, fundsShortfall } from '../domain/funds-blocking.js';
import { formatRupees, windowViolations, type BidTerms, type IssuePrices } from '../domain/ofs-rules.js';
import { offerState } from '../domain/ofs-offer.js';
import { offerDayViolations } from '../domain/ofs-offer-rules.js';
import { averageTradedPricePaise, EXCHANGE_ORIGIN, OMS_ORIGIN, tradeOfAllotment, type ChangeOrigin, type Order, type OrderChange } from '../domain/order.js';
import { isLiveStatus, OrderStatus } from '../domain/order-status.js';
import type { ExchangeOperation, OmsMetrics } from '../metrics/operator-metrics.js';
import { DEFAULT_OMS_LEASE_MS } from '../config.js';
import type { Store } from '../store/database.js';
import type { FundsRepository } from '../store/funds.js';
import type { OfsIssueRepository } from '../store/ofs-issues.js';
import type { OfferRegistration, OfsOfferRepository } from '../store/ofs-offers.js';
import type { OmsRepository, OutboxEntry } from '../store/oms.js';
import type { OrderRepository } from '../store/orders.js';
import type { StoreTx } from '../store/write-tx.js';
import type { ExchangeAdapter, ExchangeBid, ExchangeEvent, PlaceResult } from './exchange.js';

export const DEFAULT_POLL_MS = 200;
export const DEFAULT_LEASE_MS = DEFAULT_OMS_LEASE_MS;
/**
 * Outbox entries taken at once: enough to share commits, few enough that one SQLite step of a batch holds
 * the event loop (and every request of the process) for a few milliseconds only.
 */
export const DEFAULT_BATCH_SIZE = 250;
/** The longest pause after failed passes: the worker resumes within this of the database's return. */
export const MAX_RETRY_DELAY_MS = 2_000;

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
  /** Names the worker in outbox leases; unique per process by default. */
  workerId?: string;
  /** The pause between two passes of the loop. */
  pollMs?: number;
  /** How long a claimed outbox entry stays with this worker before another may take it. */
  leaseMs?: number;
  /** Outbox entries claimed at once; their status changes share one commit. */
  batchSize?: number;
  /** Where its exchange calls and failed passes are counted (the operator's metrics). */
  metrics?: OmsMetrics;
}

/** Orders at the exchange, as far as the OMS knows. */
const AT_EXCHANGE: readonly OrderStatus[] = [OrderStatus.EXXMITTED, OrderStatus.PENDING];

export class OmsWorker {
  readonly workerId: string;
  private readonly pollMs: number;
  private readonly leaseMs: number;
  private readonly batchSize: number;
  private running = false;
  /** Set by stop(): the pass under way ends after the batch it is in. */
  private stopRequested = false;
  /** Bumped by every start(), so that a loop stopped and started again never runs twice. */
  private loop = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The pass under way, if any; passes never overlap. */
  private pass: Promise<number> = Promise.resolve(0);
  /** Passes failed in a row (a database outage, say); the loop backs off while it grows. */
  private failedPasses = 0;
  /** Outbox entries a failed pass may have left leased to this worker (see releaseHeld). */
  private readonly held = new Set<number>();

  constructor(private readonly options: OmsWorkerOptions) {
    this.workerId = options.workerId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.pollMs = options.pollMs ?? DEFAULT_POLL_MS;
    this.leaseMs = options.leaseMs ?? DEFAULT_LEASE_MS;
    this.batchSize = options.batchSize ?? DEFAULT_BATCH_SIZE;
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
  private async callExchange<T>(operation: ExchangeOperation, call: () => Promise<T>, refused: (answer: T) => boolean = () => false): Promise<T> {
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
    metrics.exchangeCall(operation, refused(answer) ? 'refused' : 'ok', (performance.now() - started) / 1000);
    return answer;
  }

  /** Runs passes every pollMs until stop(). */
  start(): void {
    if (this.running) return;
    this.running = true;
    this.stopRequested = false;
    this.loop += 1;
    this.options.logger.info({ workerId: this.workerId, pollMs: this.pollMs }, 'OMS worker started');
    this.schedule(this.loop, 0);
  }

  /** Stops the loop; resolves once the batch under way has finished (the rest waits for the next start). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    this.stopRequested = true;
    clearTimeout(this.timer);
    await this.pass.catch(() => undefined);
    this.options.logger.info({ workerId: this.workerId }, 'OMS worker stopped');
  }

  /**
   * Processes everything due now: the outbox, then the exchange's events. Answers how many outbox entries
   * and events it handled. Runs after the pass under way, never beside it.
   */
  runOnce(): Promise<number> {
    const next = this.pass.catch(() => 0).then(() => this.processDue());
    this.pass = next;
    return next;
  }

  private schedule(loop: number, delayMs: number): void {
    this.timer = setTimeout(() => {
      // A pass that had a backlog (a full batch or more) took long enough for the next batch to fill: the
      // next pass starts at once; otherwise it waits pollMs, for what arrives meanwhile to share a batch.
      let backlog = false;
      this.runOnce()
        .then(
          (handled) => {
            this.failedPasses = 0;
            backlog = handled >= this.batchSize;
          },
          (error: unknown) => {
            // The database may be out: back off (doubling, at most MAX_RETRY_DELAY_MS) and keep going.
            this.failedPasses += 1;
            this.options.metrics?.passFailed();
            this.options.logger.error({ err: error, workerId: this.workerId, failedPasses: this.failedPasses }, 'OMS pass failed; retrying');
          },
        )
        .finally(() => {
          const pause = backlog ? 0 : this.pollMs;
          const delay = this.failedPasses === 0 ? pause : Math.min(this.pollMs * 2 ** this.failedPasses, Math.max(this.pollMs, MAX_RETRY_DELAY_MS));
          if (this.running && this.loop === loop) this.schedule(loop, delay);
        });
    }, delayMs);
  }

  private async processDue(): Promise<number> {
    return (await this.processOutbox()) + (await this.processEvents());
  }

  /**
   * Takes the due outbox entries in batches (at most one entry per order in a batch, see
   * OmsRepository.dueEntries), so that the status changes of a whole batch share one commit. A pass takes
   * the entries committed before it began (and those they held back: an order's MODIFY after its PLACE);
   * what arrives meanwhile waits for the next pass (pollMs later, or at once after a backlog, see
   * schedule) to travel in a larger batch: a batch's commits cost nearly the same for one order as for a
   * hundred.
   */
  private async processOutbox(): Promise<number> {
    const { oms, now } = this.options;
    const failed: number[] = [];
    let processed = 0;
    await this.releaseHeld();
    const horizon = await oms.latestEntryId();
    for (;;) {
      // SQLite calls are synchronous: without this, a backlog would hold the event loop (and every HTTP
      // request of this process) until it is drained.
      await yieldToEventLoop();
      if (this.stopRequested) return processed;
      const due = await oms.dueEntries(now(), failed, this.batchSize, horizon);
      if (due.length === 0) return processed;
      try {
        const claimedAt = now();
        // Others may have taken some since they were read: those are theirs.
        const claimed = new Set(await oms.claimAll(due.map((entry) => entry.id), this.workerId, claimedAt, claimedAt + this.leaseMs));
        const batch = due.filter((entry) => claimed.has(entry.id));
        // Placements mark their entries done with their last commit; the others here.
        processed += await this.placeAll(batch.filter((entry) => entry.action === 'PLACE'), failed);
        const done = await this.processEach(batch.filter((entry) => entry.action !== 'PLACE'), failed);
        await oms.completeAll(done, this.workerId, now());
        processed += done.length;
      } catch (error) {
        // The database failed mid-batch (an outage): this worker may still hold leases on these entries,
        // which nobody could take for the lease's length. It gives them back at its next pass.
        for (const entry of due) this.held.add(entry.id);
        throw error;
      }
    }
  }

  /**
   * Gives back the entries a failed pass may have left leased to this worker; entries it did finish are
   * untouched (releaseAll skips those done), and the rest are taken again at once: each step is safe to
   * repeat. Throws while the database is still out, and the pass fails again.
   */
  private async releaseHeld(): Promise<void> {
    if (this.held.size === 0) return;
    const ids = [...this.held];
    await this.options.oms.releaseAll(ids, this.workerId);
    for (const id of ids) this.held.delete(id);
    this.options.logger.info({ workerId: this.workerId, entries: ids.length }, 'OMS gave back the outbox entries of a failed pass');
  }

  /** Logs the failure and gives the entries back at once, so that the next pass retries them. */
  private async fail(entries: readonly OutboxEntry[], failed: number[], error: unknown): Promise<void> {
    for (const entry of entries) {
      this.options.logger.error(
        { err: error, workerId: this.workerId, outboxId: entry.id, orderId: entry.orderId, action: entry.action },
        'OMS could not process an outbox entry; retrying next pass',
      );
      failed.push(entry.id);
    }
    await this.options.oms.releaseAll(
      entries.map((entry) => entry.id),
      this.workerId,
    );
  }

  /**
   * PLACE: OMSXMITTED -> risk check -> EXXMITTED (committed) -> the exchange -> PENDING or ORDERERROR, for
   * the whole batch at once. Answers how many entries it finished (marked done with the last commit).
   */
  private async placeAll(entries: readonly OutboxEntry[], failed: number[]): Promise<number> {
    if (entries.length === 0) return 0;
    const { exchange, oms } = this.options;
    const orderIds = entries.map((entry) => entry.orderId);
    const toSend: Order[] = [];
    try {
      await this.changeOrders(orderIds, async (locked, at, tx) => {
        const changes = await this.admit(tx, orderIds, locked, at);
        // Admitted now, or earlier by a worker that died or a pass that failed after its admission.
        const admitted = new Map(changes.map((change) => [change.after.orderId, change.after]));
        for (const orderId of orderIds) {
          const order = admitted.get(orderId) ?? locked.get(orderId);
          if (order?.status === OrderStatus.EXXMITTED) toSend.push(order);
        }
        return changes;
      });
    } catch (error) {
      await this.fail(entries, failed, error);
      return 0;
    }

    // EXXMITTED is committed: from here a crash leaves orders that may or may not be at the exchange, and
    // each is looked up there before it is sent. Each step is a slice of its own for the event loop (SQLite
    // blocks it while a transaction runs).
    const answers = new Map<string, PlaceResult>();
    try {
      await yieldToEventLoop();
      const known = await this.callExchange('find_bids', () => exchange.findBids(toSend.map((order) => order.orderId)));
      for (const [orderId, bid] of known) answers.set(orderId, { accepted: true, exchangeOrderId: bid.exchangeOrderId });
      const unsent = toSend.filter((order) => !known.has(order.orderId));
      const results = await this.callExchange('place_bids', () => exchange.placeBids(unsent.map(bidOf)));
      unsent.forEach((order, i) => answers.set(order.orderId, results[i]!));
    } catch (error) {
      await this.fail(entries, failed, error);
      return 0;
    }

    try {
      await yieldToEventLoop();
      await this.changeOrders(
        [...answers.keys()],
        (locked, at) => [...answers].flatMap(([orderId, result]) => settle(locked.get(orderId), result, at)),
        (tx) => oms.completeAll(entries.map((entry) => entry.id), this.workerId, this.options.now(), tx),
      );
    } catch (error) {
      await this.fail(entries, failed, error);
      return 0;
    }
    return entries.length;
  }

  /**
   * The OMS side of placements, up to EXXMITTED: the risk check (the issue and the window), then, for a
   * bidder with a funds account, the funds the bid needs, blocked out of what is available (the accounts
   * are locked until the commit, so bids on any node never block more than there is).
   */
  private async admit(tx: StoreTx, orderIds: readonly string[], locked: Map<string, Order>, at: number): Promise<OrderChange[]> {
    const issueOf = this.options.issues.reader(tx);
    const offerOf = this.offerReader(tx);
    const pending = orderIds.flatMap((orderId) => {
      const order = locked.get(orderId);
      // Any other status means it is past this step.
      return order?.status === OrderStatus.OMSXMITTED ? [order] : [];
    });
    const accounts = await this.options.funds.lockAccounts(tx, [...new Set(pending.map((order) => order.userId))]);
    /** What each bidder has left to block, as the batch's earlier bids leave it. */
    const available = new Map([...accounts].map(([userId, account]) => [userId, availablePaise(account)]));
    const changes: OrderChange[] = [];
    for (const order of pending) {
      if (order.cancelRequestedAt !== null) {
        changes.push(transition(order, OrderStatus.CANCELLED, 'Cancelled by the user before it reached the exchange', at, OMS_ORIGIN));
        continue;
      }
      let violation: string | null;
      let prices: IssuePrices | undefined;
      if (order.offerId === null) {
        const issue = await issueOf(order.exchange, order.scripToken);
        violation = riskViolation(order, issue, at);
        prices = issue;
      } else {
        const offer = await offerOf(order.offerId);
        violation = offerRiskViolation(order, offer, at);
        // A 0 %-margin bid blocks nothing: its custodian confirms and pays (docs/design/ofs.md).
        prices = offer === undefined || order.marginType === 'T' ? undefined : offerPrices(offer);
      }
      const free = available.get(order.userId);
      const required = free === undefined || prices === undefined ? null : fundsRequiredPaise(openTerms(order), prices);
      const shortfall = violation ?? (required === null ? null : fundsShortfall(required, 0, free!));
      if (shortfall) {
        const reason = `Rejected by the OMS: ${shortfall}`;
        changes.push(transition(order, OrderStatus.OMSREJECT, reason, at, OMS_ORIGIN, { errorReason: reason }));
        continue;
      }
      if (required === null) {
        changes.push(transition(order, OrderStatus.EXXMITTED, 'Sent to the exchange', at, OMS_ORIGIN));
        continue;
      }
      available.set(order.userId, free! - Number(required));
      changes.push(
        transition(order, OrderStatus.EXXMITTED, `Funds of ${formatRupees(required)} blocked; sent to the exchange`, at, OMS_ORIGIN, {
          fundsBlockedPaise: Number(required),
        }),
      );
    }
    return changes;
  }

  /** MODIFY and CANCEL, one by one; answers the ids of the entries it finished. */
  private async processEach(entries: readonly OutboxEntry[], failed: number[]): Promise<number[]> {
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
        await this.fail([entry], failed, error);
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
    const terms = termsOf(order);
    let refusal: string;
    // Who refused: the exchange, or the OMS itself (the order is no longer at the exchange, or the funds lack).
    let refusedBy = EXCHANGE_ORIGIN;
    if (AT_EXCHANGE.includes(order.status)) {
      const shortfall = order.fundsBlockedPaise === null ? null : await this.blockFor(order.orderId, terms);
      if (shortfall === null) {
        const result = await this.callExchange('modify', () => exchange.modify(order.orderId, terms), (answer) => !answer.done);
        if (result.done) {
          await this.changeOrders([order.orderId], async (locked, at, tx) => {
            const current = locked.get(order.orderId);
            if (current === undefined) return [];
            const block = await this.blockOf(tx, current, terms);
            return [{ before: current, after: { ...current, ...block, updatedAt: block ? at : current.updatedAt }, reason: 'Modified at the exchange', origin: EXCHANGE_ORIGIN }];
          });
          return;
        }
        refusal = `Modification refused by the exchange: ${result.reason}`;
      } else {
        refusal = `Modification refused by the OMS: ${shortfall}`;
        refusedBy = OMS_ORIGIN;
      }
    } else {
      refusal = `Modification not sent to the exchange: the order is ${order.status}`;
      refusedBy = OMS_ORIGIN;
    }
    const held = (await this.callExchange('find_bids', () => exchange.findBids([order.orderId]))).get(order.orderId);
    // A later modification carries the user's latest terms: restoring would undo it before it is sent.
    const restore = held !== undefined && !(await oms.hasLaterModify(order.orderId, entry.id));
    await this.changeOrders([order.orderId], async (locked, at, tx) => {
      const current = locked.get(order.orderId);
      if (current === undefined) return [];
      if (!restore) return note(current, refusal, refusedBy);
      const restored = { orderType: held.orderType, pricePaise: held.pricePaise, quantity: held.quantity };
      return [
        {
          before: current,
          after: {
            ...current,
            ...restored,
            // The disclosed quantity is ours alone; it must still fit the quantity.
            disclosedQuantity: Math.min(current.disclosedQuantity, held.quantity),
            ...(await this.blockOf(tx, current, restored)),
            updatedAt: at,
          },
          reason: `${refusal}; the order keeps its terms at the exchange`,
          origin: refusedBy,
        },
      ];
    });
  }

  /**
   * Blocks what `terms` need beyond the order's block, before they go to the exchange (its account locked
   * until the commit). Answers why it cannot (the amounts), or null: blocked, or nothing more needed.
   */
  private async blockFor(orderId: string, terms: BidTerms): Promise<string | null> {
    let shortfall: string | null = null;
    await this.changeOrders([orderId], async (locked, at, tx) => {
      const current = locked.get(orderId);
      if (current?.fundsBlockedPaise == null || !isLiveStatus(current.status)) return [];
      const prices = await this.pricesOf(tx, current);
      // A delisted issue: the exchange refuses the modification, and nothing more is blocked for it.
      if (prices === undefined) return [];
      const required = fundsRequiredPaise(openTerms({ ...terms, tradedQuantity: current.tradedQuantity }), prices);
      if (required <= BigInt(current.fundsBlockedPaise)) return [];
      const account = (await this.options.funds.lockAccounts(tx, [current.userId])).get(current.userId);
      shortfall = account === undefined ? null : fundsShortfall(required, current.fundsBlockedPaise, availablePaise(account));
      if (shortfall !== null || account === undefined) return [];
      const more = required - BigInt(current.fundsBlockedPaise);
      return [
        {
          before: current,
          after: { ...current, fundsBlockedPaise: Number(required), updatedAt: at },
          reason: `Funds of ${formatRupees(more)} more blocked for the new terms`,
          origin: OMS_ORIGIN,
        },
      ];
    });
    return shortfall;
  }

  /** The block of a live funds-checked order holding `terms` at the exchange, when it differs from its own. */
  private async blockOf(tx: StoreTx, order: Order, terms: BidTerms): Promise<Pick<Order, 'fundsBlockedPaise'> | undefined> {
    if (order.fundsBlockedPaise === null || !isLiveStatus(order.status)) return undefined;
    const prices = await this.pricesOf(tx, order);
    if (prices === undefined) return undefined;
    const required = Number(fundsRequiredPaise(openTerms({ ...terms, tradedQuantity: order.tradedQuantity }), prices));
    return required === order.fundsBlockedPaise ? undefined : { fundsBlockedPaise: required };
  }

  private async cancel(orderId: string): Promise<void> {
    const { orders, exchange } = this.options;
    const order = await orders.find(orderId);
    // Cancelled before it reached the exchange (the placement saw the request), or gone.
    if (order === undefined || order.status === OrderStatus.CANCELLED) return;
    if (!AT_EXCHANGE.includes(order.status)) {
      await this.changeOrders([orderId], (locked) => note(locked.get(orderId), `Cancellation not possible: the order is ${order.status}`, OMS_ORIGIN));
      return;
    }
    const result = await this.callExchange('cancel', () => exchange.cancel(orderId), (answer) => !answer.done);
    await this.changeOrders([orderId], (locked, at) => {
      const current = locked.get(orderId);
      if (!result.done) return note(current, `Cancellation refused by the exchange: ${result.reason}`, EXCHANGE_ORIGIN);
      if (current === undefined || !AT_EXCHANGE.includes(current.status)) return [];
      return [transition(current, OrderStatus.CANCELLED, 'Cancelled by the user', at, EXCHANGE_ORIGIN)];
    });
  }

  /**
   * Tells the exchange the bid is carried forward to T+1. Should it refuse (the T+1 session closed
   * meanwhile, say), the order is no longer carried forward, and its history says why.
   */
  private async carryForward(orderId: string): Promise<void> {
    const { orders, exchange } = this.options;
    const order = await orders.find(orderId);
    if (order === undefined || order.carriedForwardAt === null || !AT_EXCHANGE.includes(order.status)) return;
    const result = await this.callExchange('carry_forward', () => exchange.carryForward(orderId), (answer) => !answer.done);
    await this.changeOrders([orderId], (locked, at) => {
      const current = locked.get(orderId);
      if (current === undefined) return [];
      if (result.done) return note(current, 'Carried forward at the exchange', EXCHANGE_ORIGIN);
      return [
        {
          before: current,
          after: { ...current, carriedForwardAt: null, updatedAt: at },
          reason: `Carry-forward refused by the exchange: ${result.reason}`,
          origin: EXCHANGE_ORIGIN,
        },
      ];
    });
  }

  /** An offer by id, read once per transaction. */
  private offerReader(tx: StoreTx): (offerId: string) => Promise<OfferRegistration | undefined> {
    const read = new Map<string, Promise<OfferRegistration | undefined>>();
    return (offerId) => {
      let offer = read.get(offerId);
      if (offer === undefined) read.set(offerId, (offer = this.options.offers.find(offerId, tx)));
      return offer;
    };
  }

  /** The prices that value the order's bid for its funds: its issue's, or its offer's (undefined: neither is registered). */
  private async pricesOf(tx: StoreTx, order: Order): Promise<IssuePrices | undefined> {
    if (order.offerId === null) return this.options.issues.find(order.exchange, order.scripToken, tx);
    const offer = await this.options.offers.find(order.offerId, tx);
    return offer && offerPrices(offer);
  }

  /**
   * Applies the exchange's events to the orders still live, one commit per delivery, then acknowledges
   * them; repeats until the exchange has nothing new. Delivery is at least once: an event delivered again
   * finds its order finished and changes nothing.
   */
  private async processEvents(): Promise<number> {
    const { exchange, logger } = this.options;
    const seen = new Set<string>();
    let applied = 0;
    for (;;) {
      await yieldToEventLoop();
      if (this.stopRequested) break;
      // Events already applied in this pass are not applied again, even if an adapter answers them again.
      const events = (await this.callExchange('poll_events', () => exchange.pollEvents())).filter((event) => !seen.has(event.eventId));
      if (events.length === 0) break;
      await this.changeOrders(events.map((event) => event.orderId), async (locked, at, tx) => {
        // An allotment is a trade, which settles after its issue's settlement delay (an offer's: by day).
        const issueOf = this.options.issues.reader(tx);
        const offerOf = this.offerReader(tx);
        const changes: OrderChange[] = [];
        for (const event of events) {
          const order = locked.get(event.orderId);
          let settlementDelayMs: number | null = null;
          if (order !== undefined && event.quantity > 0) {
            const terms = order.offerId === null ? await issueOf(order.exchange, order.scripToken) : (await offerOf(order.offerId))?.offer;
            settlementDelayMs = terms?.settlementDelayMs ?? null;
          }
          changes.push(...applyEvent(locked, event, at, settlementDelayMs));
        }
        return changes;
      });
      await this.callExchange('acknowledge', () => exchange.acknowledge(events.map((event) => event.eventId)));
      for (const event of events) seen.add(event.eventId);
      applied += events.length;
    }
    if (applied > 0) logger.info({ workerId: this.workerId, events: applied }, 'applied allocation events from the exchange');
    return applied;
  }
}

/** The order moved to `status`, with its history reason; `fields` are set as well. */
function transition(order: Order, status: OrderStatus, reason: string, at: number, origin: ChangeOrigin, fields: Partial<Order> = {}): OrderChange {
  // A finished order blocks nothing more: its funds are released (an allotment's cost is debited by apply).
  const release = !isLiveStatus(status) && order.fundsBlockedPaise !== null ? { fundsBlockedPaise: 0 } : {};
  return { before: order, after: { ...order, ...fields, ...release, status, updatedAt: at }, reason, origin };
}

/** A history entry that changes nothing on the order (undefined: the order is gone). */
function note(order: Order | undefined, reason: string, origin: ChangeOrigin): OrderChange[] {
  return order === undefined ? [] : [{ before: order, after: order, reason, origin }];
}

/** The exchange's answer to a placement, applied if the order is still EXXMITTED. */
function settle(order: Order | undefined, result: PlaceResult, at: number): OrderChange[] {
  if (order?.status !== OrderStatus.EXXMITTED) return [];
  if (result.accepted) {
    return [
      transition(order, OrderStatus.PENDING, `Accepted by the exchange, exchange order id ${result.exchangeOrderId}`, at, EXCHANGE_ORIGIN, {
        exchangeOrderId: result.exchangeOrderId,
      }),
    ];
  }
  return [transition(order, OrderStatus.ORDERERROR, `Rejected by the exchange: ${result.reason}`, at, EXCHANGE_ORIGIN, { errorReason: result.reason })];
}

/**
 * An allocation event, applied to an order still live (a repeat delivery finds it finished, or, for an
 * event that leaves it live, sees the allotment's trade already made: its trade id is the order's).
 */
function applyEvent(orders: Map<string, Order>, event: ExchangeEvent, at: number, settlementDelayMs: number | null): OrderChange[] {
  const order = orders.get(event.orderId);
  if (order === undefined || !isLiveStatus(order.status)) return [];
  let change: OrderChange;
  const allotted = event.pricePaise !== null && event.quantity > 0 ? { quantity: event.quantity, pricePaise: event.pricePaise } : null;
  // A second allotment (T+1, after a partial one on T) is the order's second trade.
  const part = order.tradedQuantity > 0 ? 2 : 1;
  const filled = allotted && {
    tradedQuantity: order.tradedQuantity + allotted.quantity,
    tradedPricePaise: averageTradedPricePaise(order, allotted.quantity, allotted.pricePaise),
  };
  switch (event.kind) {
    case 'ALLOTTED':
      change = transition(order, OrderStatus.EXECUTED, event.reason, at, EXCHANGE_ORIGIN, filled ?? {});
      break;
    case 'PART_ALLOTTED': {
      if (filled === null) return note(order, event.reason, EXCHANGE_ORIGIN);
      // The bid stays live for the rest: its block covers what is left of it (a non-retail bid has its own price).
      const block = order.fundsBlockedPaise === null ? {} : { fundsBlockedPaise: Number(BigInt(order.quantity - filled.tradedQuantity) * BigInt(order.pricePaise)) };
      change = { before: order, after: { ...order, ...filled, ...block, updatedAt: at }, reason: event.reason, origin: EXCHANGE_ORIGIN };
      break;
    }
    case 'NOTE':
      return note(order, event.reason, EXCHANGE_ORIGIN);
    default:
      // Not allotted (more): what an earlier allotment gave the order stands.
      change =
        order.tradedQuantity > 0
          ? transition(order, OrderStatus.EXECUTED, event.reason, at, EXCHANGE_ORIGIN)
          : transition(order, OrderStatus.CANCELLED, event.reason, at, EXCHANGE_ORIGIN, { errorReason: event.reason });
  }
  if (allotted) change.trade = tradeOfAllotment(change.after, allotted.quantity, allotted.pricePaise, at, settlementDelayMs, part);
  // Two events of one order in one delivery: the second sees the first's outcome.
  orders.set(order.orderId, change.after);
  return [change];
}

/**
 * The OMS risk check before transmission: the issue is still registered and the order's window still
 * open. The API judged the rest before its 200; this catches what changed since.
 */
function riskViolation(order: Order, issue: OfsIssue | undefined, now: number): string | null {
  if (issue === undefined) return `${order.exchange} ${order.scripToken} is not a registered OFS issue`;
  const [closed] = windowViolations(issue, order.category, now);
  return closed === undefined ? null : `${closed.message}; the order did not reach the exchange`;
}

/**
 * The OMS risk check of a bid in an offer: the offer still registered, and its day still taking the bid
 * (the offer may have been cancelled, or its session closed, since order entry judged it).
 */
function offerRiskViolation(order: Order, offer: OfferRegistration | undefined, now: number): string | null {
  if (offer === undefined) return `the offer ${order.offerId} is no longer registered`;
  const state = offerState(offer.offer, offer.progress, now);
  const [closed] = offerDayViolations(offer.offer, state, order.offerCategory!, 'place', false, now);
  return closed === undefined ? null : `${closed.message}; the order did not reach the exchange`;
}

/** What values an offer's bids: cut-off bids at the T-day cut-off (the floor until it is found). */
function offerPrices(offer: OfferRegistration): IssuePrices {
  return { retailCutoffPricePaise: offer.tCutoffPricePaise, floorPricePaise: offer.offer.floorPricePaise };
}

/** The terms of what is still bid for: a partly allotted bid blocks only for the rest. */
function openTerms(order: BidTerms & Pick<Order, 'tradedQuantity'>): BidTerms {
  return { orderType: order.orderType, pricePaise: order.pricePaise, quantity: order.quantity - order.tradedQuantity };
}

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

function termsOf(order: Order): BidTerms {
  return { orderType: order.orderType, pricePaise: order.pricePaise, quantity: order.quantity };
}

function bidOf(order: Order): ExchangeBid {
  const offer = order.offerId === null ? null : { offerId: order.offerId, userId: order.userId, category: order.offerCategory!, marginType: order.marginType ?? 'H' };
  return { orderId: order.orderId, exchange: order.exchange, scripToken: order.scripToken, category: order.category, offer, ...termsOf(order) };
}
