/**
 * The OMS's one port over several exchange links: each bid goes to the link of its exchange segment
 * (NSE_EQ, BSE_EQ), the book is read from every link (a listing's whole book from its own link), and their events come together, each event id
 * prefixed with its link's segment so that acknowledgements find their way back.
 */
import type { BidTerms } from '../../domain/ofs/rules.js';
import {
  ExchangeUnavailableError,
  type Unanswered,
  type ChangeResult,
  type ExchangeAdapter,
  type ExchangeBid,
  type ExchangeBook,
  type ExchangeEvent,
  type ExchangeOrder,
  type LinkHealth,
  type PlaceResult,
} from '../exchange.js';

const SEPARATOR = '|';
/** When a link's book failed with no back-off of its own, its orders are asked for again after this. */
const UNREADABLE_BOOK_RETRY_MS = 10_000;

export class ExchangeRouter implements ExchangeAdapter {
  constructor(private readonly links: ReadonlyMap<string, ExchangeAdapter>) {
    if (links.size === 0) throw new Error('an exchange router needs at least one link');
  }

  private linkOf(exchange: string): ExchangeAdapter {
    const link = this.links.get(exchange);
    if (link === undefined) throw new Error(`no exchange link for ${exchange}`);
    return link;
  }

  /**
   * Each link's book, for the orders it knows. A link that cannot read its book (its exchange silent, its
   * folder gone) fails alone: the orders no other link knows wait as awaited, with its reason, while the
   * other links' answers stand. Every link failing: the first's error, as a single link would throw it.
   */
  async findBids(orderIds: readonly string[]): Promise<Map<string, ExchangeOrder>> {
    const found = new Map<string, ExchangeOrder>();
    if (orderIds.length === 0) return found;
    const failures: unknown[] = [];
    const links = [...new Set(this.links.values())];
    for (const link of links) {
      try {
        for (const [orderId, bid] of await link.findBids(orderIds)) found.set(orderId, bid);
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length === 0) return found;
    if (failures.length === links.length) throw failures[0];
    const first = failures[0];
    const unanswered: Unanswered =
      first instanceof ExchangeUnavailableError
        ? first.unanswered
        : {
            outcome: 'not-sent',
            why: `an exchange's book could not be read: ${first instanceof Error ? first.message : String(first)}`,
            retryAfterMs: UNREADABLE_BOOK_RETRY_MS,
          };
    for (const orderId of orderIds) if (!found.has(orderId)) found.set(orderId, { status: 'AWAITED', unanswered });
    return found;
  }

  async placeBids(bids: readonly ExchangeBid[]): Promise<PlaceResult[]> {
    const results: PlaceResult[] = new Array<PlaceResult>(bids.length);
    const byExchange = new Map<string, number[]>();
    bids.forEach((bid, i) => byExchange.set(bid.exchange, [...(byExchange.get(bid.exchange) ?? []), i]));
    for (const [exchange, indexes] of byExchange) {
      const link = this.links.get(exchange);
      if (link === undefined) {
        for (const i of indexes) results[i] = { accepted: false, reason: `ordergate has no link to ${exchange}` };
        continue;
      }
      const answers = await link.placeBids(indexes.map((i) => bids[i]!));
      indexes.forEach((i, j) => (results[i] = answers[j]!));
    }
    return results;
  }

  modify(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.linkOf(bid.exchange).modify(bid, terms);
  }

  cancel(bid: ExchangeBid): Promise<ChangeResult> {
    return this.linkOf(bid.exchange).cancel(bid);
  }

  carryForward(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.linkOf(bid.exchange).carryForward(bid, terms);
  }

  async pollEvents(skip?: Pick<ReadonlySet<string>, 'has'>): Promise<ExchangeEvent[]> {
    const events: ExchangeEvent[] = [];
    for (const [exchange, link] of this.links) {
      const prefix = `${exchange}${SEPARATOR}`;
      const own = skip && { has: (id: string) => skip.has(`${prefix}${id}`) };
      for (const event of await link.pollEvents(own)) events.push({ ...event, eventId: `${prefix}${event.eventId}` });
    }
    return events;
  }

  async acknowledge(eventIds: readonly string[]): Promise<void> {
    const byExchange = new Map<string, string[]>();
    for (const id of eventIds) {
      const at = id.indexOf(SEPARATOR);
      const exchange = id.slice(0, at);
      byExchange.set(exchange, [...(byExchange.get(exchange) ?? []), id.slice(at + 1)]);
    }
    for (const [exchange, ids] of byExchange) await this.links.get(exchange)?.acknowledge(ids);
  }

  start(): void {
    for (const link of this.links.values()) link.start?.();
  }

  async stop(): Promise<void> {
    for (const link of this.links.values()) await link.stop?.();
  }

  async runOnce(): Promise<void> {
    for (const link of this.links.values()) await link.runOnce?.();
  }

  /** The book of the listing's exchange, from its link; null: that link has none to give (or no link reads books). */
  async readBook(exchange: string, symbol: string): Promise<ExchangeBook | null> {
    const link = this.links.get(exchange);
    if (link === undefined) throw new Error(`no exchange link for ${exchange}`);
    return (await link.readBook?.(exchange, symbol)) ?? null;
  }

  health(): LinkHealth[] {
    return [...this.links.values()].flatMap((link) => link.health?.() ?? []);
  }
}
