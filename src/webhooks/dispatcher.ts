/**
 * The webhook dispatcher: POSTs each queued delivery to its URL, signed, and retries failures with
 * exponential back-off until the retry time runs out. It runs beside the OMS worker (in `serve` with
 * OMS_EMBEDDED, or in `ordergate oms`); several may run on one database.
 *
 * At least once: a delivery is marked DELIVERED only after the receiver answered 2xx. A dispatcher that
 * dies between the receiver's answer and that mark leaves the delivery leased; when the lease runs out
 * another dispatcher sends it again, with the same event id for the receiver to drop the repeat.
 *
 * Order: deliveries to one webhook are sent one after another in event order; when one fails, the later
 * ones wait with it for its retry. Only when a delivery is given up do the later ones go on without it.
 *
 * Addresses: unless the operator allows them, plain http and non-public addresses are refused before each
 * attempt (the URL) and at each connection (the addresses its name resolves to, see address-guard.ts). A
 * refused attempt is given up at once: trying again would reach the same address, or give a rebinding
 * name another go; the operator sends it again with `ordergate webhooks retry` once it is fixed.
 */
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { fetch, type Agent } from 'undici';
import { STRICT_WEBHOOK_ADDRESSES, type WebhookAddressPolicy } from '../domain/orders/webhook-addresses.js';
import {
  DEFAULT_RETRY_POLICY,
  DELIVERY_ID_HEADER,
  EVENT_ID_HEADER,
  isDelivered,
  nextAttemptAt,
  SIGNATURE_HEADER,
  signWebhook,
  TIMESTAMP_HEADER,
  type DueDelivery,
  type RetryPolicy,
  webhookUrlProblem,
} from '../domain/orders/webhooks.js';
import type { WebhookMetrics } from '../metrics/operator-metrics.js';
import { toOrderEvent } from '../schemas/mappers/orders.js';
import type { EventHorizon, OrderEventRepository } from '../store/orders/events.js';
import type { WebhookRepository } from '../store/orders/webhooks.js';
import { guardedAgent, RefusedAddressError, type Resolver } from './address-guard.js';

export interface WebhookDispatcherOptions {
  webhooks: WebhookRepository;
  events: OrderEventRepository;
  /** How far events are committed: deliveries of later events wait (see EventHorizon). */
  horizon: EventHorizon;
  logger: Pick<Logger, 'info' | 'warn' | 'error'>;
  now?: () => number;
  /** The pause between two passes (ms). */
  pollMs?: number;
  /** How long one POST may take before it counts as failed (ms). */
  timeoutMs?: number;
  retry?: RetryPolicy;
  /** Deliveries claimed per pass. */
  batchSize?: number;
  /** How long a claimed delivery stays with this dispatcher (ms); longer than a pass can take. */
  leaseMs?: number;
  /** [0, 1) for the back-off jitter. */
  random?: () => number;
  dispatcherId?: string;
  /** Whether plain http and non-public addresses may be reached (WEBHOOK_ALLOW_*); by default neither. */
  addresses?: WebhookAddressPolicy;
  /** How names are resolved (`dns.lookup` by default; tests give names of their own). */
  resolve?: Resolver;
  /** Where its attempts and failed passes are counted (the operator's metrics). */
  metrics?: WebhookMetrics;
}

export const USER_AGENT = 'ordergate-webhooks/1';
/** Deliveries to one webhook sent in one pass, one after another. */
export const MAX_PER_WEBHOOK_PER_PASS = 10;
/** The longest pause after failed passes (a database outage). */
const MAX_BACKOFF_MS = 5_000;

/** The id the event's user knows it by (the body's `event_id`); the delivery row names its history row. */
function eventIdOf(body: string): number {
  return (JSON.parse(body) as { event_id: number }).event_id;
}

/** What one attempt came to: the receiver's status code, or no answer at all. */
interface AttemptResult {
  statusCode: number | null;
  error: string | null;
  /** The URL or the address it resolved to is refused: not tried again. */
  refused?: boolean;
}

export class WebhookDispatcher {
  readonly dispatcherId: string;
  private readonly now: () => number;
  private readonly pollMs: number;
  private readonly timeoutMs: number;
  private readonly retry: RetryPolicy;
  private readonly batchSize: number;
  private readonly leaseMs: number;
  private readonly random: () => number;
  private readonly addresses: WebhookAddressPolicy;
  /** Opens every connection of this dispatcher, through the address guard. */
  private agent: Agent;
  private running = false;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<number> = Promise.resolve(0);
  /** Deliveries the pass under way (or a failed one) holds; a failed pass's are given back at the next. */
  private held: number[] = [];
  private failures = 0;
  /** Aborts the POSTs under way when the dispatcher stops. */
  private aborter = new AbortController();

  constructor(private readonly options: WebhookDispatcherOptions) {
    this.dispatcherId = options.dispatcherId ?? `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
    this.now = options.now ?? Date.now;
    this.pollMs = options.pollMs ?? 500;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.retry = options.retry ?? DEFAULT_RETRY_POLICY;
    this.batchSize = options.batchSize ?? 100;
    // Longer than the longest pass: a webhook's share of it, each POST waiting its whole timeout.
    this.leaseMs = options.leaseMs ?? Math.max(60_000, this.timeoutMs * (MAX_PER_WEBHOOK_PER_PASS + 2));
    this.random = options.random ?? Math.random;
    this.addresses = options.addresses ?? STRICT_WEBHOOK_ADDRESSES;
    this.agent = guardedAgent(this.addresses, options.resolve);
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.aborter = new AbortController();
    this.options.logger.info({ dispatcherId: this.dispatcherId, pollMs: this.pollMs }, 'webhook dispatcher started');
    this.schedule(0);
  }

  /** Stops after the pass under way; POSTs still waiting for an answer are abandoned (sent again later). */
  async stop(): Promise<void> {
    if (!this.running) return;
    this.running = false;
    clearTimeout(this.timer);
    this.aborter.abort();
    await this.pass.catch(() => undefined);
    // Closes the kept-alive connections; a restarted dispatcher opens new ones.
    const agent = this.agent;
    this.agent = guardedAgent(this.addresses, this.options.resolve);
    await agent.close();
    this.options.logger.info({ dispatcherId: this.dispatcherId }, 'webhook dispatcher stopped');
  }

  /** Sends everything due now; answers how many attempts it made. Never beside another pass. */
  runOnce(): Promise<number> {
    this.pass = this.pass.catch(() => 0).then(() => this.sendDue());
    return this.pass;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      if (!this.running) return;
      this.runOnce()
        .then(
          () => {
            this.failures = 0;
          },
          (error: unknown) => {
            this.failures += 1;
            this.options.metrics?.passFailed();
            this.options.logger.error({ err: error, failures: this.failures }, 'webhook pass failed; retrying');
          },
        )
        .finally(() => {
          // The database may be out: back off (at most 5 s) until a pass succeeds.
          const delay =
            this.failures === 0
              ? this.pollMs
              : Math.min(this.pollMs * 2 ** this.failures, Math.max(this.pollMs, MAX_BACKOFF_MS));
          if (this.running) this.schedule(delay);
        });
    }, delayMs);
  }

  private async sendDue(): Promise<number> {
    const { webhooks } = this.options;
    if (this.held.length > 0) {
      // A failed pass left these leased: due again now rather than when the lease runs out.
      await webhooks.release(this.held, this.dispatcherId, this.now());
      this.held = [];
    }
    const now = this.now();
    // At most a few per webhook in one pass, so that the pass ends within its lease.
    const perWebhook = new Map<string, number>();
    const ids: number[] = [];
    const horizon = await this.options.horizon.advance();
    for (const { id, webhookId } of await webhooks.due(now, this.batchSize, horizon)) {
      const taken = perWebhook.get(webhookId) ?? 0;
      if (taken >= MAX_PER_WEBHOOK_PER_PASS) continue;
      perWebhook.set(webhookId, taken + 1);
      ids.push(id);
    }
    // Held from before the claim: a claim that commits while its answer is lost (the connection cut) leaves
    // leases this pass cannot see; the next gives back all it asked for (release skips others' leases).
    this.held = ids;
    const claimed = await webhooks.claim(ids, this.dispatcherId, now, now + this.leaseMs);
    this.held = claimed.map((d) => d.id);
    if (claimed.length === 0) return 0;
    await this.fixPayloads(claimed);
    const byWebhook = new Map<string, DueDelivery[]>();
    for (const delivery of claimed)
      byWebhook.set(delivery.webhookId, [...(byWebhook.get(delivery.webhookId) ?? []), delivery]);
    const attempts = await Promise.all([...byWebhook.values()].map((queue) => this.sendInOrder(queue)));
    this.held = [];
    return attempts.reduce((a, b) => a + b, 0);
  }

  /** The body of each delivery is made once, from the event as it is at its first attempt. */
  private async fixPayloads(deliveries: DueDelivery[]): Promise<void> {
    const missing = deliveries.filter((d) => d.payload === null);
    if (missing.length === 0) return;
    const events = new Map(
      (await this.options.events.eventsByIds([...new Set(missing.map((d) => d.eventId))])).map((row) => [
        row.historyId,
        row,
      ]),
    );
    for (const delivery of missing) {
      const event = events.get(delivery.eventId);
      if (event === undefined) continue;
      delivery.payload = JSON.stringify(toOrderEvent(event));
      await this.options.webhooks.setPayload(delivery.id, delivery.payload);
    }
  }

  /** One webhook's deliveries, oldest first; a failure holds back the rest until its retry. */
  private async sendInOrder(queue: DueDelivery[]): Promise<number> {
    const { webhooks, logger } = this.options;
    let sent = 0;
    for (const [index, delivery] of queue.entries()) {
      if (this.aborter.signal.aborted) {
        await webhooks.release(
          queue.slice(index).map((d) => d.id),
          this.dispatcherId,
          this.now(),
        );
        break;
      }
      const started = performance.now();
      const result =
        delivery.payload === null
          ? { statusCode: null, error: 'the event no longer exists' }
          : await this.post(delivery, delivery.payload);
      const seconds = (performance.now() - started) / 1000;
      const at = this.now();
      if (result.statusCode === null && this.aborter.signal.aborted) {
        // Cut off by stop(): not counted as an attempt; sent again after the restart.
        await webhooks.release(
          queue.slice(index).map((d) => d.id),
          this.dispatcherId,
          at,
        );
        break;
      }
      sent += 1;
      if (result.statusCode !== null && isDelivered(result.statusCode)) {
        await webhooks.markDelivered(delivery.id, this.dispatcherId, at, result.statusCode);
        this.options.metrics?.attempt('delivered', seconds);
        continue;
      }
      const error = result.error ?? `HTTP ${result.statusCode}`;
      const retryAt =
        delivery.payload === null || result.refused === true
          ? null
          : nextAttemptAt(delivery.createdAt, delivery.attempts + 1, at, this.retry, this.random());
      await webhooks.markAttemptFailed(delivery.id, this.dispatcherId, at, retryAt, result.statusCode, error);
      this.options.metrics?.attempt(retryAt === null ? 'given_up' : 'retrying', seconds);
      const context = {
        deliveryId: delivery.id,
        webhookId: delivery.webhookId,
        historyId: delivery.eventId,
        attempts: delivery.attempts + 1,
        error,
      };
      if (retryAt === null) {
        logger.error(context, 'webhook delivery given up');
        continue;
      }
      logger.warn({ ...context, retryAt: new Date(retryAt).toISOString() }, 'webhook delivery failed; will retry');
      await webhooks.release(
        queue.slice(index + 1).map((d) => d.id),
        this.dispatcherId,
        retryAt,
      );
      break;
    }
    return sent;
  }

  private async post(delivery: DueDelivery, body: string): Promise<AttemptResult> {
    // The settings may have changed since the URL was registered; a literal address is judged here.
    const problem = webhookUrlProblem(delivery.url, this.addresses);
    if (problem !== null) return { statusCode: null, error: `refused: ${problem}`, refused: true };
    const timestamp = Math.floor(this.now() / 1000);
    // A timer of our own, not AbortSignal.timeout inside AbortSignal.any: Node 20 may collect such a
    // timeout signal before it fires (nodejs/node#57736), and the POST would then wait for ever.
    const attempt = new AbortController();
    const timer = setTimeout(
      () => attempt.abort(new DOMException(`no answer within ${this.timeoutMs} ms`, 'TimeoutError')),
      this.timeoutMs,
    );
    const stop = () => attempt.abort(this.aborter.signal.reason);
    if (this.aborter.signal.aborted) stop();
    else this.aborter.signal.addEventListener('abort', stop, { once: true });
    try {
      const response = await fetch(delivery.url, {
        dispatcher: this.agent,
        method: 'POST',
        redirect: 'manual',
        headers: {
          'content-type': 'application/json',
          'user-agent': USER_AGENT,
          [EVENT_ID_HEADER]: String(eventIdOf(body)),
          [DELIVERY_ID_HEADER]: String(delivery.id),
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signWebhook(delivery.secret, timestamp, body),
        },
        body,
        signal: attempt.signal,
      });
      // The status alone decides; the body is never read, so an endpoint that streams without end holds no
      // memory and no time. Cancelling it closes the connection.
      await response.body?.cancel().catch(() => undefined);
      return { statusCode: response.status, error: null };
    } catch (error) {
      if (error instanceof Error && error.cause instanceof RefusedAddressError)
        return { statusCode: null, error: error.cause.message, refused: true };
      const cause = error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : '';
      const message =
        error instanceof Error
          ? `${error.name === 'TimeoutError' ? `no answer within ${this.timeoutMs} ms` : error.message}${cause}`
          : String(error);
      return { statusCode: null, error: message };
    } finally {
      clearTimeout(timer);
      this.aborter.signal.removeEventListener('abort', stop);
    }
  }
}
