/**
 * The live order socket's messages (odin-compat.md, "The live order socket"): an order event as ODIN's
 * `ORD_NRML`, and an allotment also as a `TRD_MSG`. ODIN's SDK maps the codes through fixed tables and fails
 * on anything else, so the expected codes below are the spec's own numbers, not the implementation's tables.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { odinMessagesOf, paiseOfRestPrice, socketTimeOfRestTime } from '../../src/domain/orders/socket-messages.js';
import { OrderMessage, TradeMessage } from '../../src/schemas/socket-messages.js';
import { odinTimestamp, socketTimestamp } from '../../src/domain/orders/odin.js';
import { acceptedOrder, type Order } from '../../src/domain/orders/order.js';
import { OrderStatus } from '../../src/domain/orders/status.js';
import { createAjv } from '../../src/schemas/validator.js';
import { toOrderEvent } from '../../src/schemas/mappers/orders.js';

const PLACED_AT = Date.parse('2026-11-23T06:04:54.250Z'); // 23-Nov-2026 11.34.54 in India
const CHANGED_AT = PLACED_AT + 61_000;

function bid(overrides: Partial<Order> = {}): Order {
  return {
    ...acceptedOrder(
      {
        orderId: 'ord-1',
        userId: 'alice',
        exchange: 'NSE_EQ',
        scripToken: 500112,
        symbol: 'SBIN',
        series: 'OF',
        transactionType: 'BUY',
        productType: 'OFS',
        orderType: 'RL',
        quantity: 10,
        pricePaise: 10150,
        disclosedQuantity: 0,
        orderIdentifier: 'my-tag',
        algoId: null,
        strategyId: null,
        partCode: null,
        venderCode: null,
        requestId: null,
        category: 'RETAIL',
        offerId: null,
        offerCategory: null,
        marginType: null,
      },
      PLACED_AT,
    ),
    ...overrides,
  };
}

function messagesOf(status: OrderStatus, order: Order, at = CHANGED_AT) {
  // As the history records it: nothing traded until the change that allots.
  const tradedQuantity = status === OrderStatus.EXECUTED ? order.tradedQuantity : 0;
  const change = {
    orderId: order.orderId,
    status,
    reason: 'why',
    quantity: order.quantity,
    pricePaise: order.pricePaise,
    tradedQuantity,
    tradedPricePaise: tradedQuantity > 0 ? order.tradedPricePaise : null,
    at,
    actor: null,
    requestId: null,
  };
  return odinMessagesOf(toOrderEvent({ eventId: 7, historyId: 70, userId: order.userId, change, order }));
}

const ajv = createAjv();
const isOrderMessage = ajv.compile(OrderMessage);
const isTradeMessage = ajv.compile(TradeMessage);

/** The spec's tables (odin-compat.md), written out. */
const STATUS_CODES = {
  OMSXMITTED: 3,
  EXXMITTED: 4,
  PENDING: 5,
  CANCELLED: 6,
  EXECUTED: 7,
  OMSREJECT: 10,
  ORDERERROR: 11,
} as const;

describe('ORD_NRML: one message per order change', () => {
  it('carries every field of the spec table with its JSON type and code', () => {
    const order = bid({
      status: OrderStatus.PENDING,
      exchangeOrderId: 'NSE-42',
      updatedAt: CHANGED_AT,
      algoId: 'ALGO-7',
    });
    const [message, ...rest] = messagesOf(OrderStatus.PENDING, order);
    expect(rest).toEqual([]);
    expect(message).toEqual({
      MessageType: 'ORD_NRML',
      UniqueCode: 'ord-1',
      Exchange: 1,
      ScripCode: 500112,
      OrderNumber: 'NSE-42',
      OrderStatus: 5,
      Reason: '',
      Buy_Sell: 1,
      Product: 'D',
      OrderType: 1,
      OrderOriginalQty: 10,
      PendingQty: 10,
      TradedQTY: 0,
      DQ: 0,
      OrderPrice: 10150,
      TriggerPrice: 0,
      OrderValidity: '1',
      Days: 0,
      Symbol: 'SBIN',
      Series: 'OF',
      InstrumentName: 'EQUITY',
      ExpiryDate: '',
      StrikePrice: 0,
      Option_Type: '',
      OrderEntryTime: '23-Nov-2026 11.34.54',
      LastModifiedTime: '23-Nov-2026 11.35.55',
      InitiatedBy: 'alice',
      ModifiedBy: 'alice',
      UserRemarks: 'my-tag',
      AlgoId: 'ALGO-7',
    });
    expect(isOrderMessage(message), JSON.stringify(isOrderMessage.errors)).toBe(true);
  });

  it.each(Object.entries(STATUS_CODES))('maps %s to OrderStatus %i', (status, code) => {
    const order = bid({ status: status as OrderStatus, errorReason: 'refused', exchangeOrderId: 'NSE-42' });
    const [message] = messagesOf(status as OrderStatus, order);
    expect(message!.OrderStatus).toBe(code);
    expect(isOrderMessage(message), JSON.stringify(isOrderMessage.errors)).toBe(true);
  });

  it('maps the exchange (1 NSE_EQ, 3 BSE_EQ) and the order type (1 RL, 2 RL-MKT, price 0)', () => {
    const [nse] = messagesOf(OrderStatus.OMSXMITTED, bid());
    const [bse] = messagesOf(OrderStatus.OMSXMITTED, bid({ exchange: 'BSE_EQ', orderType: 'RL-MKT', pricePaise: 0 }));
    expect([nse!.Exchange, nse!.OrderType]).toEqual([1, 1]);
    expect([bse!.Exchange, bse!.OrderType, bse!.OrderPrice]).toEqual([3, 2, 0]);
  });

  it('describes the change, not the order as it is now: status, time, exchange order number, quantities', () => {
    // The event of the placement is sent after the order has already gone on to the exchange.
    const now = bid({ status: OrderStatus.PENDING, exchangeOrderId: 'NSE-42', updatedAt: CHANGED_AT + 500 });
    const [placed] = messagesOf(OrderStatus.OMSXMITTED, now, PLACED_AT);
    expect(placed).toMatchObject({
      OrderStatus: 3,
      OrderNumber: '',
      LastModifiedTime: '23-Nov-2026 11.34.54',
      PendingQty: 10,
      TradedQTY: 0,
    });
    const [sent] = messagesOf(OrderStatus.EXXMITTED, now);
    expect(sent!.OrderNumber).toBe('');
    const [open] = messagesOf(OrderStatus.PENDING, now);
    expect(open!.OrderNumber).toBe('NSE-42');
  });

  it('gives the reason of a rejection, a cancellation or a non-allotment, and nothing to pend once finished', () => {
    for (const status of [OrderStatus.OMSREJECT, OrderStatus.ORDERERROR, OrderStatus.CANCELLED]) {
      const [message] = messagesOf(
        status,
        bid({ status, errorReason: 'Not allotted: at close the bid was below the cut-off' }),
      );
      expect(message).toMatchObject({
        Reason: 'Not allotted: at close the bid was below the cut-off',
        PendingQty: 0,
        TradedQTY: 0,
      });
    }
    // A reason the order picked up later is not the reason of an earlier, live change.
    const [live] = messagesOf(
      OrderStatus.PENDING,
      bid({ status: OrderStatus.CANCELLED, errorReason: 'Cancelled by the user' }),
    );
    expect(live).toMatchObject({ Reason: '', PendingQty: 10 });
  });

  it('leaves UserRemarks empty for an order without order_identifier', () => {
    const [message] = messagesOf(OrderStatus.OMSXMITTED, bid({ orderIdentifier: null }));
    expect(message!.UserRemarks).toBe('');
  });

  it("refuses a value outside ODIN's code tables rather than send a message the client cannot read", () => {
    expect(() => messagesOf(OrderStatus.PENDING, bid({ exchange: 'MCX' }))).toThrow(RangeError);
    expect(() => messagesOf(OrderStatus.PENDING, bid({ orderType: 'SL' }))).toThrow(RangeError);
    expect(() => messagesOf('QUEUED' as OrderStatus, bid())).toThrow(RangeError);
  });
});

describe('TRD_MSG: one more message for an allotment', () => {
  const allotted = bid({
    status: OrderStatus.EXECUTED,
    tradedQuantity: 8,
    tradedPricePaise: 10100,
    exchangeOrderId: 'NSE-42',
    updatedAt: CHANGED_AT,
  });

  it("follows the ORD_NRML of the EXECUTED change, with the same fields and the trade's quantity, price and time", () => {
    const [order, trade, ...rest] = messagesOf(OrderStatus.EXECUTED, allotted);
    expect(rest).toEqual([]);
    expect(order).toMatchObject({
      MessageType: 'ORD_NRML',
      OrderStatus: 7,
      TradedQTY: 8,
      PendingQty: 0,
      OrderOriginalQty: 10,
    });
    const { MessageType, TradeNumber, TradeQty, TradedPrice, TradeTime, ...orderFields } = trade as TradeMessage;
    expect(MessageType).toBe('TRD_MSG');
    expect({ MessageType: 'ORD_NRML', ...orderFields }).toEqual(order);
    expect({ TradeNumber, TradeQty, TradedPrice, TradeTime }).toEqual({
      TradeNumber: `T-${allotted.orderId}`,
      TradeQty: 8,
      TradedPrice: 10100,
      TradeTime: '23-Nov-2026 11.35.55',
    });
    expect(isOrderMessage(order), JSON.stringify(isOrderMessage.errors)).toBe(true);
    expect(isTradeMessage(trade), JSON.stringify(isTradeMessage.errors)).toBe(true);
  });

  it('is not sent for an order that finished without allotment', () => {
    expect(messagesOf(OrderStatus.CANCELLED, bid({ status: OrderStatus.CANCELLED }))).toHaveLength(1);
    expect(messagesOf(OrderStatus.EXECUTED, bid({ status: OrderStatus.EXECUTED, tradedQuantity: 0 }))).toHaveLength(1);
  });

  it('is not sent for the earlier changes of an order allotted since', () => {
    expect(messagesOf(OrderStatus.PENDING, allotted)).toEqual([
      expect.objectContaining({ MessageType: 'ORD_NRML', OrderStatus: 5, TradedQTY: 0, PendingQty: 10 }),
    ]);
  });
});

describe('formats', () => {
  it('turns any REST time into the socket time of the same instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.parse('2100-01-01T00:00:00Z') }), (at) => {
        expect(socketTimeOfRestTime(odinTimestamp(at))).toBe(socketTimestamp(at));
      }),
    );
    expect(socketTimeOfRestTime('')).toBe('');
    expect(() => socketTimeOfRestTime('2026-04-17T12:46:34')).toThrow(RangeError);
  });

  it('reads a REST price as whole paise, exactly', () => {
    expect(paiseOfRestPrice('101.50')).toBe(10150);
    expect(paiseOfRestPrice('0.00')).toBe(0);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), (paise) => {
        const text = `${Math.floor(paise / 100)}.${String(paise % 100).padStart(2, '0')}`;
        expect(paiseOfRestPrice(text)).toBe(paise);
      }),
    );
    expect(() => paiseOfRestPrice('101.5')).toThrow(RangeError);
  });
});
