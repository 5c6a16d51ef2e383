/**
 * Row types of every table, as Kysely sees them. Times are epoch milliseconds; money is integer paise;
 * quantities are whole numbers. Both dialects store the same values.
 */
import type { Generated } from 'kysely';
import type { AuditTables } from './audit.js';
import type { IdempotencyTables } from './idempotency.js';
import type { WebhookTables } from './webhooks.js';

export interface UsersTable {
  user_id: string;
  password_hash: string;
  /** RETAIL (default) or NON_RETAIL: which OFS window and limits apply. */
  category: string;
  /** Base32 TOTP secret, or null when the user has no second factor. */
  totp_secret: string | null;
  created_at: number;
}

export interface ApiKeysTable {
  key_id: string;
  user_id: string;
  /** SHA-256 of the whole key; the key itself is shown once and never stored. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
}

export interface SessionsTable {
  /** SHA-256 of the access token; the token itself is never stored. */
  token_hash: string;
  user_id: string;
  created_at: number;
  expires_at: number;
  revoked_at: number | null;
}

export interface OfsIssuesTable {
  exchange: string;
  scrip_token: number;
  symbol: string;
  series: string;
  floor_price_paise: number;
  tick_size_paise: number;
  offer_quantity: number;
  retail_reserve_pct: number;
  retail_cutoff_price_paise: number | null;
  allocation: string;
  non_retail_opens_at: number;
  non_retail_closes_at: number;
  retail_opens_at: number;
  retail_closes_at: number;
  updated_at: number;
  /** When allocation ran for this issue; it runs once. */
  allocated_at: Generated<number | null>;
}

export interface OrdersTable {
  order_id: string;
  user_id: string;
  exchange: string;
  scrip_token: number;
  symbol: string;
  series: string;
  transaction_type: string;
  product_type: string;
  order_type: string;
  quantity: number;
  price_paise: number;
  disclosed_quantity: number;
  traded_quantity: number;
  status: string;
  error_reason: string | null;
  order_identifier: string | null;
  algo_id: string | null;
  strategy_id: string | null;
  part_code: string | null;
  vender_code: string | null;
  request_id: string | null;
  created_at: number;
  updated_at: number;
  /** RETAIL or NON_RETAIL: the caller's category when the order was placed. */
  category: Generated<string>;
  /** Set when the user asked to cancel; no further change is accepted after it. */
  cancel_requested_at: number | null;
  /** The price of the allotment, once EXECUTED. */
  traded_price_paise: number | null;
  /** The exchange's own id for the bid, once it accepted it. */
  exchange_order_id: string | null;
}

export interface OrderHistoryTable {
  id: Generated<number>;
  order_id: string;
  status: string;
  reason: string;
  quantity: number;
  price_paise: number;
  traded_quantity: number;
  at: number;
  /** Who made the change: the user, "oms" or "exchange" (null on rows older than the audit trail). */
  actor: string | null;
  /** The request that made the change, if a request did. */
  request_id: string | null;
}

/** Work for the OMS, written in the same transaction as the order change it describes. */
export interface OutboxTable {
  id: Generated<number>;
  order_id: string;
  /** PLACE, MODIFY or CANCEL. */
  action: string;
  created_at: number;
  claimed_by: string | null;
  claimed_until: number | null;
  done_at: number | null;
}

export interface OrderCartsTable {
  ordercart_id: string;
  /** The creator, who alone may see, change, execute or delete the cart. */
  user_id: string;
  name: string;
  /** The validated order lines as a JSON array text. */
  orders_json: string;
  version: string;
  executed_no_time: number;
  created_by: string;
  modified_by: string;
  /** Bumped on every change; the ETag is derived from it. */
  revision: number;
  created_at: number;
  updated_at: number;
}

/** The simulated exchange's book: one row per bid it received, keyed by our order id. */
export interface SimExchangeBidsTable {
  order_id: string;
  exchange_order_id: string;
  exchange: string;
  scrip_token: number;
  category: string;
  order_type: string;
  price_paise: number;
  quantity: number;
  /** LIVE, CANCELLED, ALLOTTED or NOT_ALLOTTED. */
  status: string;
  /** How many times a placement of this order reached the exchange (1 unless the OMS resent it). */
  transmissions: number;
  received_at: number;
  updated_at: number;
}

/** What the simulated exchange tells the OMS after allocation, delivered at least once. */
export interface SimExchangeEventsTable {
  id: Generated<number>;
  order_id: string;
  /** ALLOTTED or NOT_ALLOTTED. */
  kind: string;
  quantity: number;
  price_paise: number | null;
  reason: string;
  created_at: number;
  delivered_at: number | null;
}

export interface Database extends WebhookTables, IdempotencyTables, AuditTables {
  users: UsersTable;
  api_keys: ApiKeysTable;
  sessions: SessionsTable;
  ofs_issues: OfsIssuesTable;
  orders: OrdersTable;
  order_history: OrderHistoryTable;
  outbox: OutboxTable;
  order_carts: OrderCartsTable;
  sim_exchange_bids: SimExchangeBidsTable;
  sim_exchange_events: SimExchangeEventsTable;
}
