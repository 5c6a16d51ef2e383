/**
 * Wire shapes of the live order socket's messages (odin-compat.md, "The live order socket"): ODIN's field
 * names and codes, as src/domain/orders/socket-messages.ts writes them.
 */
import Type, { type Static } from 'typebox';
import { SOCKET_DAY_VALIDITY, SOCKET_PRODUCT_CODE } from '../domain/orders/odin.js';
import {
  ORDER_MESSAGE_TYPE,
  SOCKET_INSTRUMENT_NAME,
  TRADE_MESSAGE_TYPE,
  type OrderMessage as OrderMessageOfDomain,
  type TradeMessage as TradeMessageOfDomain,
} from '../domain/orders/socket-messages.js';

const Code = (description: string) => Type.Integer({ description });
const Quantity = (description: string) => Type.Integer({ minimum: 0, description });
const Paise = (description: string) => Type.Integer({ minimum: 0, description });
const SocketTime = (description: string) =>
  Type.String({
    pattern: '^([0-9]{2}-[A-Z][a-z]{2}-[0-9]{4} [0-9]{2}\\.[0-9]{2}\\.[0-9]{2})?$',
    description,
    examples: ['23-Nov-2026 11.34.54'],
  });

/** The fields of both message types. */
const ORDER_MESSAGE_FIELDS = {
  UniqueCode: Type.String({ description: 'The order id (order_id of the REST answers).' }),
  Exchange: Code('1 NSE_EQ, 3 BSE_EQ.'),
  ScripCode: Type.Integer({ description: 'The scrip token.' }),
  OrderNumber: Type.String({ description: 'The exchange order number; "" until the exchange has the order.' }),
  OrderStatus: Code('3 OMSXMITTED, 4 EXXMITTED, 5 PENDING, 6 CANCELLED, 7 EXECUTED, 10 OMSREJECT, 11 ORDERERROR.'),
  Reason: Type.String({ description: 'Why the order was rejected, cancelled or not allotted; "" otherwise.' }),
  Buy_Sell: Code('1 BUY, 2 SELL.'),
  Product: Type.Literal(SOCKET_PRODUCT_CODE, { description: 'D (delivery): ODIN clients know no OFS product code.' }),
  OrderType: Code('1 RL (limit), 2 RL-MKT (cut-off).'),
  OrderOriginalQty: Quantity('The quantity bid for.'),
  PendingQty: Quantity('OrderOriginalQty - TradedQTY while the order is live; 0 once it is finished.'),
  TradedQTY: Quantity('The quantity allotted; 0 until the allotment.'),
  DQ: Quantity('The disclosed quantity.'),
  OrderPrice: Paise('The bid price in paise (10150 = Rs 101.50); 0 for a cut-off bid.'),
  TriggerPrice: Paise('Always 0: an OFS bid has no trigger.'),
  OrderValidity: Type.Literal(SOCKET_DAY_VALIDITY, { description: '"1" (a string): DAY.' }),
  Days: Quantity('Validity days: 0.'),
  Symbol: Type.String(),
  Series: Type.String(),
  InstrumentName: Type.Literal(SOCKET_INSTRUMENT_NAME),
  ExpiryDate: Type.Literal('', { description: 'An OFS instrument does not expire.' }),
  StrikePrice: Type.Literal(0, { description: 'An OFS instrument has no strike.' }),
  Option_Type: Type.Literal('', { description: 'An OFS instrument is no option.' }),
  OrderEntryTime: SocketTime('When the order was placed, India time.'),
  LastModifiedTime: SocketTime('When this change happened, India time.'),
  InitiatedBy: Type.String({ description: 'The user who placed the order.' }),
  ModifiedBy: Type.String({ description: 'The user the order belongs to (only its owner modifies or cancels it).' }),
  UserRemarks: Type.String({ description: 'The order_identifier sent with the order; "" when none.' }),
  AlgoId: Type.String({
    description:
      'The algo ID the order carries (its algo_id in the order book); "" when none. ordergate\'s own field, beside ODIN\'s.',
  }),
};

export const OrderMessage = Type.Object(
  { MessageType: Type.Literal(ORDER_MESSAGE_TYPE), ...ORDER_MESSAGE_FIELDS },
  { additionalProperties: false, description: 'One change of one of your orders.' },
);

export const TradeMessage = Type.Object(
  {
    MessageType: Type.Literal(TRADE_MESSAGE_TYPE),
    ...ORDER_MESSAGE_FIELDS,
    TradeNumber: Type.String({ description: "The trade's id, as the trade book lists it (trade_id)." }),
    TradeQty: Quantity('The quantity of this trade: the allotted quantity.'),
    TradedPrice: Paise('The price of this trade in paise: the clearing price of the allotment.'),
    TradeTime: SocketTime('When the allotment was made, India time.'),
  },
  { additionalProperties: false, description: 'A trade of one of your orders: an allotment.' },
);

export type OrderMessage = OrderMessageOfDomain;
export type TradeMessage = TradeMessageOfDomain;

// Each schema is the domain's message, field for field (compile-time checks, exported only so that
// noUnusedLocals keeps them).
type Holds<Claim extends true> = Claim;
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
export type _OrderMessageIsTheDomains = Holds<Same<Static<typeof OrderMessage>, OrderMessage>>;
export type _TradeMessageIsTheDomains = Holds<Same<Static<typeof TradeMessage>, TradeMessage>>;
