/**
 * Orders on the wire: the order book's and the order history's entries (ODIN's names and formats: prices
 * as strings, times in India time) and the order event, built from the domain's orders and changes.
 */
import { formatPrice } from '../../domain/ofs/issue/issue.js';
import { odinTimestamp } from '../../domain/orders/odin.js';
import type { Order, OrderEventRecord, RecordedChange } from '../../domain/orders/order.js';
import { isLiveStatus, OrderStatus } from '../../domain/orders/status.js';
import { ORDER_UPDATE_EVENT, type OrderEvent } from '../events.js';
import type { OrderBookEntry, OrderHistoryEntry } from '../orders.js';

const orEmpty = (value: string | null) => value ?? '';
const ZERO_PRICE = formatPrice(0);

/** An order under ODIN's order-book names and formats (prices as strings, times in India time). */
export function toOrderBookEntry(order: Order): OrderBookEntry {
  return {
    order_id: order.orderId,
    exchange: order.exchange,
    scrip_token: order.scripToken,
    symbol: order.symbol,
    series: order.series,
    transaction_type: order.transactionType,
    product_type: order.productType,
    order_type: order.orderType,
    status: order.status,
    total_quantity: order.quantity,
    traded_quantity: order.tradedQuantity,
    // A finished order has nothing left working: what was not allotted is cancelled.
    pending_quantity: isLiveStatus(order.status) ? order.quantity - order.tradedQuantity : 0,
    disclosed_quantity: order.disclosedQuantity,
    order_price: formatPrice(order.pricePaise),
    trigger_price: ZERO_PRICE,
    traded_price: order.tradedPricePaise === null ? ZERO_PRICE : formatPrice(order.tradedPricePaise),
    validity: 'DAY',
    validity_days: 0,
    order_timestamp: odinTimestamp(order.createdAt),
    // The exchange's last report is the order's last change once the exchange has it.
    exchange_timestamp: order.exchangeOrderId === null ? '' : odinTimestamp(order.updatedAt),
    last_modified: odinTimestamp(order.updatedAt),
    error_reason: orEmpty(order.errorReason),
    exchange_order_no: orEmpty(order.exchangeOrderId),
    client_id: order.userId,
    order_identifier: orEmpty(order.orderIdentifier),
    algo_id: orEmpty(order.algoId),
    strategy_id: orEmpty(order.strategyId),
    part_code: orEmpty(order.partCode),
    vender_code: orEmpty(order.venderCode),
    category: order.category,
    offer_id: orEmpty(order.offerId),
    bid_category: orEmpty(order.offerCategory),
    margin_type: orEmpty(order.marginType),
    carried_forward: order.carriedForwardAt !== null,
  };
}

/** Statuses of an order the exchange does not have (yet, or ever). */
const BEFORE_THE_EXCHANGE: readonly OrderStatus[] = [
  OrderStatus.OMSXMITTED,
  OrderStatus.EXXMITTED,
  OrderStatus.OMSREJECT,
];

/**
 * One change of the order: the order as that change left it (status, quantities, price, and the reason
 * of a rejection or a non-allotment), the rest as the order is now.
 */
export function toOrderHistoryEntry(order: Order, change: RecordedChange): OrderHistoryEntry {
  const finishedUnfilled = !isLiveStatus(change.status) && change.status !== OrderStatus.EXECUTED;
  const entry = toOrderBookEntry({
    ...order,
    status: change.status,
    quantity: change.quantity,
    pricePaise: change.pricePaise,
    tradedQuantity: change.tradedQuantity,
    updatedAt: change.at,
    errorReason: finishedUnfilled ? order.errorReason : null,
    // The price the change left the order with (entries older than migration 0014 keep none: the order's).
    tradedPricePaise: change.tradedQuantity > 0 ? (change.tradedPricePaise ?? order.tradedPricePaise) : null,
    exchangeOrderId: BEFORE_THE_EXCHANGE.includes(change.status) ? null : order.exchangeOrderId,
  });
  return { ...entry, reason: change.reason };
}

/** An event on the wire: the change, and the order as that change left it (as its history entry shows it). */
export function toOrderEvent(row: OrderEventRecord): OrderEvent {
  const { reason: _reason, ...order } = toOrderHistoryEntry(row.order, row.change);
  return {
    event_id: row.eventId,
    type: ORDER_UPDATE_EVENT,
    order_id: row.order.orderId,
    status: row.change.status,
    reason: row.change.reason,
    at: new Date(row.change.at).toISOString(),
    order,
  };
}
