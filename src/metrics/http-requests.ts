/**
 * HTTP requests in the operator's metrics: one histogram observation per answer (onResponse), labelled
 * with the route's pattern (`request.routeOptions.url`, a bounded set; a request that matched no route gets
 * one label for all), the method and the status code. And the count of calls answered 503 because the
 * database was out, which the error handler reports through `countDatabaseUnavailable`.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { UNMATCHED_ROUTE, type OperatorMetrics } from './operator-metrics.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The process's metrics; null when the app was built without them (tests, the docs). */
    operatorMetrics: OperatorMetrics | null;
  }
}

/** Call it on the root instance before the routes are registered, so that every route and the 404s are counted. */
export function registerRequestMetrics(app: FastifyInstance, metrics: OperatorMetrics | undefined): void {
  app.decorate('operatorMetrics', metrics ?? null);
  if (metrics === undefined) return;
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(
      request.method,
      request.routeOptions.url ?? UNMATCHED_ROUTE,
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    done();
  });
}

/** Counts a call answered 503 because the database could not be reached (src/http/plugins/errors.ts). */
export function countDatabaseUnavailable(request: FastifyRequest): void {
  request.server.operatorMetrics?.countDatabaseUnavailable();
}
