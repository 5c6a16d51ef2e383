/**
 * The metrics listener: GET /metrics (Prometheus's text format) with /health/live, /health/ready and /health/oms beside
 * it, on its own port (METRICS_PORT, on METRICS_HOST: 127.0.0.1 by default), never on the API's port. It
 * runs in `ordergate serve` and in `ordergate oms`, which has no other port.
 *
 * Why a port of its own (docs/design/security.md): the API's port is what traders reach, usually through a
 * TLS proxy on the same machine, whose connections all come from 127.0.0.1, so "loopback only" on that port
 * would let every client in. The metrics port is left out of the proxy and the balancer; bound beyond
 * loopback it needs METRICS_TOKEN (config.ts refuses the start otherwise), sent as `Authorization: Bearer`.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyRequest } from 'fastify';
import { ApiError, Errors } from '../../domain/errors.js';
import { timeOrderedId } from '../../ids.js';
import type { OperatorMetrics } from '../../metrics/operator-metrics.js';
import type { App } from '../app-type.js';
import { answerError, answerRoutingError } from '../plugins/errors.js';
import { registerHealthRoutes, type DatabaseProbe } from './health.js';
import type { LinkHealthBoard } from '../../oms/links/health-board.js';
import { registerRequestIdHeader } from '../plugins/request-id.js';
import { registerRouteNotFound } from '../plugins/route-not-found.js';

export const METRICS_PATH = '/metrics';

export interface MetricsListenerOptions {
  metrics: OperatorMetrics;
  /** METRICS_TOKEN: the Bearer token a scrape must send; null: none (the listener is on loopback). */
  token: string | null;
  database: DatabaseProbe;
  /** The process's exchange links (GET /health/ready, GET /health/exchanges). */
  exchangeLinks: Pick<LinkHealthBoard, 'current'>;
  logger: FastifyBaseLogger;
}

export interface MetricsListener {
  /** The address it listens on, e.g. http://127.0.0.1:9464. */
  url: string;
  close(): Promise<void>;
}

const digest = (text: string) => createHash('sha256').update(text).digest();

/** Refuses a scrape without the token (401 e-201) or with another one (401 e-202). */
function checkToken(request: FastifyRequest, expected: Buffer): void {
  const header = request.headers.authorization;
  if (header === undefined || header === '')
    throw new ApiError(Errors.TOKEN_MISSING, 'Send METRICS_TOKEN as Authorization: Bearer <token>');
  const given = /^Bearer (.+)$/.exec(header)?.[1];
  // Digests of equal length, compared in constant time: the comparison tells nothing of the token.
  if (given === undefined || !timingSafeEqual(digest(given), expected))
    throw new ApiError(Errors.TOKEN_INVALID, 'This is not the METRICS_TOKEN of this process');
}

export function buildMetricsApp(options: MetricsListenerOptions): App {
  const app = Fastify({
    loggerInstance: options.logger,
    // A line per scrape (every 15 s or so) would drown the log; failures are logged by the error handler.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => timeOrderedId(),
    frameworkErrors: answerRoutingError,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  registerRequestIdHeader(app);
  app.setErrorHandler(answerError);
  registerRouteNotFound(app);

  const expected = options.token === null ? null : digest(options.token);
  const { registry } = options.metrics;
  app.get(
    METRICS_PATH,
    {
      onRequest: async (request) => {
        if (expected !== null) checkToken(request, expected);
      },
    },
    async (_request, reply) => reply.type(registry.contentType).send(await registry.metrics()),
  );
  registerHealthRoutes(app, options.database, options.exchangeLinks);
  return app;
}

/** Listens on `host`:`port` (0: a free port) until close(). */
export async function startMetricsListener(
  options: MetricsListenerOptions & { host: string; port: number },
): Promise<MetricsListener> {
  const app = buildMetricsApp(options);
  try {
    const url = await app.listen({ host: options.host, port: options.port });
    return { url, close: () => app.close() };
  } catch (error) {
    await app.close().catch(() => undefined);
    throw error;
  }
}
