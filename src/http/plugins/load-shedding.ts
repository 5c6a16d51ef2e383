/**
 * Load shedding (docs/design/security.md): when the database falls behind (no commit has finished for
 * SHED_COMMIT_WAIT_MS while every lane holds one, or more orders wait than its next commit takes, the oldest
 * of them past SHED_COMMIT_WAIT_MS; looked at on every order-entry call) or the event loop
 * does (its mean delay over the last quarter second past SHED_EVENT_LOOP_DELAY_MS, sampled by
 * @fastify/under-pressure, or a single recent hold of the loop past it; a quarter second in which the
 * loop never ticked counts as long as the loop was held, not as for ever), new order-entry calls answer 503 e-503 with Retry-After at once instead of
 * joining the queue. Reads, logins and the docs keep answering, and the service takes orders again by
 * itself as soon as it has caught up.
 */
import underPressure from '@fastify/under-pressure';
import type { SheddingConfig } from '../../config.js';
import { ApiError, Errors } from '../../domain/errors.js';
import type { App } from '../app-type.js';

/** How often the event loop's delay is sampled (ms). */
const SAMPLE_INTERVAL_MS = 250;
/** The period of the ticker that times how long the loop was held when a sample saw no tick (ms). */
const TICK_MS = 50;
/** A shed caller may try again after a second: an OFS window is short, and overload passes quickly. */
export const SHED_RETRY_AFTER_SECONDS = 1;

function overloaded(why: string): ApiError {
  return new ApiError(
    Errors.UNAVAILABLE,
    `The service is overloaded (${why}) and takes no new orders for now; retry after ${SHED_RETRY_AFTER_SECONDS} s`,
    [],
    {
      'Retry-After': String(SHED_RETRY_AFTER_SECONDS),
    },
  );
}

/**
 * How late a TICK_MS ticker ran, at most, over the last one or two sample intervals: the length of the
 * longest recent hold of the event loop. under-pressure's sample is the mean delay of its ticks, and
 * Infinity when it saw none (the loop was held throughout the quarter second): a single 400 ms pause (a
 * large batch, a collection) then read as an overload beyond any threshold, and order entry was shed for a
 * quarter second with a 1 s threshold.
 */
function recentHold(app: App): () => number {
  let last = performance.now();
  let windowStartedAt = last;
  let worst = 0;
  let previousWorst = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    if (now - windowStartedAt >= SAMPLE_INTERVAL_MS) {
      previousWorst = worst;
      worst = 0;
      windowStartedAt = now;
    }
    worst = Math.max(worst, now - last - TICK_MS);
    last = now;
  }, TICK_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
  return () => Math.max(worst, previousWorst, performance.now() - last - TICK_MS);
}

/**
 * The event loop's delay as shedding judges it: the worse of under-pressure's sample (left out when it saw
 * no tick: Infinity, the loop held throughout) and the longest recent hold of the loop. A single hold past
 * the threshold is shed whatever the sample made of it (a sample whose window began with ticks averages a
 * 1.5 s hold down to a fraction of it); a single hold below the threshold never is.
 */
export function judgedEventLoopDelay(sampledMs: number, heldMs: () => number): number {
  return Math.max(Number.isFinite(sampledMs) ? sampledMs : 0, heldMs());
}

/**
 * Registers the measures and the hook that sheds. Call it before the auth hook: a shed call then costs no
 * token lookup, the cheapest answer the server can give while it is behind.
 */
export function registerLoadShedding(
  app: App,
  config: SheddingConfig,
  commitsFallBehind: (maxWaitMs: number) => { behind: boolean; oldestWaitMs: number },
): void {
  const { eventLoopDelayMs, commitWaitMs: maxCommitWaitMs } = config;
  if (eventLoopDelayMs === 0 && maxCommitWaitMs === 0) return;
  let hold = () => 0;
  if (eventLoopDelayMs > 0) {
    // The plugin only measures: its own hook lets every call through, and the hook below decides.
    app.register(underPressure, {
      sampleInterval: SAMPLE_INTERVAL_MS,
      maxEventLoopDelay: eventLoopDelayMs,
      pressureHandler: () => undefined,
    });
    hold = recentHold(app);
  }

  app.addHook('onRequest', (request, _reply, done) => {
    if (request.routeOptions.config.auth !== 'order-entry') return done();
    if (maxCommitWaitMs > 0) {
      const commits = commitsFallBehind(maxCommitWaitMs);
      if (commits.behind)
        return done(overloaded(`its database commits are ${Math.round(commits.oldestWaitMs)} ms behind`));
    }
    if (eventLoopDelayMs > 0) {
      const delay = judgedEventLoopDelay(app.memoryUsage().eventLoopDelay, hold);
      if (delay > eventLoopDelayMs) return done(overloaded(`its event loop is ${Math.round(delay)} ms behind`));
    }
    done();
  });
}
