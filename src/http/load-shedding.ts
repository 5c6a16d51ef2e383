/**
 * Load shedding (docs/design/security.md): when the database falls behind (no commit has finished for
 * SHED_COMMIT_WAIT_MS while every lane holds one, or more orders wait than its next commit takes, the oldest
 * of them past SHED_COMMIT_WAIT_MS; looked at on every order-entry call) or the event loop
 * does (its mean delay over the last quarter second past SHED_EVENT_LOOP_DELAY_MS, sampled by
 * @fastify/under-pressure), new order-entry calls answer 503 e-503 with Retry-After at once instead of
 * joining the queue. Reads, logins and the docs keep answering, and the service takes orders again by
 * itself as soon as it has caught up.
 */
import underPressure from '@fastify/under-pressure';
import type { SheddingConfig } from '../config.js';
import { ApiError, Errors } from '../domain/errors.js';
import type { App } from './app-type.js';

/** How often the event loop's delay is sampled (ms). */
const SAMPLE_INTERVAL_MS = 250;
/** A shed caller may try again after a second: an OFS window is short, and overload passes quickly. */
export const SHED_RETRY_AFTER_SECONDS = 1;

function overloaded(why: string): ApiError {
  return new ApiError(Errors.UNAVAILABLE, `The service is overloaded (${why}) and takes no new orders for now; retry after ${SHED_RETRY_AFTER_SECONDS} s`, [], {
    'Retry-After': String(SHED_RETRY_AFTER_SECONDS),
  });
}

/**
 * Registers the measures and the hook that sheds. Call it before the auth hook: a shed call then costs no
 * token lookup, the cheapest answer the server can give while it is behind.
 */
export function registerLoadShedding(app: App, config: SheddingConfig, commitsFallBehind: (maxWaitMs: number) => { behind: boolean; oldestWaitMs: number }): void {
  const { eventLoopDelayMs, commitWaitMs: maxCommitWaitMs } = config;
  if (eventLoopDelayMs === 0 && maxCommitWaitMs === 0) return;
  if (eventLoopDelayMs > 0) {
    // The plugin only measures: its own hook lets every call through, and the hook below decides.
    app.register(underPressure, { sampleInterval: SAMPLE_INTERVAL_MS, maxEventLoopDelay: eventLoopDelayMs, pressureHandler: () => undefined });
  }

  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.auth !== 'order-entry') return done();
    if (maxCommitWaitMs > 0) {
      const commits = commitsFallBehind(maxCommitWaitMs);
      if (commits.behind) return done(overloaded(`its database commits are ${Math.round(commits.oldestWaitMs)} ms behind`));
    }
    if (eventLoopDelayMs > 0 && app.isUnderPressure()) {
      // Infinity when the last sample saw no tick at all (the loop was blocked throughout).
      const delay = app.memoryUsage().eventLoopDelay;
      return done(overloaded(Number.isFinite(delay) ? `its event loop is ${Math.round(delay)} ms behind` : 'its event loop is behind'));
    }
    done();
  });
}
