/**
 * The operator's metrics of one process, in Prometheus's text format (prom-client). One Registry per
 * process, never prom-client's global one, so that several apps in one process (the tests) keep theirs
 * apart. It is created at start-up (src/server.ts, src/cli/oms.ts) and handed to what it measures, each
 * part seeing only its narrow interface below; what lives elsewhere (the outbox's backlog, the open
 * streams) is read when Prometheus scrapes, not kept up to date on every change.
 *
 * The names, labels and meaning of every series: docs/production.md, "Operator metrics and health".
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { OutboxBacklog } from '../store/sql/health.js';

/** The calls the OMS makes to the exchange adapter (src/oms/exchange.ts). */
export type ExchangeOperation =
  'find_bids' | 'place_bids' | 'modify' | 'cancel' | 'carry_forward' | 'poll_events' | 'acknowledge';
/**
 * ok: answered; refused: answered "not done" (a modification or cancellation the exchange refused);
 * unanswered: no answer to go by for some of it (lost, or not taken: tried again after the link's back-off);
 * error: threw.
 */
export type ExchangeOutcome = 'ok' | 'refused' | 'unanswered' | 'error';
/** delivered: a 2xx; retrying: failed, tried again later; given_up: failed for the last time (or refused by the address rules). */
export type WebhookOutcome = 'delivered' | 'retrying' | 'given_up';

/** What order entry's group commit reports, once per batch (never per command). */
export interface OrderEntryMetrics {
  batchDone(commands: number, seconds: number, committed: boolean): void;
}

/** What the OMS worker reports. */
export interface OmsMetrics {
  exchangeCall(operation: ExchangeOperation, outcome: ExchangeOutcome, seconds: number): void;
  passFailed(): void;
  /** One instrument's work failed (src/oms/instrument-guard.ts): `step` what failed, `setAside` whether it is now set aside. */
  instrumentFailed(step: string, setAside: boolean): void;
}

/** How a reconciliation ran (src/oms/reconciler.ts): no difference, differences, the exchange out, no book to give yet, an error of ours. */
export type ReconciliationOutcome = 'clean' | 'differences' | 'unavailable' | 'no_book' | 'error';

/** What the reconciler reports. */
export interface ReconciliationMetrics {
  run(outcome: ReconciliationOutcome): void;
}

/** What the webhook dispatcher reports. */
export interface WebhookMetrics {
  attempt(outcome: WebhookOutcome, seconds: number): void;
  passFailed(): void;
}

/** The long-lived connections of this node (src/services/stream-quota.ts), and the ones it refused. */
export interface StreamUsage {
  open: number;
  refusedForUser: number;
  refusedForNode: number;
  /** Socket connections not logged in yet, and those their caps refused (per address, per node). */
  pending: number;
  refusedPendingForAddress: number;
  refusedPendingForNode: number;
}

/** The route label of a request that matched no route: one label for all of them, never the raw URL. */
export const UNMATCHED_ROUTE = 'unmatched';

/** How long a scrape waits for the outbox's figures before it answers without them. */
const BACKLOG_TIMEOUT_MS = 1_000;

const HTTP_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Order entry takes at most 512 commands in one batch (src/services/group-commit.ts). */
const BATCH_SIZE_BUCKETS = [1, 2, 5, 10, 20, 50, 100, 200, 512];
const CALL_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

type HttpLabel = 'route' | 'method' | 'status_code';

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly orderEntry: OrderEntryMetrics;
  readonly oms: OmsMetrics;
  readonly webhooks: WebhookMetrics;
  readonly reconciliations: ReconciliationMetrics;

  private readonly httpDuration: Histogram<HttpLabel>;
  /** The histogram's children by method, route and status: a request costs three map look-ups, no label object. */
  private readonly httpChildren = new Map<string, Map<string, Map<number, Histogram.Internal<HttpLabel>>>>();
  private readonly databaseUnavailable: Counter;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });

    this.httpDuration = new Histogram({
      name: 'ordergate_http_request_duration_seconds',
      help: 'HTTP requests by route pattern, method and status code, and how long each took to answer; _count is the number of requests.',
      labelNames: ['route', 'method', 'status_code'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.databaseUnavailable = new Counter({
      name: 'ordergate_database_unavailable_total',
      help: 'API calls answered 503 e-503 because the database could not be reached or used.',
      registers,
    });

    const batchSize = new Histogram({
      name: 'ordergate_order_entry_batch_size',
      help: 'Order-entry commands (bids placed, modified, cancelled) committed together in one transaction.',
      buckets: BATCH_SIZE_BUCKETS,
      registers,
    });
    const commitDuration = new Histogram<'outcome'>({
      name: 'ordergate_order_entry_commit_duration_seconds',
      help: "An order-entry batch's transaction, from its first read to its commit (outcome committed or failed).",
      labelNames: ['outcome'],
      buckets: COMMIT_BUCKETS,
      registers,
    });
    const committed = commitDuration.labels('committed');
    const failed = commitDuration.labels('failed');
    this.orderEntry = {
      batchDone(commands, seconds, ok) {
        batchSize.observe(commands);
        (ok ? committed : failed).observe(seconds);
      },
    };

    const exchangeCalls = new Histogram<'operation' | 'outcome'>({
      name: 'ordergate_oms_exchange_call_duration_seconds',
      help: 'Calls of the OMS to the exchange by operation and outcome (ok, refused, unanswered, error), and how long each took.',
      labelNames: ['operation', 'outcome'],
      buckets: CALL_BUCKETS,
      registers,
    });
    const omsPassFailures = new Counter({
      name: 'ordergate_oms_pass_failures_total',
      help: 'Passes of the OMS worker that failed (the database or the exchange out); the worker backs off and retries.',
      registers,
    });
    const instrumentFailures = new Counter<'step' | 'set_aside'>({
      name: 'ordergate_oms_instrument_failures_total',
      help: "Failures of one instrument's work in the OMS (step allocation, indicative or events); set_aside=true: the failure that set the instrument aside for the operator.",
      labelNames: ['step', 'set_aside'],
      registers,
    });
    this.oms = {
      exchangeCall: (operation, outcome, seconds) => exchangeCalls.labels(operation, outcome).observe(seconds),
      passFailed: () => omsPassFailures.inc(),
      instrumentFailed: (step, setAside) => instrumentFailures.labels(step, String(setAside)).inc(),
    };

    const webhookAttempts = new Histogram<'outcome'>({
      name: 'ordergate_webhook_attempt_duration_seconds',
      help: 'Webhook delivery attempts by outcome (delivered, retrying, given_up), and how long each took.',
      labelNames: ['outcome'],
      buckets: CALL_BUCKETS,
      registers,
    });
    const webhookPassFailures = new Counter({
      name: 'ordergate_webhook_pass_failures_total',
      help: 'Passes of the webhook dispatcher that failed (the database out); it backs off and retries.',
      registers,
    });
    this.webhooks = {
      attempt: (outcome, seconds) => webhookAttempts.labels(outcome).observe(seconds),
      passFailed: () => webhookPassFailures.inc(),
    };

    const reconciliationRuns = new Counter<'outcome'>({
      name: 'ordergate_ofs_reconciliation_runs_total',
      help: "Reconciliations of an offer's listing run by this process (the exchange session's holder), by outcome: clean, differences, unavailable (the exchange did not answer), no_book (the link has no book yet), error.",
      labelNames: ['outcome'],
      registers,
    });
    this.reconciliations = { run: (outcome) => reconciliationRuns.labels(outcome).inc() };
  }

  /**
   * The differences in the latest reconciliation report of each offer's listing, by exchange and kind
   * (docs/reconciliation.md), read from the database when scraped: the same figures in every process.
   */
  watchReconciliations(read: () => Promise<readonly { exchange: string; kind: string; count: number }[]>): void {
    new Gauge<'exchange' | 'kind'>({
      name: 'ordergate_ofs_reconciliation_differences',
      help: "Differences between the exchange's book and ordergate's orders in the latest reconciliation of each offer's listing run in the last week, by exchange and kind (MISSING_AT_EXCHANGE, UNKNOWN_TO_US, ...).",
      labelNames: ['exchange', 'kind'],
      registers: [this.registry],
      async collect() {
        const counts = await answerWithin(read(), BACKLOG_TIMEOUT_MS).catch(() => null);
        this.reset();
        for (const { exchange, kind, count } of counts ?? []) this.labels(exchange, kind).set(count);
      },
    });
  }

  /** Counts one HTTP answer; `route` is the route's pattern (UNMATCHED_ROUTE when none matched). */
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void {
    let byRoute = this.httpChildren.get(method);
    if (byRoute === undefined) this.httpChildren.set(method, (byRoute = new Map()));
    let byStatus = byRoute.get(route);
    if (byStatus === undefined) byRoute.set(route, (byStatus = new Map()));
    let child = byStatus.get(statusCode);
    if (child === undefined)
      byStatus.set(statusCode, (child = this.httpDuration.labels(route, method, String(statusCode))));
    child.observe(seconds);
  }

  countDatabaseUnavailable(): void {
    this.databaseUnavailable.inc();
  }

  /**
   * The outbox's backlog as two gauges, read with one query per scrape (`read` is shared by both). When the
   * database does not answer within a second, the scrape still answers, with both NaN (unknown, not 0).
   */
  watchOutbox(read: () => Promise<OutboxBacklog>, now: () => number = Date.now): void {
    let reading: Promise<OutboxBacklog | null> | null = null;
    const backlog = () =>
      (reading ??= answerWithin(read(), BACKLOG_TIMEOUT_MS)
        .catch(() => null)
        .finally(() => {
          reading = null;
        }));
    const registers = [this.registry];
    new Gauge({
      name: 'ordergate_oms_outbox_open_entries',
      help: 'Outbox entries (placements, modifications, cancellations) not yet done by an OMS worker, in the whole database.',
      registers,
      async collect() {
        const figures = await backlog();
        this.set(figures === null ? NaN : figures.open);
      },
    });
    new Gauge({
      name: 'ordergate_oms_outbox_oldest_age_seconds',
      help: 'Age of the oldest outbox entry not yet done (0 when there is none): how far the OMS lags behind order entry.',
      registers,
      async collect() {
        const figures = await backlog();
        if (figures === null) this.set(NaN);
        else this.set(figures.oldestCreatedAt === null ? 0 : Math.max(0, now() - figures.oldestCreatedAt) / 1000);
      },
    });
  }

  /**
   * The instruments the OMS has set aside after repeated failures (`ordergate oms stuck`), read from the
   * database when scraped; NaN when it does not answer within a second. Alert on any above 0.
   */
  watchSetAside(read: () => Promise<number>): void {
    new Gauge({
      name: 'ordergate_oms_instruments_set_aside',
      help: "Instruments (offers, issues) whose work the OMS set aside after repeated failures, in the whole database: each waits for the operator's `ordergate oms retry`.",
      registers: [this.registry],
      async collect() {
        this.set(await answerWithin(read(), BACKLOG_TIMEOUT_MS).catch(() => NaN));
      },
    });
  }

  /** This process's exchange links (src/oms/links/), read when scraped. */
  watchExchangeLinks(
    read: () => readonly { exchange: string; connected: boolean; lastAnswerAt: number | null }[],
    now: () => number = Date.now,
  ): void {
    const registers = [this.registry];
    new Gauge<'exchange'>({
      name: 'ordergate_exchange_link_connected',
      help: "1 while this process's link to the exchange segment holds a session and its message stream is open, else 0.",
      labelNames: ['exchange'],
      registers,
      collect() {
        this.reset();
        for (const link of read()) this.labels(link.exchange).set(link.connected ? 1 : 0);
      },
    });
    new Gauge<'exchange'>({
      name: 'ordergate_exchange_link_last_answer_age_seconds',
      help: 'How long ago the exchange last answered this link (any call, or a message of its stream); absent before the first answer.',
      labelNames: ['exchange'],
      registers,
      collect() {
        this.reset();
        for (const link of read())
          if (link.lastAnswerAt !== null) this.labels(link.exchange).set(Math.max(0, now() - link.lastAnswerAt) / 1000);
      },
    });
  }

  /** This node's event streams and live order sockets, read when scraped. */
  watchStreams(usage: () => StreamUsage): void {
    const registers = [this.registry];
    new Gauge({
      name: 'ordergate_streams_open',
      help: 'Order-event streams (SSE) and live order sockets open on this node, together (the MAX_STREAMS_PER_NODE budget).',
      registers,
      collect() {
        this.set(usage().open);
      },
    });
    new Gauge({
      name: 'ordergate_sockets_pending',
      help: 'Live order socket connections not logged in yet on this node (the MAX_PENDING_SOCKETS_PER_NODE budget).',
      registers,
      collect() {
        this.set(usage().pending);
      },
    });
    new Counter<'limit'>({
      name: 'ordergate_streams_refused_total',
      help: 'Streams and sockets refused by a cap: limit "user" (MAX_STREAMS_PER_USER, 429), "node" (MAX_STREAMS_PER_NODE, 503), "pending_address" (MAX_PENDING_SOCKETS_PER_ADDRESS, 429) or "pending_node" (MAX_PENDING_SOCKETS_PER_NODE, 503).',
      labelNames: ['limit'],
      registers,
      collect() {
        const { refusedForUser, refusedForNode, refusedPendingForAddress, refusedPendingForNode } = usage();
        this.reset();
        this.labels('user').inc(refusedForUser);
        this.labels('node').inc(refusedForNode);
        this.labels('pending_address').inc(refusedPendingForAddress);
        this.labels('pending_node').inc(refusedPendingForNode);
      },
    });
  }
}

/** `promise`, or a rejection when it has not settled within `ms` (it runs on; its outcome is dropped). */
export function answerWithin<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
