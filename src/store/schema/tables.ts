/**
 * Row types of every table, as Kysely sees them. Times are epoch milliseconds; money is integer paise;
 * quantities are whole numbers. Both dialects store the same values.
 */
import type { Generated } from 'kysely';

export interface UsersTable {
  user_id: string;
  password_hash: string;
  /** RETAIL (default), NII, MF, IC or OTHS (migration 0013; NON_RETAIL before it): the OFS bidder category. */
  category: string;
  /** Base32 TOTP secret, or null when the user has no second factor. */
  totp_secret: string | null;
  /** The TOTP time step of the last code a login accepted (a code works once), or null. */
  totp_last_step: number | null;
  created_at: number;
  /** When the operator disabled the user (no login, no session authenticates), or null (migration 0010). */
  disabled_at: Generated<number | null>;
  /** When the user was made an operator (the OFS book of every issue), or null (migration 0012). */
  operator_since: Generated<number | null>;
  /** H (100 % margin) or T (0 % margin, an institution whose custodian confirms) (migration 0013). */
  margin_type: Generated<string>;
  /** When the operator exempted the user from the second factor at login, or null (migration 0018). */
  second_factor_exempt_at: Generated<number | null>;
  /** TOTP codes checked since the user's last login that passed (migration 0021). */
  totp_failures: Generated<number>;
  /** When the last of them was counted, or null. */
  totp_failed_at: Generated<number | null>;
  /** When the second factor was locked after too many wrong codes, or null: not locked. */
  totp_locked_at: Generated<number | null>;
  /** The most the user's live 0 %-margin bids may total, in paise; null: none set, none taken (migration 0022). */
  zero_margin_limit_paise: Generated<number | string | null>;
  /** The client's Unique Client Code at the exchanges, unique; null: not recorded (migration 0024). */
  ucc: Generated<string | null>;
  /** The client's PAN; users may share one; null: not recorded. */
  pan: Generated<string | null>;
  /** CLI (default) or PRO. */
  client_type: Generated<string>;
  /** The custodian's participant id (MF, IC, OTHS and 0 %-margin bids); null: none. */
  custodian_code: Generated<string | null>;
}

/** Every lock and unlock of a user's second factor (migration 0021): the lockout's audit. */
export interface SecondFactorEventsTable {
  id: Generated<number>;
  user_id: string;
  at: number;
  /** locked or unlocked. */
  event: string;
  /** system (the lockout) or operator (`ordergate users totp-unlock`, a new secret). */
  actor: string;
  detail: string;
}

export interface ApiKeysTable {
  key_id: string;
  user_id: string;
  /** SHA-256 of the whole key; the key itself is shown once and never stored. */
  key_hash: string;
  created_at: number;
  revoked_at: number | null;
  /** The registered addresses, canonical, comma-separated, the primary first (migration 0017); null: none. */
  allowed_ips: Generated<string | null>;
  /** When the addresses were last set. */
  ips_changed_at: Generated<number | null>;
}

/** Every setting of a key's addresses (migration 0017). */
export interface ApiKeyAddressChangesTable {
  id: Generated<number>;
  key_id: string;
  at: number;
  previous_ips: string | null;
  allowed_ips: string;
  /** 1 when the operator overrode the once-a-week rule. */
  override: number;
}

/** An algo registered with an exchange (migration 0018). */
export interface AlgosTable {
  algo_id: string;
  exchange: string;
  approval_ref: string;
  name: string | null;
  registered_at: number;
  disabled_at: number | null;
  disabled_reason: string | null;
}

/** Who may send orders with an algo (migration 0018). */
export interface AlgoUsersTable {
  algo_id: string;
  user_id: string;
  added_at: number;
}

/** Every registration, stop and start of an algo (migration 0018). */
export interface AlgoChangesTable {
  id: Generated<number>;
  algo_id: string;
  at: number;
  /** register, add-users, disable, cancel-orders (what a stop cancelled) or enable. */
  action: string;
  /** Who did it: the operator's login on the machine that ran the command. */
  actor: string;
  reason: string | null;
  /** What it did, e.g. the users added or the orders cancelled. */
  detail: string;
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
  /** From an allotment to its settlement (ms); null: T+1 (migration 0008). */
  settlement_delay_ms: Generated<number | null>;
  /** The series' order value upper limit in paise; null: none (migration 0023). */
  value_limit_paise: Generated<number | string | null>;
}

/** An OFS offer under the SEBI framework (migration 0013, docs/design/ofs.md). */
export interface OfsOffersTable {
  offer_id: string;
  symbol: string;
  floor_price_paise: number;
  tick_size_paise: number;
  base_quantity: number;
  green_shoe_quantity: number;
  /** Shares of the green shoe exercised (migration 0020; before it, 0 or 1). */
  green_shoe_exercised: number;
  /** When the operator recorded the seller's decision (migration 0020). */
  green_shoe_decided_at: number | null;
  /** The decision's deadline: the T allocation waits for it until then. */
  green_shoe_decision_by: number;
  employee_green_shoe_quantity: number;
  /** The portions as the notice printed them, for the green shoe printed_green_shoe; null: none printed. */
  printed_green_shoe: number | null;
  printed_retail_reserved: number | null;
  printed_non_retail: number | null;
  printed_mf_ic_reserved: number | null;
  printed_employee: number | null;
  retail_reserve_pct: number;
  /** A discount is rupees off (paise) or a percentage (basis points), or neither. */
  retail_discount_paise: number | null;
  retail_discount_bp: number | null;
  retail_allocation_price: string;
  employee_quantity: number;
  employee_discount_paise: number | null;
  employee_discount_bp: number | null;
  allocation: string;
  t_opens_at: number;
  t_closes_at: number;
  t1_opens_at: number;
  t1_closes_at: number;
  settlement_delay_ms: number | null;
  t_allocated_at: Generated<number | null>;
  t_cutoff_price_paise: Generated<number | null>;
  t_unallotted: Generated<number | null>;
  t1_allocated_at: Generated<number | null>;
  cancelled_at: Generated<number | null>;
  /** The operator's decision to allot an under-subscribed T day anyway (migration 0014). */
  t_proceed_at: Generated<number | null>;
  /** When the exchange held the T allocation for the operator (demand after the cap short; migration 0022). */
  t_held_at: Generated<number | null>;
  /** The retail cut-off the T+1 allocation found. */
  t1_retail_cutoff_price_paise: Generated<number | null>;
  updated_at: number;
}

/** The indicative price an offer's exchange published at one instant of T (migration 0014). */
export interface OfsOfferIndicativeTable {
  offer_id: string;
  at: number;
  price_paise: number | null;
  /** Shares: written as the digits of a bigint, read as text (indicativeColumns), so that no sum is rounded. */
  quantity: number | string;
  price_h_paise: number | null;
  quantity_h: number | string;
  price_t_paise: number | null;
  quantity_t: number | string;
}

/** One listing of an offer: the instrument bids name, with each category's series. */
export interface OfsOfferListingsTable {
  exchange: string;
  scrip_token: number;
  offer_id: string;
  series_retail: string;
  series_non_retail: string;
  series_employee: string | null;
  /** Each series' order value upper limit (NSE's orderValueUpperLimit), in paise; null: none (migration 0022). */
  value_limit_retail_paise: Generated<number | null>;
  value_limit_non_retail_paise: Generated<number | null>;
  value_limit_employee_paise: Generated<number | null>;
}

/** A user the operator registered as an eligible employee of an offer. */
export interface OfsOfferEmployeesTable {
  offer_id: string;
  user_id: string;
  registered_at: number;
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
  /** The funds the order blocks now (docs/design/funds.md); null when its bidder is not funds-checked. */
  funds_blocked_paise: number | null;
  /** A bid in an offer (migration 0014): the offer, the bid's category and margin type; null on an issue's bids. */
  offer_id: Generated<string | null>;
  offer_category: Generated<string | null>;
  margin_type: Generated<string | null>;
  /** When the bidder carried the unallotted bid forward to T+1. */
  carried_forward_at: Generated<number | null>;
  /** The client's member data when the bid was placed (migration 0025): UCC, CLI or PRO, custodian, PAN. */
  ucc: Generated<string | null>;
  client_type: Generated<string | null>;
  custodian_code: Generated<string | null>;
  pan: Generated<string | null>;
}

export interface OrderHistoryTable {
  id: Generated<number>;
  order_id: string;
  status: string;
  reason: string;
  quantity: number;
  price_paise: number;
  traded_quantity: number;
  /** The order's traded price after the change (migration 0014; null before it, and while nothing is allotted). */
  traded_price_paise: Generated<number | null>;
  at: number;
  /** Who made the change: the user, "oms" or "exchange" (null on rows older than the audit trail). */
  actor: string | null;
  /** The request that made the change, if a request did. */
  request_id: string | null;
  /** The order's owner (migration 0016). */
  user_id: string;
  /** The event's id as its user sees it: their n-th order event has n (migration 0016). */
  user_event_id: number;
}

/** The last order-event id each user was given (migration 0016). */
export interface UserEventCountersTable {
  user_id: string;
  last_event_id: number;
}

/** The lease of an exchange API user's session: the node that holds it sends (migration 0026). */
export interface ExchangeSessionsTable {
  name: string;
  holder: string;
  held_until: number;
}

/** The short references of our bids on a narrow wire (migration 0028). */
export interface ExchangeReferencesTable {
  /** The reference is `OG` and this in base 36, upper case. */
  id: Generated<number>;
  exchange: string;
  order_id: string;
}

/** The exchange's last answer for one of its listings, as read (migration 0030; NSE's activeSecurities). */
export interface ExchangeListingTermsTable {
  exchange: string;
  symbol: string;
  /** The exchange's entry for the listing, as JSON. */
  terms: string;
  read_at: number;
}

/** When an exchange's listings were last read, and the last read that failed (migration 0030). */
export interface ExchangeTermsReadsTable {
  exchange: string;
  read_at: number | null;
  error: string | null;
  error_at: number | null;
}

/** A reconciliation of one listing of an offer: the operator's request, then its report (migration 0029). */
export interface OfsReconciliationsTable {
  id: Generated<number>;
  offer_id: string;
  exchange: string;
  symbol: string;
  /** close-T, close-T1 or operator. */
  trigger: string;
  /** `<offer>|<exchange>|<trigger>` for a close's run (one per close and listing); null: the operator's. */
  close_key: string | null;
  requested_by: string | null;
  requested_at: number;
  /** QUEUED, DONE or FAILED. */
  state: string;
  claimed_by: string | null;
  claimed_until: number | null;
  run_at: number | null;
  book_as_of: number | null;
  ours_count: number | null;
  book_count: number | null;
  matched_count: number | null;
  in_flight_count: number | null;
  differences_count: number | null;
  /** The differences per kind, a JSON object. */
  counts_json: string | null;
  /** The differences, a JSON array (src/domain/ofs/reconciliation.ts's Difference). */
  differences_json: string | null;
  error: string | null;
}

/** How far the OMS has applied an exchange link's message stream (migration 0027). */
export interface ExchangeStreamCursorsTable {
  name: string;
  seq: number;
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
  /** A bid in an offer (migration 0014): the offer, the bidder (the single-bidder cap), the margin type. */
  offer_id: Generated<string | null>;
  user_id: Generated<string | null>;
  margin_type: Generated<string | null>;
  /** Shares allotted on T (a non-retail bid allotted in part stays live for T+1). */
  t_allotted: Generated<number>;
  /** 1 once the bidder carried it forward to T+1. */
  carried_forward: Generated<number>;
}

/** What the simulated exchange tells the OMS after allocation, delivered at least once. */
export interface SimExchangeEventsTable {
  id: Generated<number>;
  order_id: string;
  /** ALLOTTED or NOT_ALLOTTED (final); PART_ALLOTTED or NOTE (an offer's T allocation: the bid stays live). */
  kind: string;
  quantity: number;
  price_paise: number | null;
  reason: string;
  created_at: number;
  delivered_at: number | null;
  /** An offer's allotment: the day it belongs to, T or T+1 (migration 0020); null otherwise. */
  day: Generated<string | null>;
}

/** The OMS's failures on one instrument, and whether it is set aside (migration 0020). */
export interface OmsInstrumentFaultsTable {
  instrument: string;
  step: string;
  failures: number;
  first_failed_at: number;
  last_failed_at: number;
  last_error: string;
  next_try_at: number;
  set_aside_at: number | null;
}

/** A user's webhook endpoint. */
export interface WebhooksTable {
  webhook_id: string;
  user_id: string;
  url: string;
  /** The signing secret; kept as is, since every delivery is signed with it. */
  secret: string;
  created_at: number;
  /** Set by `ordergate webhooks remove`: no new deliveries; pending ones are given up. */
  removed_at: number | null;
}

/** One delivery of one order event to one webhook. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  webhook_id: string;
  /** The order event (order_history id). */
  event_id: number;
  status: string;
  attempts: number;
  next_attempt_at: number;
  claimed_by: string | null;
  claimed_until: number | null;
  /** The JSON body, fixed at the first attempt so that every retry sends the same bytes. */
  payload: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: number;
  last_attempt_at: number | null;
  delivered_at: number | null;
  failed_at: number | null;
}

/** One idempotency key of a user: the request that holds it, and its kept answer. */
export interface IdempotencyKeysTable {
  user_id: string;
  idempotency_key: string;
  /** A random token naming the request that holds (or held) the key. */
  owner: string;
  method: string;
  path: string;
  /** SHA-256 of method, path and canonical body (domain/orders/idempotency.ts). */
  fingerprint: string;
  /** RUNNING (held by a request until locked_until) or DONE (the answer below is kept). */
  state: string;
  locked_until: number;
  status_code: number | null;
  /** The answer's body, byte for byte. */
  response_body: string | null;
  /** The answer's headers that a replay repeats (e.g. ETag), as a JSON object. */
  response_headers: string | null;
  created_at: number;
}

/** One order-entry request, whatever its outcome. */
export interface AuditRequestsTable {
  id: Generated<number>;
  /** When the request arrived, epoch ms. */
  at: number;
  /** The Request-Id header of the answer. */
  request_id: string;
  /** The authenticated caller; null when authentication failed. */
  user_id: string | null;
  /** The peer address of the connection (no proxy header is trusted). */
  client_address: string;
  method: string;
  /** The route pattern, e.g. /transactional/v1/orders/regular/:exchange/:order_id. */
  route: string;
  /** The path as requested, with its query string; its first 1 KiB (UTF-8) when longer. */
  path: string;
  /** Length in UTF-8 bytes and hex SHA-256 of the whole path when it was cut; null when `path` is whole. */
  path_bytes: number | null;
  path_sha256: string | null;
  status_code: number;
  /** The answer's code: e-NNN for a refusal, s-NNN for a success; null when the answer had none. */
  code: string | null;
  /** The order the request named or created. */
  order_id: string | null;
  /** The order cart the request named. */
  ordercart_id: string | null;
  /** The JSON body as received, secrets redacted; null when there was none. Its first 8 KiB (UTF-8) when longer. */
  body: string | null;
  /** Length in UTF-8 bytes and hex SHA-256 of the whole body when it was cut; null when `body` is whole. */
  body_bytes: number | null;
  body_sha256: string | null;
}

/** One `ordergate audit archive`: the request records it removed, and its file's digest (append-only). */
export interface AuditArchivesTable {
  id: Generated<number>;
  /** When the rows were removed, epoch ms. */
  archived_at: number;
  /** The removed rows arrived before this instant (epoch ms)... */
  before_at: number;
  /** ...and have an id up to this one. */
  last_id: number;
  first_id: number;
  row_count: number;
  /** Hex SHA-256 of the whole archive file. */
  sha256: string;
  /** The file as the operator named it. */
  file: string;
}

/** A funds-checked user's account; available = cash - blocked (docs/design/funds.md). */
export interface FundsAccountsTable {
  user_id: string;
  /** Deposits - withdrawals - debits. */
  cash_paise: number;
  /** What the user's live bids block. */
  blocked_paise: number;
  /** Every debit (allotment) ever, in total. */
  debited_paise: number;
  created_at: number;
  updated_at: number;
}

/** One change of a funds account; append-only (the database refuses UPDATE and DELETE). */
export interface FundsLedgerTable {
  id: Generated<number>;
  user_id: string;
  at: number;
  /** DEPOSIT, WITHDRAW, BLOCK, RELEASE or DEBIT. */
  kind: string;
  /** Always more than 0; the kind says which way. */
  amount_paise: number;
  /** The order a BLOCK, RELEASE or DEBIT is for; null for DEPOSIT and WITHDRAW. */
  order_id: string | null;
}

/** The trade of an allotment (migration 0008). */
export interface TradesTable {
  trade_id: string;
  order_id: string;
  user_id: string;
  exchange: string;
  scrip_token: number;
  symbol: string;
  series: string;
  transaction_type: string;
  product_type: string;
  quantity: number;
  price_paise: number;
  traded_at: number;
  /** When its shares become a holding. */
  settles_at: number;
  exchange_order_id: string | null;
  order_identifier: string | null;
}

/** An exchange holiday the operator imported (migration 0019): settlement days skip it. */
export interface TradingHolidaysTable {
  /** The India date, 'YYYY-MM-DD'. */
  day: string;
  /** The exchange's name for it, e.g. Christmas. */
  description: string;
  imported_at: number;
}

export interface Database {
  users: UsersTable;
  second_factor_events: SecondFactorEventsTable;
  api_keys: ApiKeysTable;
  api_key_address_changes: ApiKeyAddressChangesTable;
  algos: AlgosTable;
  algo_users: AlgoUsersTable;
  algo_changes: AlgoChangesTable;
  sessions: SessionsTable;
  ofs_issues: OfsIssuesTable;
  ofs_offers: OfsOffersTable;
  ofs_offer_listings: OfsOfferListingsTable;
  ofs_offer_employees: OfsOfferEmployeesTable;
  orders: OrdersTable;
  order_history: OrderHistoryTable;
  user_event_counters: UserEventCountersTable;
  outbox: OutboxTable;
  exchange_sessions: ExchangeSessionsTable;
  exchange_stream_cursors: ExchangeStreamCursorsTable;
  exchange_references: ExchangeReferencesTable;
  exchange_listing_terms: ExchangeListingTermsTable;
  exchange_terms_reads: ExchangeTermsReadsTable;
  ofs_reconciliations: OfsReconciliationsTable;
  order_carts: OrderCartsTable;
  ofs_offer_indicative: OfsOfferIndicativeTable;
  sim_exchange_bids: SimExchangeBidsTable;
  sim_exchange_events: SimExchangeEventsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  idempotency_keys: IdempotencyKeysTable;
  audit_requests: AuditRequestsTable;
  audit_archives: AuditArchivesTable;
  funds_accounts: FundsAccountsTable;
  funds_ledger: FundsLedgerTable;
  trades: TradesTable;
  trading_holidays: TradingHolidaysTable;
  oms_instrument_faults: OmsInstrumentFaultsTable;
}
