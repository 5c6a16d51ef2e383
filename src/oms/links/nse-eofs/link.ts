/**
 * The exchange link to NSE's e-OFS Web API (docs/exchanges.md): the OMS's port (../../exchange.ts) spoken
 * over the client (client.ts) and the mapping (mapping.ts). Bids go in batches (`/order/batch`), changes
 * one by one; the exchange's book is read by our reference before anything unanswered is sent again; the
 * exchange's allocation messages come on its stream, kept open between start() and stop() and read from
 * where it was (a dropped stream is reopened with back-off, and replays what the link has not yet seen).
 *
 * Every call the exchange did not answer is `unanswered` to the OMS, with a back-off that doubles while the
 * exchange stays silent (at most MAX_BACKOFF_MS) and is never shorter than twice the client's timeout after
 * a lost answer: a bid still on its way through the exchange when the answer was given up has arrived by
 * then, so that the book read before sending again finds it.
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { BidTerms } from '../../../domain/ofs/rules.js';
import {
  ExchangeUnavailableError,
  type ChangeResult,
  type ExchangeAdapter,
  type ExchangeBid,
  type ExchangeBidStatus,
  type ExchangeBook,
  type ExchangeBookEntry,
  type ExchangeEvent,
  type ExchangeOrder,
  type LinkHealth,
  type PlaceResult,
} from '../../exchange.js';
import type { StreamCursorRepository } from '../../../store/orders/exchange-sessions.js';
import type { NseEofsClient, SubmitOutcome, Unanswered } from './client.js';
import {
  BATCH_LIMIT,
  investorCategoryOf,
  orderIdOfReference,
  paiseOf,
  referenceOf,
  seriesOf,
  type MemberBid,
  type NseBookStatus,
  type NseStreamMessage,
  type OperationType,
} from './mapping.js';

/** The longest back-off between calls the exchange does not answer, and between stream reconnections. */
export const MAX_BACKOFF_MS = 30_000;
const FIRST_BACKOFF_MS = 500;
/** Events answered by one poll; the rest come with the next. */
const EVENTS_PER_POLL = 500;

const BOOK_STATUS: Record<NseBookStatus, ExchangeBidStatus> = {
  OPEN: 'LIVE',
  CANCELLED: 'CANCELLED',
  ALLOTTED: 'ALLOTTED',
  NOT_ALLOTTED: 'NOT_ALLOTTED',
};

export interface NseEofsLinkOptions {
  /** The exchange segment this link serves (ordergate's `exchange`: NSE_EQ). */
  exchange: string;
  client: NseEofsClient;
  now: () => number;
  logger?: Logger;
  /**
   * Where the stream resumes after a restart (the sequence number every message up to which the OMS has
   * applied): without it, a restarted link reads the stream from its beginning (each message applied again
   * changes nothing).
   */
  cursor?: { name: string; store: Pick<StreamCursorRepository, 'read' | 'advance'> };
  /** How long the open stream may stay silent before it is taken for dead and reopened (ms). */
  idleMs?: number;
}

/**
 * Decision: the stream's silence after which it is reopened; the simulator heartbeats every 5 s, and NSE's
 * rate is not public (the mapping's stream is a Decision too).
 */
export const DEFAULT_STREAM_IDLE_MS = 20_000;

/** Why a bid cannot be written for the exchange: the client has no UCC on the order. */
const NO_MEMBER =
  'ordergate holds no UCC for this bid’s client (placed before member data was set); the exchange needs one';

export class NseEofsLink implements ExchangeAdapter {
  /** Calls in a row the exchange did not answer: the back-off doubles with them. */
  private silentCalls = 0;
  private lastAnswerAt: number | null = null;
  /** Allocation messages received and not yet acknowledged by the OMS, by sequence number. */
  private readonly received = new Map<number, ExchangeEvent>();
  /** The highest sequence number read from the stream: a reopened stream replays from after it. */
  private cursor = 0;
  private streamOpen = false;
  private problem: string | null = 'not started';
  private running: AbortController | null = null;
  private streaming: Promise<void> | null = null;
  /** The cursor as stored (0: none yet); null until read. */
  private savedCursor: number | null = null;

  constructor(private readonly options: NseEofsLinkOptions) {}

  get exchange(): string {
    return this.options.exchange;
  }

  async placeBids(bids: readonly ExchangeBid[]): Promise<PlaceResult[]> {
    const results: PlaceResult[] = [];
    for (let i = 0; i < bids.length; i += BATCH_LIMIT) {
      const chunk = bids.slice(i, i + BATCH_LIMIT);
      const writable = chunk.flatMap((bid) => {
        const member = memberBidOf(bid, bid);
        return member === null ? [] : [member];
      });
      const outcomes =
        writable.length === 1
          ? [await this.options.client.submit(writable[0]!, 'E')]
          : await this.options.client.submitBatch(writable, 'E');
      const byOrder = new Map(writable.map((bid, j) => [bid.orderId, outcomes[j]!]));
      for (const bid of chunk) {
        const outcome = byOrder.get(bid.orderId);
        results.push(outcome === undefined ? { accepted: false, reason: NO_MEMBER } : this.placeResultOf(outcome));
      }
    }
    return results;
  }

  async findBids(orderIds: readonly string[]): Promise<Map<string, ExchangeOrder>> {
    if (orderIds.length === 0) return new Map();
    const entries = await this.options.client.queryBook(orderIds.map(referenceOf));
    if (!Array.isArray(entries)) throw new ExchangeUnavailableError(this.unanswered(entries));
    this.answered();
    const asked = new Set(orderIds);
    const found = new Map<string, ExchangeOrder>();
    for (const entry of entries) {
      const orderId = orderIdOfReference(entry.apiEchoBack);
      const status = BOOK_STATUS[entry.orderStatus];
      if (orderId === null || status === undefined || !asked.has(orderId)) continue;
      found.set(orderId, {
        exchangeOrderId: entry.orderId,
        status,
        orderType: entry.isMarketOrder ? 'RL-MKT' : 'RL',
        pricePaise: entry.price === '' ? 0 : paiseOf(entry.price),
        quantity: entry.quantity,
      });
    }
    return found;
  }

  /**
   * The member's whole book of one security (the mapping's book by symbol), for reconciliation: every bid,
   * ours or not; an entry's reference names our order when it is one of ours in form (the reconciliation
   * then looks for the order).
   */
  async readBook(exchange: string, symbol: string): Promise<ExchangeBook> {
    const asOf = this.options.now();
    const entries = await this.options.client.querySymbolBook(symbol);
    if (!Array.isArray(entries)) throw new ExchangeUnavailableError(this.unanswered(entries));
    this.answered();
    return {
      asOf,
      entries: entries.flatMap((entry): ExchangeBookEntry[] => {
        const status = BOOK_STATUS[entry.orderStatus];
        if (status === undefined || (entry.symbol !== undefined && entry.symbol !== symbol)) return [];
        const cutoff = entry.isMarketOrder;
        return [
          {
            exchange,
            symbol,
            orderId: entry.apiEchoBack === '' ? null : orderIdOfReference(entry.apiEchoBack),
            reference: entry.apiEchoBack === '' ? null : entry.apiEchoBack,
            exchangeOrderId: entry.orderId,
            status,
            orderType: cutoff ? 'RL-MKT' : 'RL',
            pricePaise: cutoff || entry.price === '' ? 0 : paiseOf(entry.price),
            quantity: entry.quantity,
            ucc: typeof entry.clientId === 'string' ? entry.clientId : null,
            ...(typeof entry.carriedForward === 'boolean' && { carriedForward: entry.carriedForward }),
          },
        ];
      }),
    };
  }

  modify(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.change(bid, terms, 'M');
  }

  cancel(bid: ExchangeBid): Promise<ChangeResult> {
    return this.change(bid, bid, 'C');
  }

  carryForward(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.change(bid, terms, 'CF');
  }

  private async change(bid: ExchangeBid, terms: BidTerms, operation: OperationType): Promise<ChangeResult> {
    const member = memberBidOf(bid, terms);
    if (member === null) return { done: false, reason: NO_MEMBER };
    const outcome = await this.options.client.submit(member, operation);
    if (outcome.kind === 'accepted') return this.answered({ done: true });
    if (outcome.kind === 'rejected') return this.answered({ done: false, reason: outcome.reason });
    return { done: null, ...this.unanswered(outcome) };
  }

  private placeResultOf(outcome: SubmitOutcome): PlaceResult {
    if (outcome.kind === 'accepted') return this.answered({ accepted: true, exchangeOrderId: outcome.exchangeOrderId });
    if (outcome.kind === 'rejected') return this.answered({ accepted: false, reason: outcome.reason });
    return { accepted: null, ...this.unanswered(outcome) };
  }

  private answered<T>(result?: T): T {
    this.silentCalls = 0;
    this.lastAnswerAt = this.options.now();
    return result as T;
  }

  /** The back-off of a call left unanswered (see the module's comment). */
  private unanswered(outcome: Unanswered) {
    this.silentCalls += 1;
    const doubling = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (this.silentCalls - 1));
    // After a lost answer, twice the timeout: a bid still on its way has reached the book by then. After a
    // refusal to take the call, what the exchange asked for (Retry-After).
    const floor = outcome.kind === 'unknown' ? 2 * this.options.client.timeoutMs : outcome.retryAfterMs;
    return { outcome: outcome.kind, why: outcome.why, retryAfterMs: Math.max(doubling, floor) } as const;
  }

  /**
   * The allocation messages received and not acknowledged, oldest first (the map's order: messages are
   * taken in rising sequence numbers), but those in `skip`.
   */
  async pollEvents(skip?: Pick<ReadonlySet<string>, 'has'>): Promise<ExchangeEvent[]> {
    const events: ExchangeEvent[] = [];
    for (const event of this.received.values()) {
      if (events.length === EVENTS_PER_POLL) break;
      if (skip === undefined || !skip.has(event.eventId)) events.push(event);
    }
    return events;
  }

  async acknowledge(eventIds: readonly string[]): Promise<void> {
    for (const id of eventIds) this.received.delete(Number(id));
    const { cursor, logger } = this.options;
    if (cursor === undefined || this.savedCursor === null) return;
    // Every message up to just before the oldest still unapplied, or up to the last read.
    const oldest = this.received.keys().next();
    const appliedUpTo = oldest.done === true ? this.cursor : oldest.value - 1;
    if (appliedUpTo <= this.savedCursor) return;
    try {
      await cursor.store.advance(cursor.name, appliedUpTo);
      this.savedCursor = appliedUpTo;
    } catch (error) {
      // Only the restart's starting point: the next acknowledgement writes it again.
      logger?.warn({ err: error, exchange: this.exchange }, 'could not save the stream cursor');
    }
  }

  /** Reads the stored cursor once: the stream resumes after it. */
  private async resume(): Promise<void> {
    const { cursor } = this.options;
    if (cursor === undefined || this.savedCursor !== null) return;
    this.savedCursor = await cursor.store.read(cursor.name);
    this.cursor = Math.max(this.cursor, this.savedCursor);
  }

  /** Opens the message stream and keeps it open (reopened with back-off) until stop(). */
  start(): void {
    if (this.running !== null) return;
    const running = new AbortController();
    this.running = running;
    this.streaming = this.keepStreaming(running.signal);
  }

  async stop(): Promise<void> {
    this.running?.abort();
    this.running = null;
    await this.streaming;
    this.streaming = null;
    this.streamOpen = false;
    this.problem = 'stopped';
  }

  /**
   * One read of the stream, now (the tests, and a worker's runOnce): what the exchange has sent since the
   * cursor, up to its first heartbeat after the replay.
   */
  async runOnce(): Promise<void> {
    if (this.running !== null) return;
    await this.resume();
    const reading = new AbortController();
    try {
      for await (const message of this.options.client.stream(this.cursor, reading.signal)) {
        this.take(message);
        if (message.type === 'HEARTBEAT') break;
      }
    } catch (error) {
      // The exchange out of reach is the link's state, not a failure of the OMS's pass: the next read tries again.
      this.problem = `the message stream failed: ${error instanceof Error ? error.message : String(error)}`;
      this.options.logger?.warn({ exchange: this.exchange, problem: this.problem }, 'exchange stream read failed');
    } finally {
      reading.abort();
    }
  }

  health(): LinkHealth[] {
    return [
      {
        exchange: this.options.exchange,
        connected: this.streamOpen && this.options.client.loggedIn,
        lastAnswerAt: this.lastAnswerAt,
        problem: this.streamOpen ? null : this.problem,
      },
    ];
  }

  private async keepStreaming(signal: AbortSignal): Promise<void> {
    let failures = 0;
    const { logger } = this.options;
    const idleMs = this.options.idleMs ?? DEFAULT_STREAM_IDLE_MS;
    while (!signal.aborted) {
      // One connection: ended by stop(), or by a silence longer than idleMs (a connection that died without
      // a word, behind a NAT or a partition, would otherwise look open for ever).
      const connection = new AbortController();
      const onStop = () => connection.abort();
      signal.addEventListener('abort', onStop);
      let silent = false;
      let idle = setTimeout(() => ((silent = true), connection.abort()), idleMs);
      try {
        await this.resume();
        for await (const message of this.options.client.stream(this.cursor, connection.signal)) {
          clearTimeout(idle);
          idle = setTimeout(() => ((silent = true), connection.abort()), idleMs);
          if (!this.streamOpen) logger?.info({ exchange: this.exchange, from: this.cursor }, 'exchange stream open');
          this.streamOpen = true;
          this.problem = null;
          failures = 0;
          this.take(message);
        }
        this.problem = 'the exchange ended the message stream';
      } catch (error) {
        if (signal.aborted) break;
        this.problem = silent
          ? `the message stream was silent for ${idleMs / 1000} s`
          : `the message stream failed: ${error instanceof Error ? error.message : String(error)}`;
      } finally {
        clearTimeout(idle);
        signal.removeEventListener('abort', onStop);
      }
      this.streamOpen = false;
      failures += 1;
      const delayMs = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (failures - 1));
      logger?.warn({ exchange: this.exchange, problem: this.problem, delayMs }, 'exchange stream down; reopening');
      // Ended early by stop() (an AbortError: nothing to report).
      await delay(delayMs, undefined, { signal }).catch(() => undefined);
    }
  }

  /**
   * A message of the stream: an allocation becomes an event for the OMS; every message moves the cursor.
   * It says the exchange is there, but not that it takes calls again: the calls' back-off goes on.
   */
  private take(message: NseStreamMessage): void {
    this.lastAnswerAt = this.options.now();
    if (message.seq <= this.cursor) return;
    this.cursor = message.seq;
    if (message.type !== 'ORDER') return;
    const orderId = orderIdOfReference(message.apiEchoBack);
    if (orderId === null) {
      this.options.logger?.warn({ exchange: this.exchange, seq: message.seq }, 'exchange message for a bid not ours');
      return;
    }
    this.received.set(message.seq, {
      eventId: String(message.seq),
      orderId,
      kind: message.event,
      quantity: message.allottedQuantity,
      pricePaise: message.allottedPrice === null ? null : paiseOf(message.allottedPrice),
      reason: message.text,
      day: message.day,
    });
  }
}

/** The bid as the mapping writes it, at `terms`; null when the order carries no client for the exchange. */
function memberBidOf(bid: ExchangeBid, terms: BidTerms): MemberBid | null {
  if (bid.member === null) return null;
  const category = bid.offer?.category ?? bid.category;
  const series = seriesOf(category);
  const cutoff = terms.orderType === 'RL-MKT';
  return {
    orderId: bid.orderId,
    exchangeOrderId: bid.exchangeOrderId,
    symbol: bid.symbol,
    series,
    ucc: bid.member.ucc,
    clientType: bid.member.clientType,
    custodian: bid.member.custodianCode,
    zeroMargin: bid.offer?.marginType === 'T',
    cutoff,
    quantity: terms.quantity,
    pricePaise: cutoff ? 0 : terms.pricePaise,
    investorCategory: series === 'IS' ? investorCategoryOf(category) : null,
  };
}
