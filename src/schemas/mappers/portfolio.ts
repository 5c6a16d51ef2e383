/** Trades, positions and holdings on the wire, under ODIN's names and formats, from the domain's trades. */
import { formatPrice } from '../../domain/ofs/issue/issue.js';
import { odinTimestamp } from '../../domain/orders/odin.js';
import type { PortfolioLine, Trade } from '../../domain/funds/trades.js';
import type { HoldingEntry, PositionEntry, TradeEntry } from '../portfolio.js';

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

export function toPositionEntry(line: PortfolioLine): PositionEntry {
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

export function toHoldingEntry(line: PortfolioLine): HoldingEntry {
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
