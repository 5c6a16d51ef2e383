/**
 * The OMS's one port over several exchange links: each bid goes to the link of its exchange segment
 * (NSE_EQ, BSE_EQ), the book is read from every link (a listing's whole book from its own link), and their events come together, each event id
 * prefixed with its link's segment so that acknowledgements find their way back.
 */
import type { BidTerms } from '../../domain/ofs/rules.js';
import type {
  ChangeResult,
  ExchangeAdapter,
  ExchangeBid,
  ExchangeBook,
  ExchangeEvent,
  ExchangeOrder,
  LinkHealth,
  PlaceResult,
} from '../exchange.js';

const SEPARATOR = '|';

export class ExchangeRouter implements ExchangeAdapter {
  constructor(private readonly links: ReadonlyMap<string, ExchangeAdapter>) {
    if (links.size === 0) throw new Error('an exchange router needs at least one link');
  }

  private linkOf(exchange: string): ExchangeAdapter {
    const link = this.links.get(exchange);
    if (link === undefined) throw new Error(`no exchange link for ${exchange}`);
    return link;
  }

  async findBids(orderIds: readonly string[]): Promise<Map<string, ExchangeOrder>> {
    const found = new Map<string, ExchangeOrder>();
    if (orderIds.length === 0) return found;
    for (const link of new Set(this.links.values())) {
      for (const [orderId, bid] of await link.findBids(orderIds)) found.set(orderId, bid);
    }
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
