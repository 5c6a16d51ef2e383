/**
 * Start-up: config, database (migrated), the process's metrics, services, the HTTP app, the metrics
 * listener (METRICS_PORT), the embedded OMS worker and webhook dispatcher (unless OMS_EMBEDDED=false), and a
 * clean shutdown on SIGTERM/SIGINT.
 */
import type { Logger } from 'pino';
import { buildApp } from './app.js';
import { attachMessageSocket } from './http/routes/message-socket.js';
import type { MetricsListener } from './http/routes/metrics.js';
import { OperatorMetrics } from './metrics/operator-metrics.js';
import type { App } from './http/app-type.js';
import type { Config } from './config.js';
import { openStore, SERVER_SQLITE_BUSY_TIMEOUT_MS, type Store } from './store/sql/database.js';
import { migrateToLatest } from './store/schema/migrations.js';
import { warnOfMaintenance } from './store/sql/health.js';
import { UserRepository } from './store/access/users.js';
import type { OmsWorker } from './oms/worker.js';
import type { WebhookDispatcher } from './webhooks/dispatcher.js';
import { passwordHasherFor } from './auth/credentials.js';
import {
  configuredWebhookDispatcher,
  createOmsWorker,
  createReconciler,
  openExchangeLinks,
  type ExchangeLinks,
  createServices,
  listenForMetrics,
  watchStore,
} from './wiring.js';

/** How long a shutdown waits for requests under way before it cuts their connections. */
export const SHUTDOWN_GRACE_MS = 5_000;

export interface RunningServer {
  app: App;
  store: Store;
  /** The embedded OMS worker, running; null when OMS_EMBEDDED=false. */
  oms: OmsWorker | null;
  /** The embedded OMS worker's exchange links (and the simulator behind them); null when OMS_EMBEDDED=false. */
  links: ExchangeLinks | null;
  /** The webhook dispatcher, running beside the embedded OMS worker; null when OMS_EMBEDDED=false. */
  webhooks: WebhookDispatcher | null;
  /** The address the server listens on, e.g. http://127.0.0.1:8080. */
  url: string;
  /** The metrics listener's address (GET /metrics), e.g. http://127.0.0.1:9464; null without METRICS_PORT. */
  metricsUrl: string | null;
  stop(): Promise<void>;
}

export async function startServer(config: Config, logger: Logger): Promise<RunningServer> {
  // A request waits less than a second for another process's SQLite write lock, then answers 503.
  const store = openStore(config.databaseUrl, { sqliteBusyTimeoutMs: SERVER_SQLITE_BUSY_TIMEOUT_MS });
  try {
    await migrateToLatest(store);
  } catch (error) {
    await store.close();
    throw error;
  }
  const metrics = new OperatorMetrics();
  const services = createServices(store, {
    tokenTtlSeconds: config.tokenTtlSeconds,
    sessionDailyEnd: config.sessionDailyEnd,
    limits: config.limits,
    algo: config.algo,
    metrics,
    passwordHasher: passwordHasherFor(config.passwordHashCost),
  });
  watchStore(metrics, store, services.exchangeLinks);
  metrics.watchStreams(() => services.orderEvents.streams.usage());
  // The app closes its Redis client (rate limits) itself, in app.close().
  const app = buildApp(services, {
    metrics,
    logger,
    rateLimits: config.rateLimits,
    requestTimeoutMs: config.requestTimeoutMs,
    publicUrl: config.publicUrl,
    trustProxy: config.trustProxy,
    shedding: config.shedding,
  });
  // The live order socket (Socket.IO) on the same port; closed before the HTTP server.
  const messageSocket = attachMessageSocket(app.server, {
    auth: services.auth,
    orderEvents: services.orderEvents,
    logger,
  });
  let url: string;
  let metricsListener: MetricsListener | null = null;
  // The exchange links the embedded OMS sends through (docs/exchanges.md): by default the exchange simulator,
  // started here on loopback and reached over the e-OFS wire. Opened before the API listens: a node whose
  // links cannot open (the simulator's port taken, an unreadable password file) must not take orders.
  let links: ExchangeLinks | null = null;
  try {
    links = config.omsEmbedded ? await openExchangeLinks(store, config.exchange, logger, Date.now, metrics.oms) : null;
    url = await app.listen({ host: config.host, port: config.port });
    metricsListener = await listenForMetrics(config, metrics, store, logger, services.exchangeLinks);
  } catch (error) {
    // Nothing may be left running (the simulator, the Redis client, the database pool): the command must exit.
    await links?.close().catch(() => undefined);
    await messageSocket.close();
    await app.close().catch(() => undefined);
    await store.close();
    throw error;
  }
  logger.info({ url, database: store.location }, 'ordergate listening');
  if (config.passwordHashCost !== 'owasp')
    logger.warn(
      { passwordHashCost: config.passwordHashCost },
      'PASSWORD_HASH_COST is for test suites: new password hashes are weak',
    );
  await warnOfMaintenance(store, logger);
  const opened = links;
  if (opened !== null) services.exchangeLinks.watch(() => opened.health());
  const oms =
    opened !== null
      ? createOmsWorker(store, {
          logger,
          pollMs: config.omsPollMs,
          leaseMs: config.omsLeaseMs,
          metrics: metrics.oms,
          ...(opened.exchange !== undefined && { exchange: opened.exchange }),
        })
      : null;
  oms?.start();
  // Reconciliation at every close and at the operator's request, where this node holds the exchange session.
  const reconciler =
    oms !== null && opened !== null
      ? createReconciler(store, {
          logger,
          holder: oms.workerId,
          metrics: metrics.reconciliations,
          ...(opened.exchange !== undefined && { exchange: opened.exchange }),
        })
      : null;
  reconciler?.start();
  // An idle OMS passes every IDLE_POLL_MS; this node's own orders wake it at their commit.
  if (oms !== null) services.orderEntry.whenCommitted(() => oms.wake());
  const webhooks = config.omsEmbedded ? configuredWebhookDispatcher(store, config, logger, metrics.webhooks) : null;
  webhooks?.start();
  let stopping: Promise<void> | undefined;
  // The workers finish their passes before the store they work on is closed; /metrics answers until then.
  const stop = () =>
    (stopping ??= Promise.all([
      messageSocket.close().then(() => closeHttp(app, logger)),
      Promise.all([reconciler?.stop(), oms?.stop()]).then(() => opened?.close()),
      webhooks?.stop(),
    ])
      .then(() => metricsListener?.close())
      .then(() => store.close()));
  return { app, store, oms, links: opened, webhooks, url, metricsUrl: metricsListener?.url ?? null, stop };
}

/**
 * Stops accepting connections, lets the requests under way finish, then closes. A connection that still
 * holds the close up after the grace period (a client that connected and never sent its request; once in
 * a few dozen test runs, an event stream whose client left just as the close began) is cut.
 */
export async function closeHttp(app: App, logger: Pick<Logger, 'warn'>): Promise<void> {
  const grace = setTimeout(() => {
    app.server.getConnections((_error, count) =>
      logger.warn({ connections: count }, 'closing the connections still open after the grace period'),
    );
    app.server.closeAllConnections();
  }, SHUTDOWN_GRACE_MS);
  try {
    await app.close();
  } finally {
    clearTimeout(grace);
  }
}

export const EMPTY_DATABASE_HINT =
  'The database has no users yet: run `npx ordergate demo` for a demo user, an API key and an OFS issue open for bids.';

/**
 * Runs until SIGTERM or SIGINT, then drains in-flight requests and closes the database. `hint` receives
 * plain one-line advice for the operator (`ordergate serve` writes it to stderr, beside the JSON log).
 */
export async function serveUntilSignalled(
  config: Config,
  logger: Logger,
  hint: (line: string) => void = () => undefined,
): Promise<void> {
  const server = await startServer(config, logger);
  let stopping = false;
  let onSignal: (signal: NodeJS.Signals) => void = () => undefined;
  const stopped = new Promise<void>((resolve) => {
    onSignal = (signal) => {
      // A second signal (Ctrl-C on `npm start` sends SIGINT twice: the terminal's and npm's; a service manager
      // may signal the whole group) must not kill the process half way through its drain: said, and ignored.
      if (stopping) return logger.info({ signal }, 'already shutting down: the signal is ignored, the drain goes on');
      stopping = true;
      logger.info({ signal }, 'shutting down');
      server.stop().then(resolve, (error: unknown) => {
        logger.error({ err: error }, 'error during shutdown');
        resolve();
      });
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
  void stopped.then(() => {
    process.off('SIGTERM', onSignal);
    process.off('SIGINT', onSignal);
  });
  try {
    if ((await new UserRepository(server.store.db, server.store.dialect).count()) === 0) hint(EMPTY_DATABASE_HINT);
  } catch (error) {
    // Only advice: a signal may already have closed the database.
    logger.debug({ err: error }, 'could not count users');
  }
  await stopped;
}
