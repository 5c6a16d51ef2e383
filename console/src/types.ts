/**
 * The wire shapes the console reads. The answers' shapes are the client package's, generated from
 * docs/openapi.json (type-only imports, which the bundle drops), so that they cannot drift from the API;
 * the request lines it writes and the event stream's events are its own.
 */
import type { SuccessBody } from '../../packages/client/src/types.js';


export interface FieldError {
  field: string;
  message: string;
}

export interface Envelope<T> {
  status: 'success';
  code: string;
  message: string;
  data: T;
  metadata?: { total_records: number; offset: number; limit: number };
}

export interface ErrorEnvelope {
  status: 'error';
  code: string;
  message: string;
  errors: FieldError[];
  request_id?: string;
}

export interface LoginAnswer {
  access_token: string;
  user_id: string;
  expires_at: string;
}







export interface OrderEvent {
  event_id: number;
  type: 'order_update';
  order_id: string;
  status: OrderStatus;
  reason: string;
  at: string;
  order: Order;
}

export interface OrderHistoryEntry {
  status: string;
  reason?: string;
  [field: string]: unknown;
}

export interface ScripDetail {
  symbol: string;
  _Series: string;
  _InstrumentName: string;
  _ExchangeName: string;
  MarketLot: number;
  PriceTick: number;
  scripToken?: number;
  [field: string]: unknown;
}

export interface CartLine {
  scripDetail: ScripDetail;
  TransactionType: 'BUY' | 'SELL';
  OrderType: 'RL' | 'RL-MKT' | 'SL' | 'SL-MKT';
  Quantity: number;
  Price: string;
  ProductType: 'INTRADAY' | 'DELIVERY' | 'BTST' | 'MTF' | 'OFS';
  validity?: string;
  [field: string]: unknown;
}

export interface Cart {
  ordercartId: string;
  ordercartName: string;
  orders: CartLine[];
  executedNoTime: number;
  createdAt: string;
  modifiedAt: string;
}

export type CartLineResult =
  | { index: number; status: 'success'; orderId: string }
  | { index: number; status: 'error'; code: string; message: string; errors: FieldError[] };








export type Profile = SuccessBody<'/authentication/v1/user/profile', 'get'>['data'];
export type OfsIssues = SuccessBody<'/transactional/v1/ofs/issues', 'get'>['data'];
export type OfsIssue = OfsIssues['issues'][number];
export type WindowState = OfsIssue['retail_window'];
export type Order = SuccessBody<'/transactional/v1/orders', 'get'>['data'][number];
export type OrderStatus = Order['status'];
export type Balance = SuccessBody<'/authentication/v1/user/balance', 'get'>['data'];
export type Position = SuccessBody<'/transactional/v1/portfolio/positions/{type}', 'get'>['data'][number];
export type Holding = SuccessBody<'/transactional/v1/portfolio/holdings', 'get'>['data'][number];
export type OfsBook = SuccessBody<'/operator/v1/ofs/{exchange}/{scrip_token}/book', 'get'>['data'];
export type DemandLevel = OfsBook['demand'][number];
/** What one category's demand implies, by the allocation's rules, as if the windows closed now. */
export type CategoryClearing = OfsBook['clearing']['retail'];
export type AllottedLevel = NonNullable<OfsBook['allotted']>['by_price'][number];
