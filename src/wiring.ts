/** Builds the services of one process over an open store: used by the server, the CLI and the tests. */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { hostname, tmpdir } from 'node:os';
import pino, { type Logger } from 'pino';
import type { AppServices } from './app.js';
import { AuditRecorder } from './services/audit.js';
import { authOptions, AuthService } from './services/auth.js';
import { FundsService } from './services/funds.js';
import { PortfolioService } from './services/portfolio.js';
import { OfsBookService } from './services/ofs-book.js';
import { OfsOfferService } from './services/ofs-offers.js';
import { DEFAULT_INDICATIVE_POLL_MS, IndicativeFeed } from './services/indicative-feed.js';
import { OfsOfferRepository } from './store/ofs/offers.js';
import type { OfferRegistration } from './domain/ofs/offer/offer.js';
import { TradingHolidayRepository } from './store/ofs/trading-holidays.js';
import { OrderBookService } from './services/order-book.js';
import { OrderCartService } from './services/order-carts.js';
import { OrderEntryService } from './services/order-entry.js';
import { OrderEventsService, type OrderEventsOptions } from './services/order-events.js';
import { DEFAULT_SESSION_RECHECK_MS, StreamSessions, type StreamSessionOptions } from './services/stream-session.js';
import { AuditRepository } from './store/access/audit.js';
import type { Store } from './store/sql/database.js';
import { IdempotencyKeyRepository } from './store/orders/idempotency.js';
import { IdempotencyService, type IdempotencyOptions } from './services/idempotency.js';
import { OfsIssueRepository } from './store/ofs/issues.js';
import { OfsBookRepository } from './store/ofs/book.js';
import { OrderCartRepository } from './store/orders/carts.js';
import { EventHorizon, OrderEventRepository } from './store/orders/events.js';
import { FundsRepository } from './store/funds/funds.js';
import { TradeRepository } from './store/funds/trades.js';
import { OrderRepository } from './store/orders/orders.js';
import { OrderBookReads } from './store/orders/order-book.js';
import { UserRepository } from './store/access/users.js';
import type { ExchangeAdapter, LinkHealth } from './oms/exchange.js';
import { NseEofsClient } from './oms/links/nse-eofs/client.js';
import { NseEofsLink } from './oms/links/nse-eofs/link.js';
import { BseIbbsLink } from './oms/links/bse-ibbs/link.js';
import { ExchangeReferenceRepository } from './store/orders/exchange-references.js';
import { ExchangeTermsRefresher } from './oms/exchange-terms.js';
import { ExchangeTermsRepository } from './store/ofs/exchange-terms.js';
import { ExchangeRouter } from './oms/links/router.js';
import { LinkHealthBoard } from './oms/links/health-board.js';
import { LeasedExchange } from './oms/links/session-lease.js';
import { ExchangeSessionRepository, StreamCursorRepository } from './store/orders/exchange-sessions.js';
import { createExchangeSim, type ExchangeSim } from './exchange-sim/exchange-sim.js';
import { SIM_EXCHANGES } from './exchange-sim/wire.js';
import { SimulatedExchange } from './oms/simulated-exchange.js';
import { OmsWorker } from './oms/worker.js';
import { InstrumentGuard, type InstrumentMetrics } from './oms/instrument-guard.js';
import { InstrumentFaultRepository } from './store/ofs/instrument-faults.js';
import { OmsRepository } from './store/orders/outbox.js';
import { SimExchangeRepository } from './store/ofs/sim-exchange.js';
import { WebhookRepository } from './store/orders/webhooks.js';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from './domain/orders/webhooks.js';
import type { WebhookAddressPolicy } from './domain/orders/webhook-addresses.js';
import { DEFAULT_ALGO, DEFAULT_LIMITS, type Config, type ExchangeConfig, type Limits } from './config.js';
import { AlgoGate, type AlgoGateOptions } from './services/algo-gate.js';
import { AlgoRepository } from './store/orders/algos.js';
import { AlgoService } from './services/algos.js';
import type { PasswordHasher } from './auth/credentials.js';
import { WebhookDispatcher } from './webhooks/dispatcher.js';
import type { OmsMetrics, OperatorMetrics, ReconciliationMetrics, WebhookMetrics } from './metrics/operator-metrics.js';
import { Reconciler } from './oms/reconciler.js';
import { ReconciliationRepository } from './store/ofs/reconciliations.js';
import { ReconciliationService } from './services/reconciliations.js';
import { StoreHealth } from './store/sql/health.js';
import type { FastifyBaseLogger } from 'fastify';
import { startMetricsListener, type MetricsListener } from './http/routes/metrics.js';

export interface ServiceOptions {
  tokenTtlSeconds: number;
  /** SESSION_DAILY_END (`HH:MM`, India time): every session ends there; absent or null: at its TTL. */
  sessionDailyEnd?: string | null;
  /** The clock, injectable so that tests can move time. */
  now?: () => number;
  /** The order-event poller, stream heartbeats and token re-checks (tests make them short). */
  orderEvents?: OrderEventsOptions & StreamSessionOptions;
  /** Lease renewal and purge of idempotency keys (tests make them short). */
  idempotency?: IdempotencyOptions;
  /** Caps per user and per node (MAX_*, LOGIN_REQUIRES_API_KEY); the defaults where absent. */
  limits?: Partial<Limits>;
  /** The process's metrics (order entry's batches and commits). */
  metrics?: OperatorMetrics;
  /** SEBI's algo rules (ALGO_GENERIC_ID, ALGO_THRESHOLD_ORDERS_PER_SECOND); off by default. */
  algo?: Partial<AlgoGateOptions>;
  /** The cost of new password hashes; OWASP's by default (passwordHasherFor(config.passwordHashCost)). */
  passwordHasher?: PasswordHasher;
}

/** The services of the app, and those of the operator's commands (the algo registry and kill switch). */
export type Services = AppServices & { algos: AlgoService };

export function createServices(store: Store, options: ServiceOptions): Services {
  const now = options.now ?? Date.now;
  const limits: Limits = { ...DEFAULT_LIMITS, ...options.limits };
  const users = new UserRepository(store.db, store.dialect, store.credentialsDb);
  const orders = new OrderRepository(store.db, store.dialect);
  const issues = new OfsIssueRepository(store.db);
  const offers = new OfsOfferRepository(store.db);
  const holidays = new TradingHolidayRepository(store.db);
  const algos = new AlgoRepository(store.db, store.dialect);
  const algoGate = new AlgoGate(algos, { ...DEFAULT_ALGO, ...options.algo });
  const orderEntry = new OrderEntryService(
    store,
    issues,
    offers,
    orders,
    { gate: algoGate, registry: algos },
    now,
    options.metrics?.orderEntry,
  );
  const auth = new AuthService(
    users,
    options.tokenTtlSeconds * 1000,
    now,
    authOptions(limits, options.sessionDailyEnd, options.passwordHasher),
  );
  const orderEvents = new OrderEventsService(
    new OrderEventRepository(store.readDb),
    () => new EventHorizon(store.readDb, store.dialect),
    { limits, now, endedSince: (since) => users.endedSince(since) },
    options.orderEvents,
  );
  return {
    auth,
    orderEntry,
    algoGate,
    algos: new AlgoService(store, algos, users, orderEntry, now, algoGate.genericIds),
    orderBook: new OrderBookService(new OrderBookReads(store.db, store.dialect)),
    orderCarts: new OrderCartService(
      new OrderCartRepository(store.db),
      now,
      { orderEntry, issues, recheckSession: (caller) => auth.recheck(caller) },
      limits,
    ),
    indicativeFeed: new IndicativeFeed(offers, options.orderEvents?.pollMs ?? DEFAULT_INDICATIVE_POLL_MS),
    orderEvents,
    // An open event stream checks its token again as every call does.
    eventStreams: new StreamSessions({
      feed: orderEvents,
      auth,
      recheckMs: options.orderEvents?.sessionRecheckMs ?? DEFAULT_SESSION_RECHECK_MS,
      now,
    }),
    idempotency: new IdempotencyService(
      new IdempotencyKeyRepository(store.db, store.dialect),
      now,
      options.idempotency,
    ),
    audit: new AuditRecorder(new AuditRepository(store), now),
    funds: new FundsService(store, new FundsRepository(store.db, store.dialect), users, now),
    portfolio: new PortfolioService(new TradeRepository(store.db, store.dialect), now),
    health: new StoreHealth(store.readDb),
    exchangeLinks: new LinkHealthBoard(),
    ofsBook: new OfsBookService(issues, new OfsBookRepository(store.db), users, now, offers, holidays),
    ofsOffers: new OfsOfferService(offers, holidays, now, new OrderBookReads(store.db, store.dialect)),
    reconciliations: new ReconciliationService(new ReconciliationRepository(store.db), users, now),
  };
}

/**
 * The algo registry and kill switch alone, for the operator's commands (`ordergate algos`): its
 * cancellations go through order entry like any other.
 */
export function createAlgoService(
  store: Store,
  algo: Partial<AlgoGateOptions> = {},
  now: () => number = Date.now,
): AlgoService {
  const algos = new AlgoRepository(store.db, store.dialect);
  const gate = new AlgoGate(algos, { ...DEFAULT_ALGO, ...algo });
  const orders = new OrderRepository(store.db, store.dialect);
  const users = new UserRepository(store.db, store.dialect);
  const orderEntry = new OrderEntryService(
    store,
    new OfsIssueRepository(store.db),
    new OfsOfferRepository(store.db),
    orders,
    { gate, registry: algos },
    now,
  );
  return new AlgoService(store, algos, users, orderEntry, now, gate.genericIds);
}

export interface OmsOptions {
  logger: Logger;
  pollMs?: number;
  /** How long a claimed outbox entry stays with the worker (OMS_LEASE_MS). */
  leaseMs?: number;
  now?: () => number;
  /** The exchange; the simulated OFS exchange over the same store by default. */
  exchange?: ExchangeAdapter;
  workerId?: string;
  /** Outbox entries claimed at once (tests make it small to interleave several workers). */
  batchSize?: number;
  /** The process's metrics (exchange calls, failed passes, instruments' failures). */
  metrics?: OmsMetrics;
}

/** The guard that keeps each instrument's work apart, over the store's failure records (oms/instrument-guard.ts). */
export function createInstrumentGuard(
  store: Store,
  now: () => number,
  logger: Logger,
  metrics?: InstrumentMetrics,
): InstrumentGuard {
  return new InstrumentGuard(new InstrumentFaultRepository(store.db, store.dialect), now, logger, metrics);
}

/**
 * The simulated OFS exchange over the store, with the given clock; its allocations run under `guard` (the
 * OMS worker's: createOmsWorker passes its own; by default one that logs nothing, for tests).
 */
export function createSimulatedExchange(
  store: Store,
  now: () => number = Date.now,
  guard: InstrumentGuard = createInstrumentGuard(store, now, pino({ level: 'silent' })),
  options: { logger?: Logger; passMs?: number } = {},
): SimulatedExchange {
  return new SimulatedExchange(
    store,
    new SimExchangeRepository(store.db, store.dialect),
    new OfsIssueRepository(store.db),
    new OfsOfferRepository(store.db),
    now,
    guard,
    {
      ...options,
      ...(options.logger !== undefined && { logger: options.logger.child({ component: 'simulated-exchange' }) }),
    },
  );
}

/** The exchange links an OMS worker sends through (docs/exchanges.md), and what runs behind them. */
export interface ExchangeLinks {
  /** The port over the links; undefined: the simulated exchange in process (createOmsWorker's default). */
  exchange: ExchangeAdapter | undefined;
  /** The exchange simulator started for `sim`, else null. */
  simulator: ExchangeSim | null;
  health(): LinkHealth[];
  /** Closes what was started (the simulator), after the worker has stopped. */
  close(): Promise<void>;
}

/**
 * The links EXCHANGE_LINK names: `sim` starts the exchange simulator on loopback (a fresh API user per
 * segment, its password random, so that the two links' sessions never end each other's) and reaches it
 * through the e-OFS link; `nse` reaches NSE's e-OFS API for NSE_EQ; `in-process` is the simulator inside the
 * OMS.
 */
export async function openExchangeLinks(
  store: Store,
  config: ExchangeConfig,
  logger: Logger,
  now: () => number = Date.now,
  /** Where the simulator's steps count their failures per instrument (the process's OMS metrics). */
  instrumentMetrics?: InstrumentMetrics,
): Promise<ExchangeLinks> {
  const linkLogger = logger.child({ component: 'exchange-link' });
  const cursors = new StreamCursorRepository(store.db);
  const onUnreadableLine = (line: string) =>
    linkLogger.error({ line: line.slice(0, 500) }, 'a line of the exchange stream cannot be read; skipped');
  if (config.link === 'in-process') {
    return { exchange: undefined, simulator: null, health: () => [], close: async () => undefined };
  }
  if (config.link === 'nse') {
    const password = config.nsePassword ?? readFileSync(config.nsePasswordFile!, 'utf8').split(/\r?\n/)[0]!;
    const client = new NseEofsClient({
      baseUrl: config.nseUrl!,
      credentials: { memberCode: config.nseMemberCode!, loginId: config.nseLoginId!, password },
      timeoutMs: config.timeoutMs,
      now,
      onUnreadableLine,
    });
    // One node at a time holds the API user's session (links/session-lease.ts): the exchange may end a
    // session at the next login.
    const links = new Map<string, ExchangeAdapter>([
      [
        'NSE_EQ',
        new NseEofsLink({
          exchange: 'NSE_EQ',
          client,
          now,
          logger: linkLogger,
          cursor: { name: `NSE_EQ:${config.nseLoginId!}`, store: cursors },
        }),
      ],
    ]);
    // BSE's iBBS, when its folders are configured (config.ts checks they come together); else BSE_EQ bids
    // are refused by the router.
    if (config.bseMemberCode !== null) {
      links.set(
        'BSE_EQ',
        bseIbbsLink(
          store,
          {
            memberCode: config.bseMemberCode,
            outboxDir: config.bseOutbox!,
            inboxDir: config.bseInbox!,
            recordDir: config.bseRecordDir!,
          },
          now,
          linkLogger,
        ),
      );
    }
    const leased = new LeasedExchange(new ExchangeRouter(links), {
      sessions: new ExchangeSessionRepository(store.db),
      name: `NSE_EQ:${config.nseLoginId!}`,
      holder: `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`,
      now,
      logger: linkLogger,
    });
    // NSE's listings read by the session's holder only (its session; docs/operations.md).
    const terms = exchangeTermsRefresher(store, client, now, linkLogger, async () => leased.holdsSession());
    return { exchange: leased, simulator: null, health: () => leased.health(), close: () => terms.stop() };
  }
  const password = randomBytes(24).toString('base64url');
  const users = SIM_EXCHANGES.map((exchange) => ({ memberCode: 'SIM01', loginId: `ordergate-${exchange}`, password }));
  // BSE_EQ goes as iBBS files to the simulator's desk, in folders of this node's own (two nodes of one
  // database must not read each other's inbox): under EXCHANGE_BSE_RECORD_DIR, or made now and removed at
  // close. A node started again over new folders loses nothing: its desk writes every allocation again from
  // the first (its cursor is the folder's), and a bid sent before is answered with the bid id it got.
  const bseRoot = config.bseRecordDir ?? mkdtempSync(join(tmpdir(), 'ordergate-ibbs-'));
  const ownFolder = config.bseRecordDir === null;
  const folders = {
    memberCode: SIM_MEMBER_CODE,
    outboxDir: join(bseRoot, 'outbox'),
    inboxDir: join(bseRoot, 'inbox'),
    recordDir: join(bseRoot, 'record'),
  };
  const simulator = await createExchangeSim({
    store,
    users,
    port: config.simPort,
    now,
    logger: logger.child({ component: 'exchange-sim' }),
    ...(instrumentMetrics !== undefined && { instrumentMetrics }),
    ibbs: {
      memberCode: SIM_MEMBER_CODE,
      uploadDir: folders.outboxDir,
      downloadDir: folders.inboxDir,
      pollMs: SIM_FILE_POLL_MS,
      // A member downloads the bid book now and then; the simulator's is fresh within seconds, so that a
      // reconciliation asked for just after a close reads it.
      bidBookEveryMs: SIM_BID_BOOK_EVERY_MS,
    },
  });
  const nseClient = new NseEofsClient({
    baseUrl: simulator.baseUrl('NSE_EQ'),
    credentials: users[SIM_EXCHANGES.indexOf('NSE_EQ')]!,
    timeoutMs: config.timeoutMs,
    now,
    onUnreadableLine,
  });
  const nse = new NseEofsLink({
    exchange: 'NSE_EQ',
    client: nseClient,
    now,
    logger: linkLogger,
    cursor: { name: 'sim:NSE_EQ', store: cursors },
  });
  const bse = bseIbbsLink(store, folders, now, linkLogger, {
    pollMs: SIM_FILE_POLL_MS,
    firstAnswerWaitMs: 2 * SIM_FILE_POLL_MS,
  });
  const router = new ExchangeRouter(
    new Map<string, ExchangeAdapter>([
      ['NSE_EQ', nse],
      ['BSE_EQ', bse],
    ]),
  );
  logger.info(
    { url: simulator.url, ibbs: bseRoot },
    'exchange simulator on loopback; the OMS reaches it over e-OFS (NSE_EQ) and iBBS files (BSE_EQ)',
  );
  const terms = exchangeTermsRefresher(store, nseClient, now, linkLogger);
  return {
    exchange: router,
    simulator,
    health: () => router.health(),
    close: async () => {
      await terms.stop();
      await simulator.close();
      if (ownFolder) await rm(bseRoot, { recursive: true, force: true });
    },
  };
}

/**
 * NSE's open listings (`activeSecurities`) read now and every five minutes and kept for `ordergate ofs
 * exchange-terms` (src/oms/exchange-terms.ts), when `shouldRead` (the session's holder) says so; started.
 */
function exchangeTermsRefresher(
  store: Store,
  client: NseEofsClient,
  now: () => number,
  logger: Logger,
  shouldRead?: () => Promise<boolean>,
): ExchangeTermsRefresher {
  const refresher = new ExchangeTermsRefresher({
    read: () => client.activeSecurities(),
    repository: new ExchangeTermsRepository(store.db),
    now,
    logger,
    ...(shouldRead !== undefined && { shouldRead }),
  });
  refresher.start();
  return refresher;
}

/** The member code of the simulator's API users and iBBS files. */
const SIM_MEMBER_CODE = 'SIM01';
/** How often the simulator's desk and the link read each other's files on loopback (ms). */
const SIM_FILE_POLL_MS = 100;
/** The simulator's bid-book download at most this often, when the book changed (ms). */
const SIM_BID_BOOK_EVERY_MS = 2_000;

/** Where BSE's iBBS link writes and reads (docs/exchanges.md, "BSE"). */
export interface BseFolders {
  memberCode: string;
  outboxDir: string;
  inboxDir: string;
  recordDir: string;
}

/**
 * The link to BSE's iBBS over `folders`: the floor price of a cut-off bid's offer (or issue) and the day
 * of an offer an allocation file settles are read from the store.
 */
export function bseIbbsLink(
  store: Store,
  folders: BseFolders,
  now: () => number,
  logger: Logger,
  timing: { pollMs?: number; firstAnswerWaitMs?: number } = {},
): BseIbbsLink {
  const offers = new OfsOfferRepository(store.readDb);
  const issues = new OfsIssueRepository(store.readDb);
  const orders = new OrderRepository(store.readDb, store.dialect);
  return new BseIbbsLink({
    exchange: 'BSE_EQ',
    ...folders,
    references: new ExchangeReferenceRepository(store.db),
    floorOf: async (bid) =>
      bid.offer === null
        ? ((await issues.find(bid.exchange, bid.scripToken))?.floorPricePaise ?? null)
        : ((await offers.find(bid.offer.offerId))?.offer.floorPricePaise ?? null),
    daysOf: async (orderIds, at) => {
      // One read of the orders and one per offer, whatever the file's size.
      const offerIds = await orders.offersOf(orderIds);
      const days = new Map<string, 'T' | 'T+1' | null>();
      const offersRead = new Map<string, Promise<OfferRegistration | undefined>>();
      for (const orderId of orderIds) {
        const offerId = offerIds.get(orderId) ?? null;
        if (offerId === null) {
          days.set(orderId, null);
          continue;
        }
        if (!offersRead.has(offerId)) offersRead.set(offerId, offers.find(offerId));
        const offer = (await offersRead.get(offerId))?.offer;
        // No T+1 allocation exists before T+1 closes: a T file downloaded late (after T+1 opened) is still T's.
        days.set(orderId, offer === undefined ? null : at < offer.t1Day.closesAt ? 'T' : 'T+1');
      }
      return days;
    },
    now,
    logger,
    ...timing,
  });
}

/** The OMS worker over the store (not started). */
export function createOmsWorker(store: Store, options: OmsOptions): OmsWorker {
  const now = options.now ?? Date.now;
  const logger = options.logger.child({ component: 'oms' });
  const guard = createInstrumentGuard(store, now, logger, options.metrics);
  return new OmsWorker({
    store,
    orders: new OrderRepository(store.db, store.dialect),
    issues: new OfsIssueRepository(store.db),
    offers: new OfsOfferRepository(store.db),
    oms: new OmsRepository(store.db, store.dialect),
    funds: new FundsRepository(store.db, store.dialect),
    exchange: options.exchange ?? createSimulatedExchange(store, now, guard, { logger }),
    now,
    logger,
    guard,
    holidays: new TradingHolidayRepository(store.db),
    ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
    ...(options.leaseMs !== undefined && { leaseMs: options.leaseMs }),
    ...(options.workerId !== undefined && { workerId: options.workerId }),
    ...(options.batchSize !== undefined && { batchSize: options.batchSize }),
    ...(options.metrics !== undefined && { metrics: options.metrics }),
  });
}

export interface ReconcilerWiring {
  logger: Logger;
  /** This node's name in the requests' leases (its OMS worker's id). */
  holder: string;
  /** The exchange whose book it reads; the simulated OFS exchange over the same store by default (in-process). */
  exchange?: ExchangeAdapter;
  now?: () => number;
  metrics?: ReconciliationMetrics;
  pollMs?: number;
  afterCloseMs?: number;
}

/**
 * Reconciliation's runs (oms/reconciler.ts, not started): at every close and at the operator's request,
 * where the exchange session is held.
 */
export function createReconciler(store: Store, options: ReconcilerWiring): Reconciler {
  const now = options.now ?? Date.now;
  return new Reconciler({
    reports: new ReconciliationRepository(store.db),
    exchange: options.exchange ?? createSimulatedExchange(store, now),
    now,
    logger: options.logger.child({ component: 'reconciliation' }),
    holder: options.holder,
    ...(options.metrics !== undefined && { metrics: options.metrics }),
    ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
    ...(options.afterCloseMs !== undefined && { afterCloseMs: options.afterCloseMs }),
  });
}

export interface WebhookOptions {
  logger: Logger;
  now?: () => number;
  pollMs?: number;
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** Whether plain http and non-public addresses may be reached; by default neither. */
  addresses?: WebhookAddressPolicy;
  /** The process's metrics (attempts, failed passes). */
  metrics?: WebhookMetrics;
}

/** The webhook dispatcher over the store (not started); it runs wherever the OMS worker runs. */
export function createWebhookDispatcher(store: Store, options: WebhookOptions): WebhookDispatcher {
  return new WebhookDispatcher({
    webhooks: new WebhookRepository(store.db),
    events: new OrderEventRepository(store.db),
    horizon: new EventHorizon(store.db, store.dialect),
    logger: options.logger.child({ component: 'webhooks' }),
    ...(options.now !== undefined && { now: options.now }),
    ...(options.pollMs !== undefined && { pollMs: options.pollMs }),
    ...(options.timeoutMs !== undefined && { timeoutMs: options.timeoutMs }),
    ...(options.retry !== undefined && { retry: options.retry }),
    ...(options.addresses !== undefined && { addresses: options.addresses }),
    ...(options.metrics !== undefined && { metrics: options.metrics }),
  });
}

/** The dispatcher as configured by the environment (WEBHOOK_TIMEOUT_MS, WEBHOOK_RETRY_FOR_SECONDS, WEBHOOK_ALLOW_*). */
export function configuredWebhookDispatcher(
  store: Store,
  config: Config,
  logger: Logger,
  metrics?: WebhookMetrics,
): WebhookDispatcher {
  return createWebhookDispatcher(store, {
    logger,
    ...(metrics !== undefined && { metrics }),
    timeoutMs: config.webhookTimeoutMs,
    retry: { ...DEFAULT_RETRY_POLICY, retryForMs: config.webhookRetryForSeconds * 1000 },
    addresses: {
      allowHttp: config.webhookAllowHttp,
      allowPrivateAddresses: config.webhookAllowPrivateAddresses,
      allowAnyPort: config.webhookAllowAnyPort,
    },
  });
}

/** The outbox's backlog and the instruments set aside in the metrics, read from the store when scraped (the same figures in every process). */
export function watchStore(
  metrics: OperatorMetrics,
  store: Store,
  exchangeLinks: Pick<LinkHealthBoard, 'current'> = new LinkHealthBoard(),
  now: () => number = Date.now,
): void {
  const health = new StoreHealth(store.readDb);
  metrics.watchOutbox(() => health.outboxBacklog());
  metrics.watchSetAside(async () => (await health.setAside()).length);
  metrics.watchExchangeLinks(() => exchangeLinks.current());
  const reconciliations = new ReconciliationRepository(store.readDb);
  metrics.watchReconciliations(() => reconciliations.latestCounts(now() - RECONCILIATION_METRIC_WINDOW_MS));
}

/** The metric of reconciliation's differences counts the reports of the last week. */
const RECONCILIATION_METRIC_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

/**
 * The metrics listener on METRICS_HOST:METRICS_PORT (null without METRICS_PORT): `ordergate serve` and
 * `ordergate oms` alike. Its address is logged as "metrics listening".
 */
export async function listenForMetrics(
  config: Config,
  metrics: OperatorMetrics,
  store: Store,
  logger: FastifyBaseLogger,
  exchangeLinks: Pick<LinkHealthBoard, 'current'> = new LinkHealthBoard(),
): Promise<MetricsListener | null> {
  if (config.metrics.port === null) return null;
  const listener = await startMetricsListener({
    metrics,
    token: config.metrics.token,
    database: new StoreHealth(store.readDb),
    exchangeLinks,
    logger: logger.child({ component: 'metrics' }),
    host: config.metrics.host,
    port: config.metrics.port,
  });
  logger.info({ url: listener.url, token: config.metrics.token !== null }, 'metrics listening');
  return listener;
}
