/**
 * The Fastify app, registered top to bottom in the order a request meets it: the body parser, the hooks
 * (audit, Request-Id, shutdown, auth, rate limits), the one error handler and the 404/405 answer, the
 * external plugins, then the routes and their OpenAPI document. Fastify defaults that clash with the
 * contract are turned off here: no type coercion, JSON bodies only, and every error (404, 413, 415,
 * malformed JSON, validation) leaves through our one envelope.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { type FastifyBaseLogger } from 'fastify';
import { DEFAULT_REQUEST_TIMEOUT_MS, type SheddingConfig, type TrustProxy } from './config.js';
import { timeOrderedId } from './ids.js';
import { lazyRequestLogger } from './http/plugins/request-logger.js';
import { AccessLog } from './http/plugins/access-log.js';
import type { App } from './http/app-type.js';
import { registerAuditHooks } from './http/plugins/audit.js';
import { registerAuthentication } from './http/plugins/authentication.js';
import { registerDuplicateHeaderCheck } from './http/plugins/duplicate-headers.js';
import { answerClientError, answerError, answerRoutingError } from './http/plugins/errors.js';
import { consoleRoutes } from './http/routes/console.js';
import { registerOrderEventRoutes } from './http/routes/events.js';
import { registerHealthRoutes, type DatabaseProbe } from './http/routes/health.js';
import type { LinkHealthBoard } from './oms/links/health-board.js';
import { registerRequestMetrics } from './metrics/http-requests.js';
import type { OperatorMetrics } from './metrics/operator-metrics.js';
import { registerFundsRoutes } from './http/routes/funds.js';
import { registerPortfolioRoutes } from './http/routes/portfolio.js';
import { registerOfsRoutes } from './http/routes/ofs.js';
import { registerIdempotency } from './http/plugins/idempotency.js';
import { BODY_LIMIT_BYTES, registerJsonBodyParser } from './http/plugins/json-body.js';
import { registerStorableStrings } from './http/plugins/storable-strings.js';
import { registerLoadShedding } from './http/plugins/load-shedding.js';
import { registerLoginLimits } from './http/plugins/login-limits.js';
import { addViewportMeta, openApiDocument } from './http/routes/openapi.js';
import { registerOrderCartRoutes } from './http/routes/ordercart.js';
import { registerOrderRoutes } from './http/routes/orders.js';
import { RATE_LIMITS_OFF, registerRateLimits, type RateLimitOptions } from './http/plugins/rate-limit.js';
import { registerRequestIdHeader } from './http/plugins/request-id.js';
import { registerRouteNotFound } from './http/plugins/route-not-found.js';
import { registerSecurityHeaders } from './http/plugins/security-headers.js';
import { registerSessionRoutes } from './http/routes/session.js';
import { registerShutdown } from './http/plugins/shutdown.js';
import { createAjv } from './schemas/validator.js';
import type { AuditRecorder } from './services/audit.js';
import type { AuthService } from './services/auth.js';
import type { FundsService } from './services/funds.js';
import type { PortfolioService } from './services/portfolio.js';
import type { OfsBookService } from './services/ofs-book.js';
import type { ReconciliationService } from './services/reconciliations.js';
import type { OfsOfferService } from './services/ofs-offers.js';
import type { IndicativeFeed } from './services/indicative-feed.js';
import type { IdempotencyService } from './services/idempotency.js';
import type { OrderBookService } from './services/order-book.js';
import type { OrderCartService } from './services/order-carts.js';
import type { OrderEntryService } from './services/order-entry.js';
import type { AlgoGate } from './services/algo-gate.js';
import type { OrderEventsService } from './services/order-events.js';
import type { StreamSessions } from './services/stream-session.js';

export interface AppServices {
  auth: AuthService;
  orderEntry: OrderEntryService;
  /** SEBI's algo rules on order entry's way in; the app names the call log its threshold counts in. */
  algoGate: AlgoGate;
  orderBook: OrderBookService;
  orderCarts: OrderCartService;
  orderEvents: OrderEventsService;
  /** The sessions of the event streams: their slots, subscriptions and token checks. */
  eventStreams: StreamSessions;
  /** The indicative prices the exchanges publish through T, for the event streams. */
  indicativeFeed: IndicativeFeed;
  idempotency: IdempotencyService;
  audit: AuditRecorder;
  funds: FundsService;
  portfolio: PortfolioService;
  /** Whether the database answers (GET /health/ready), and what the OMS set aside (GET /health/oms). */
  health: DatabaseProbe;
  /** This process's exchange links, as they report their health (GET /health/ready, GET /health/exchanges). */
  exchangeLinks: LinkHealthBoard;
  ofsBook: OfsBookService;
  ofsOffers: OfsOfferService;
  /** Reconciliation's requests and reports for the operator; absent: no such routes. */
  reconciliations?: ReconciliationService;
}

export interface AppOptions {
  logger: FastifyBaseLogger | boolean;
  /** The call limits (off when absent, as in tests and benchmarks). */
  rateLimits?: RateLimitOptions;
  /** How long a client may take to send a whole request (REQUEST_TIMEOUT_MS). */
  requestTimeoutMs?: number;
  /** PUBLIC_URL. */
  publicUrl?: string | null;
  /** TRUST_PROXY: whose X-Forwarded-For names the client (none when absent). */
  trustProxy?: TrustProxy;
  /** Load shedding of order entry (off when absent, as in tests and benchmarks). */
  shedding?: SheddingConfig;
  /** The process's metrics: each HTTP answer is counted in them (none when absent). */
  metrics?: OperatorMetrics;
}

/** The Content-Security-Policy of every answer: JSON needs nothing, and nothing may frame it. */
const API_CSP = {
  useDefaults: false,
  directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"], baseUri: ["'none'"], formAction: ["'none'"] },
};

/**
 * The docs page's (Swagger UI): its scripts and styles come from this server only (no inline script), and
 * no upgrade-insecure-requests, since ordergate itself speaks plain HTTP behind the operator's TLS.
 */
const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self' 'unsafe-inline'";

/** The API reference's wordmark, in place of Swagger UI's own logo. */
const DOCS_LOGO =
  '<svg xmlns="http://www.w3.org/2000/svg" width="150" height="40" viewBox="0 0 150 40"><text x="0" y="28" font-family="sans-serif" font-size="26" font-weight="700" fill="#ffffff">ordergate</text></svg>';

export function buildApp(services: AppServices, options: AppOptions): App {
  const requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
  const app = Fastify({
    ...(typeof options.logger === 'boolean' ? { logger: options.logger } : { loggerInstance: options.logger }),
    bodyLimit: BODY_LIMIT_BYTES,
    // A client that trickles its headers or body is cut off: Node answers 408 and closes the connection.
    // This bounds receiving the request only, so order-event streams and the live socket live on; an idle
    // keep-alive connection closes after Fastify's keepAliveTimeout (72 s), and connectionTimeout (socket
    // inactivity) stays off, since a quiet stream only writes a heartbeat every 15 s.
    requestTimeout: requestTimeoutMs,
    // Node's own refusals (a late request, headers too large, a malformed request line) in our envelope.
    clientErrorHandler: answerClientError,
    // Node's defaults would undo it: with headersTimeout (60 s) above requestTimeout, Node applies the shorter
    // one to the headers only and lets a body trickle for 60 s; and it looks for late requests every 30 s.
    http: {
      headersTimeout: Math.min(60_000, requestTimeoutMs),
      connectionsCheckingInterval: Math.min(1_000, Math.ceil(requestTimeoutMs / 5)),
    },
    // Time-ordered ids: the audit trail and the order history index them, and random keys would scatter
    // every commit's index writes over the whole B-tree.
    genReqId: () => timeOrderedId(),
    // During shutdown new requests get 503 e-503 in our envelope (registerShutdown), not Fastify's own.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    logController: new AccessLog(),
    // A request's own logger is made only when something is logged through it (request-logger.ts).
    childLoggerFactory: lazyRequestLogger,
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Behind a proxy the TCP peer is the proxy: request.ip (the login limits, the audit trail) is the client
    // only when the proxies are named here.
    trustProxy: options.trustProxy ?? false,
    frameworkErrors: answerRoutingError,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  const ajv = createAjv();
  app.setValidatorCompiler(({ schema }) => ajv.compile(schema));
  registerJsonBodyParser(app);
  // First of the preValidation hooks: nothing reads a string no store keeps (the login's limits included).
  registerStorableStrings(app);

  // First, so that every answer carries its headers, a refusal by a later hook included.
  registerSecurityHeaders(app, { contentSecurityPolicy: API_CSP });
  // Before the auth hook, so that the arrival time is taken even for a request that auth refuses.
  registerAuditHooks(app, services.audit);
  registerRequestIdHeader(app);
  registerShutdown(app, services.orderEvents);
  // Before anything reads the caller's headers: one value each.
  registerDuplicateHeaderCheck(app);
  // Before auth: a shed order costs no token lookup.
  registerLoadShedding(app, options.shedding ?? { eventLoopDelayMs: 0, commitWaitMs: 0 }, (maxWaitMs) =>
    services.orderEntry.commitsFallBehind(maxWaitMs),
  );
  registerAuthentication(app, services.auth);
  // Right after auth, so that order entry is counted per caller before any later hook (Idempotency-Key).
  const rateLimits = options.rateLimits ?? RATE_LIMITS_OFF;
  const callLogs = registerRateLimits(app, rateLimits, services.algoGate.countsThreshold);
  // With REDIS_URL, SEBI's threshold counts in the limits' shared log: every node's orders together.
  if (callLogs?.link != null) services.algoGate.countIn(callLogs.admit);
  registerLoginLimits(app, rateLimits, callLogs, (userId, apiKey, from) =>
    services.auth.holdsApiKey(userId, apiKey, from),
  );

  app.setErrorHandler(answerError);
  registerRouteNotFound(app);

  app.register(swagger, { openapi: openApiDocument });
  // In a context of its own, so that the viewport tag's hook sees the docs page's answers only.
  app.register(async (docs) => {
    docs.addHook('onSend', addViewportMeta);
    await docs.register(swaggerUi, {
      routePrefix: '/docs',
      staticCSP: DOCS_CSP,
      theme: { title: 'ordergate API' },
      logo: { type: 'image/svg+xml', content: Buffer.from(DOCS_LOGO), href: '/docs', target: '_self' },
    });
  });
  app.register(consoleRoutes); // the web console at /console/, with its own CSP

  registerIdempotency(app, services.idempotency);

  app.register(async (routes) => {
    const typed = routes as unknown as App;
    registerSessionRoutes(typed, services.auth, options.publicUrl ?? null, () => services.orderEvents.pollNow());
    registerFundsRoutes(typed, services.funds);
    registerOrderRoutes(typed, services.orderEntry, services.orderBook);
    registerPortfolioRoutes(typed, services.portfolio);
    registerOfsRoutes(typed, services.ofsBook, services.ofsOffers, services.reconciliations);
    registerOrderCartRoutes(typed, services.orderCarts);
    registerOrderEventRoutes(typed, services.orderEvents, services.eventStreams, services.indicativeFeed);
    registerHealthRoutes(typed, services.health, services.exchangeLinks);
    typed.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  });
  // On the root, so that every route and the 404s are counted.
  registerRequestMetrics(app, options.metrics);

  return app;
}
