/**
 * A real ordergate HTTP server on a free port over its own temporary SQLite file, with fixtures to create
 * users, keys, sessions and OFS issues. Each test file (or test) gets its own; close() deletes the data.
 */
import { EXAMPLE_BID } from '../../src/schemas/orders.js';
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/app-type.js';
import { closeHttp } from '../../src/server.js';
import { RATE_LIMITS_OFF, type RateLimitOptions } from '../../src/http/plugins/rate-limit.js';
import type { PasswordHasher } from '../../src/auth/credentials.js';
import { TEST_PASSWORD_HASHER } from './passwords.js';
import type { OfsIssue } from '../../src/domain/ofs/issue/issue.js';
import { AdminService } from '../../src/services/admin.js';
import type { MemberDataChange } from '../../src/domain/access/member-data.js';
import { testMemberData } from './member-data.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { TradingHolidayRepository } from '../../src/store/ofs/trading-holidays.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OrderRepository } from '../../src/store/orders/orders.js';
import type { Order } from '../../src/domain/orders/order.js';
import type { OrderStatus } from '../../src/domain/orders/status.js';
import { UserRepository } from '../../src/store/access/users.js';
import type { BidderCategory } from '../../src/domain/ofs/rules.js';
import type { MarginType, UserCategory } from '../../src/domain/ofs/offer/offer.js';
import type { Limits, SheddingConfig, TrustProxy } from '../../src/config.js';
import { createOmsWorker, createServices } from '../../src/wiring.js';
import type { OmsWorker } from '../../src/oms/worker.js';
import { FundsService } from '../../src/services/funds.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import type { AlgoGateOptions } from '../../src/services/algo-gate.js';
import type { AlgoService } from '../../src/services/algos.js';
import { createMigratedTestDatabase } from './databases.js';
import { sbinIssue } from './fixtures.js';

export interface TestUser {
  userId: string;
  password: string;
  apiKey: string;
  token: string;
  totpSecret: string | null;
}

export interface CallOptions {
  body?: unknown;
  /** Sent as is, instead of JSON.stringify(body). */
  rawBody?: string;
  contentType?: string | null;
  token?: string | null;
  apiKey?: string | null;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  // Tests read the answer's fields freely.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  body: any;
}

export interface TestServer {
  url: string;
  app: App;
  store: Store;
  admin: AdminService;
  /** The algo registry and kill switch, as `ordergate algos` runs them (on this server's clock and settings). */
  algos: AlgoService;
  /** The test clock, in epoch ms; move it with `clock.now = ...`. */
  clock: { now: number };
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  /** A user with a password, an API key and a logged-in access token. */
  createUser(
    userId: string,
    options?: {
      category?: BidderCategory | UserCategory;
      marginType?: MarginType;
      totp?: boolean;
      /** Its member data: testMemberData's by default; null: none recorded. */
      member?: MemberDataChange | null;
    },
  ): Promise<TestUser>;
  /** The user logged in again at the clock's time (a session lasts 24 hours: a test that crosses days needs it). */
  logInAgain(user: TestUser): Promise<TestUser>;
  registerIssue(overrides?: Partial<OfsIssue>): Promise<OfsIssue>;
  /**
   * Moves orders on as the OMS would (status and the columns in `fields`), through the store's one way of
   * changing orders, so that their history and the retail limit's running totals follow.
   */
  setOrderStatus(orderIds: string | readonly string[], status: OrderStatus, fields?: Partial<Order>): Promise<void>;
  /** Cash into a user's funds account (rupees, as `ordergate funds deposit` takes them), at the clock's time. */
  deposit(userId: string, rupees: string): Promise<void>;
  /** An OMS worker on this server's store and clock, logging nothing, that the test runs pass by pass (runOnce). */
  omsWorker(workerId?: string): OmsWorker;
  /** Places a limit bid (RL) for `user` on `scrip` (an instrument's scrip_info); its order id, or throws with the answer. */
  placeBid(user: TestUser, scrip: Record<string, unknown>, quantity: number, price: number): Promise<string>;
  /** One of `user`'s orders as the order book answers it. */
  orderOf(user: TestUser, orderId: string): Promise<Record<string, unknown>>;
  close(): Promise<void>;
}

export const TEST_PASSWORD = 'correct-horse-42';

/** An OFS issue with both windows open around the given instant. */
export function openIssue(now: number, overrides: Partial<OfsIssue> = {}): OfsIssue {
  const hour = 60 * 60 * 1000;
  return sbinIssue({
    nonRetailOpensAt: now - hour,
    nonRetailClosesAt: now + 6 * hour,
    retailOpensAt: now - hour,
    retailClosesAt: now + 6 * hour,
    ...overrides,
  });
}

/**
 * `databaseUrl`: serve another database (e.g. PostgreSQL) instead of a new SQLite file; several servers
 * may share it, as several nodes do. `now` starts the test clock at that instant. `rateLimits`: the call
 * limits to turn on (all off by default, so that tests may fire many calls at once). `limits`: the caps per
 * user and per node (MAX_*, LOGIN_REQUIRES_API_KEY), the defaults where absent. `logger`: where the server
 * logs (nowhere by default), e.g. a pino logger that keeps the stack traces of unhandled errors.
 * `passwordHasher`: the cost of new password hashes (TEST_PASSWORD_HASHER by default).
 */
export async function startTestServer(
  options: {
    databaseUrl?: string;
    now?: number;
    rateLimits?: Partial<RateLimitOptions>;
    publicUrl?: string;
    limits?: Partial<Limits>;
    trustProxy?: TrustProxy;
    shedding?: SheddingConfig;
    logger?: FastifyBaseLogger;
    passwordHasher?: PasswordHasher;
    sessionDailyEnd?: string;
    /** SEBI's algo rules (ALGO_GENERIC_ID, ALGO_THRESHOLD_ORDERS_PER_SECOND); off by default. */
    algo?: Partial<AlgoGateOptions>;
  } = {},
): Promise<TestServer> {
  // A given database is shared (several nodes); otherwise the server gets a new one of the run's dialect.
  const owned = options.databaseUrl === undefined ? await createMigratedTestDatabase() : undefined;
  const store = openStore(options.databaseUrl ?? owned!.databaseUrl);
  await migrateToLatest(store);
  const clock = { now: options.now ?? Date.now() };
  const now = () => clock.now;
  const passwordHasher = options.passwordHasher ?? TEST_PASSWORD_HASHER;
  const services = createServices(store, {
    tokenTtlSeconds: 24 * 60 * 60,
    now,
    passwordHasher,
    ...(options.limits && { limits: options.limits }),
    ...(options.sessionDailyEnd && { sessionDailyEnd: options.sessionDailyEnd }),
    ...(options.algo && { algo: options.algo }),
  });
  const app = buildApp(services, {
    logger: options.logger ?? false,
    rateLimits: { ...RATE_LIMITS_OFF, ...options.rateLimits },
    publicUrl: options.publicUrl ?? null,
    trustProxy: options.trustProxy ?? false,
    ...(options.shedding && { shedding: options.shedding }),
  });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  const users = new UserRepository(store.db, store.dialect);
  const issues = new OfsIssueRepository(store.db);
  const admin = new AdminService(
    users,
    new OfsOfferRepository(store.db),
    now,
    passwordHasher,
    new TradingHolidayRepository(store.db),
  );

  async function call(method: string, path: string, options: CallOptions = {}): Promise<CallResult> {
    const headers: Record<string, string> = { ...options.headers };
    const body = options.rawBody ?? (options.body === undefined ? undefined : JSON.stringify(options.body));
    if (body !== undefined && options.contentType !== null)
      headers['content-type'] = options.contentType ?? 'application/json';
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey) headers['x-api-key'] = options.apiKey;
    const response = await fetch(url + path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = text === '' ? undefined : JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, text, body: parsed };
  }

  async function logIn(user: TestUser): Promise<TestUser> {
    const { totpCode } = await import('../../src/auth/credentials.js');
    const login = await call('POST', '/authentication/v1/user/session', {
      body: {
        user_id: user.userId,
        login_type: 'PASSWORD',
        password: user.password,
        second_auth_type: user.totpSecret ? 'TOTP' : '',
        second_auth: user.totpSecret ? totpCode(user.totpSecret, user.userId, clock.now) : '',
        api_key: user.apiKey,
        source: 'WEBAPI',
      },
    });
    if (login.status !== 200) throw new Error(`test login failed: ${login.text}`);
    return { ...user, token: login.body.data.access_token };
  }
  return {
    url,
    app,
    store,
    admin,
    algos: services.algos,
    clock,
    call,
    async createUser(userId, options = {}) {
      const { member, ...rest } = options;
      // Every test user is a client with its own UCC and PAN (and a custodian code) unless the test says otherwise.
      const { totpSecret } = await admin.addUser(userId, TEST_PASSWORD, {
        ...rest,
        ...(member !== null && { member: member ?? testMemberData(userId) }),
      });
      const { apiKey } = await admin.createApiKey(userId);
      return logIn({ userId, password: TEST_PASSWORD, apiKey, token: '', totpSecret });
    },
    logInAgain: (user) => logIn(user),
    async deposit(userId, rupees) {
      const users = new UserRepository(store.db, store.dialect);
      const funds = new FundsService(store, new FundsRepository(store.db, store.dialect), users, () => clock.now);
      await funds.deposit(userId, rupees);
    },
    omsWorker: (workerId) =>
      createOmsWorker(store, {
        logger: pino({ level: 'silent' }),
        now: () => clock.now,
        ...(workerId !== undefined && { workerId }),
      }),
    async placeBid(user, scrip, quantity, price) {
      const body = validBid({ scrip_info: scrip, order_type: 'RL', quantity: String(quantity), price });
      const res = await call('POST', '/transactional/v1/orders/regular', {
        body,
        token: user.token,
        apiKey: user.apiKey,
      });
      if (res.status !== 200) throw new Error(`the bid was refused: ${res.status} ${res.text}`);
      return res.body.data.orderId as string;
    },
    async orderOf(user, orderId) {
      const res = await call('GET', `/transactional/v1/orders?limit=1000&order_id=${encodeURIComponent(orderId)}`, {
        token: user.token,
      });
      const order = (res.body.data as Record<string, unknown>[] | undefined)?.find((o) => o.order_id === orderId);
      if (order === undefined) throw new Error(`order ${orderId} is not in ${user.userId}'s book: ${res.text}`);
      return order;
    },
    async setOrderStatus(orderIds, status, fields = {}) {
      const ids = typeof orderIds === 'string' ? [orderIds] : orderIds;
      const orders = new OrderRepository(store.db, store.dialect);
      await store.writeTransaction(async (tx) => {
        const locked = await orders.lockOrders(tx, ids);
        const changes = ids.map((id) => {
          const order = locked.get(id)!;
          return {
            before: order,
            after: { ...order, ...fields, status, updatedAt: clock.now },
            reason: `Set to ${status} by the test`,
            origin: { actor: 'oms', requestId: null },
          };
        });
        await orders.apply(tx, changes, clock.now);
      });
    },
    async registerIssue(overrides = {}) {
      const issue = openIssue(clock.now, overrides);
      await issues.upsert([issue], clock.now);
      return issue;
    },
    async close() {
      // As `serve` closes: connections still open after the grace period are cut.
      await closeHttp(app, pino({ level: 'silent' }));
      await store.close();
      await owned?.dispose();
    },
  };
}

/** A valid OFS bid body for the default test issue. */
export function validBid(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  // A copy: a test may change the nested scrip_info of its bid.
  return { ...structuredClone(EXAMPLE_BID), ...overrides };
}
