/**
 * The trade book, positions and holdings of the caller (docs/design/portfolio.md): every allotment is a
 * trade; a trade's shares are a position until it settles, then a holding. A user sees only their own.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { portfolioOf, tradesOfPositionType, type PositionType } from '../domain/funds/trades.js';
import { toHoldingEntry, toPositionEntry, toTradeEntry } from '../schemas/mappers/portfolio.js';
import type { PageMetadata } from '../schemas/odin-fields.js';
import {
  MAX_TRADE_ORDER_IDS,
  type HoldingEntry,
  type PositionEntry,
  type TradeBookQuery,
  type TradeEntry,
} from '../schemas/portfolio.js';
import type { TradeRepository } from '../store/funds/trades.js';
import type { Caller } from './auth.js';
import { pageOf } from './order-book.js';

export class PortfolioService {
  constructor(
    private readonly trades: TradeRepository,
    private readonly now: () => number,
  ) {}

  /** One page of the caller's trades, newest first; `order_id` and `order_ids` together select either's. */
  async tradeBook(caller: Caller, query: TradeBookQuery): Promise<{ data: TradeEntry[]; metadata: PageMetadata }> {
    const { page, pageSize } = pageOf(query);
    const listed = query.order_ids?.split(',') ?? [];
    if (listed.length > MAX_TRADE_ORDER_IDS) {
      throw new ApiError(
        Errors.INVALID_QUERY,
        `order_ids names ${listed.length} orders; at most ${MAX_TRADE_ORDER_IDS} are taken at once`,
        [{ field: 'order_ids', message: `at most ${MAX_TRADE_ORDER_IDS} order ids` }],
      );
    }
    const ids = [...(query.order_id === undefined ? [] : [query.order_id]), ...listed];
    const { trades, totalCount } = await this.trades.tradeBook({
      userId: caller.userId,
      orderIds: ids.length === 0 ? undefined : [...new Set(ids)],
      page,
      pageSize,
    });
    return { data: trades.map(toTradeEntry), metadata: { total_records: totalCount, offset: page, limit: pageSize } };
  }

  /** The caller's open positions of a type: allotted shares not yet settled. */
  async positions(caller: Caller, type: PositionType): Promise<PositionEntry[]> {
    // OFS shares do not expire: nothing to read for `expiry`.
    if (type === 'expiry') return [];
    const now = this.now();
    const open = await this.trades.unsettled(caller.userId, now);
    return portfolioOf(tradesOfPositionType(type, open, now)).map(toPositionEntry);
  }

  /** The caller's holdings: settled shares. */
  async holdings(caller: Caller): Promise<HoldingEntry[]> {
    return portfolioOf(await this.trades.settled(caller.userId, this.now())).map(toHoldingEntry);
  }
}
