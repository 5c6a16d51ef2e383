/**
 * SEBI's rules for API and algo orders on order entry's way in (docs/design/sebi-algo.md): before an order
 * (or a modification) is batched for its commit, the algo ID it carries is judged against the registry and
 * the order is counted in its user's threshold of orders a second in its exchange segment, in the call log
 * the rate limits use (this node's memory, or Redis shared by every node). Inside the commit's transaction
 * the kill switch is judged again (domain/orders/entry.ts), against the algo's row as locked there.
 */
import {
  isRegisteredAlgoOrder,
  orderAlgo,
  thresholdKey,
  thresholdRefusal,
  THRESHOLD_WINDOW_MS,
  type GenericAlgoIds,
  type OrderAlgo,
} from '../domain/orders/algo-rules.js';
import { memoryAdmit, type Admit } from '../rate-limit/call-logs.js';
import type { AlgoRepository } from '../store/orders/algos.js';

export interface AlgoGateOptions {
  /** ALGO_GENERIC_ID: null turns the algo ID and threshold rules off (the kill switch stays on). */
  genericIds: GenericAlgoIds | null;
  /** ALGO_THRESHOLD_ORDERS_PER_SECOND. */
  thresholdPerSecond: number;
  /** The call log the threshold counts in; this node's memory until `countIn` names the shared one. */
  counter?: Admit;
}

/** A registered algo's orders are logged (they count towards the second) but never refused by the threshold. */
const UNLIMITED = 2 ** 31;

export class AlgoGate {
  private counter: Admit;

  constructor(
    private readonly algos: Pick<AlgoRepository, 'find'>,
    private readonly options: AlgoGateOptions,
  ) {
    this.counter = options.counter ?? memoryAdmit();
  }

  /** Counts the threshold in `counter` from now on: the app's call log, in Redis with REDIS_URL (every node's). */
  countIn(counter: Admit): void {
    this.counter = counter;
  }

  /** ALGO_GENERIC_ID: the generic IDs, or null when the rules are off. */
  get genericIds(): GenericAlgoIds | null {
    return this.options.genericIds;
  }

  /** Whether an algo ID may be a registered algo's: any but the generic IDs, which are no algo's. */
  mayBeRegistered(algoId: string): boolean {
    return this.options.genericIds === null || !Object.values(this.options.genericIds).includes(algoId);
  }

  /** The registered algo a sent ID names, when it names one. */
  private async registration(algoId: string | null) {
    return algoId === null || !this.mayBeRegistered(algoId) ? undefined : this.algos.find(algoId);
  }

  /**
   * The algo ID a new order carries (ApiError e-601 or e-602 when it may carry none of its own), the order
   * counted in the threshold (ApiError e-603 past it without a registered algo).
   */
  async forPlacement(userId: string, exchange: string, sent: string | null): Promise<OrderAlgo> {
    const algo = orderAlgo(sent, exchange, userId, this.options.genericIds, await this.registration(sent));
    await this.count(userId, exchange, algo.registered);
    return algo;
  }

  /** A modification of an order that carries `algoId`, counted in the threshold like a new order. */
  async forModification(userId: string, exchange: string, algoId: string | null): Promise<void> {
    if (this.options.genericIds === null) return;
    await this.count(
      userId,
      exchange,
      isRegisteredAlgoOrder(algoId, userId, exchange, await this.registration(algoId)),
    );
  }

  /** Whether the threshold is counted at all (the rules are on): modifications are counted too. */
  get countsThreshold(): boolean {
    return this.options.genericIds !== null;
  }

  private async count(userId: string, exchange: string, registered: boolean): Promise<void> {
    if (this.options.genericIds === null) return;
    const max = this.options.thresholdPerSecond;
    const decision = await this.counter(
      thresholdKey(userId, exchange),
      THRESHOLD_WINDOW_MS,
      registered ? UNLIMITED : max,
    );
    if (!decision.accepted) throw thresholdRefusal(max, exchange, decision.resetMs);
  }
}
