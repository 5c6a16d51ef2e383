/**
 * The trade book, positions and holdings of the caller (docs/design/portfolio.md): every allotment is a
 * trade; a trade's shares are a position until it settles, then a holding. A user sees only their own.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { formatPrice } from '../domain/ofs-issue.js';
import { odinTimestamp } from '../domain/odin.js';
import { portfolioOf, tradesOfPositionType, type PortfolioLine, type PositionType, type Trade } from '../domain/trades.js';
import type { PageMetadata } from '../schemas/odin-fields.js';
import { MAX_TRADE_ORDER_IDS, type HoldingEntry, type PositionEntry, type TradeBookQuery, type TradeEntry } from '../schemas/portfolio.js';
import type { TradeRepository } from '../store/trades.js';
import type { Caller } from './auth.js';
import { pageOf } from './order-book.js';

const ZERO = formatPrice(0);

export function toTradeEntry(trade: Trade): TradeEntry {
  return {
    trade_id: trade.tradeId,
    order_id: trade.orderId,
    exchange_order_no: trade.exchangeOrderId ?? '',
    exchange: trade.exchange,
    scrip_token: trade.scripToken,
    symbol: trade.symbol,
    series: trade.series,
    transaction_type: trade.transactionType,
    product_type: trade.productType,
    traded_quantity: trade.quantity,
    traded_price: formatPrice(trade.pricePaise),
    trade_timestamp: odinTimestamp(trade.tradedAt),
    order_identifier: trade.orderIdentifier ?? '',
    client_id: trade.userId,
  };
}

function toPositionEntry(line: PortfolioLine): PositionEntry {
  const average = formatPrice(line.averagePricePaise);
  return {
    exchange: line.exchange,
    scrip_token: line.scripToken,
    symbol: line.symbol,
    series: line.series,
    product_type: line.productType,
    buy_quantity: line.quantity,
    buy_average_price: average,
    buy_value: formatPrice(line.valuePaise),
    sell_quantity: 0,
    sell_average_price: ZERO,
    sell_value: ZERO,
    net_quantity: line.quantity,
    net_average_price: average,
    last_traded: odinTimestamp(line.lastTradedAt),
    settles_at: odinTimestamp(line.settlesAt),
  };
}

function toHoldingEntry(line: PortfolioLine): HoldingEntry {
  return {
    exchange: line.exchange,
    scrip_token: line.scripToken,
    symbol: line.symbol,
    series: line.series,
    product_type: line.productType,
    quantity: line.quantity,
    average_price: formatPrice(line.averagePricePaise),
    value: formatPrice(line.valuePaise),
    last_traded: odinTimestamp(line.lastTradedAt),
    settled_at: odinTimestamp(line.settlesAt),
  };
}

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
      throw new ApiError(Errors.INVALID_QUERY, `order_ids names ${listed.length} orders; at most ${MAX_TRADE_ORDER_IDS} are taken at once`, [
        { field: 'order_ids', message: `at most ${MAX_TRADE_ORDER_IDS} order ids` },
      ]);
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
