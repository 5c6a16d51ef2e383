/**
 * Login-attempt limits (docs/design/rate-limits.md, "Login attempts"), on POST
 * /authentication/v1/user/session:
 *
 * - per client address, every attempt: at most RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS a minute;
 * - per (user id, address) pair, failures: after RATE_LIMIT_LOGIN_BACKOFF_AFTER of them each further attempt
 *   waits, the wait doubling per failure up to RATE_LIMIT_LOGIN_BACKOFF_MAX_SECONDS; a success clears the pair;
 *   a login that carries an active API key of the user passes the wait (the real user is never locked out
 *   of an address by someone else's failures there);
 * - per user id, failures from all addresses: at most RATE_LIMIT_LOGINS_PER_MINUTE a minute, except from an
 *   address the user logged in from lately, or for a login that carries an active API key of the user, so
 *   that a flood of bad logins cannot keep the user out (a user on a new network still gets in with the
 *   key their client sends). The limit holds under concurrency: an attempt it counts takes its slot before
 *   the password is checked (a success keeps it: one slot per address the user logs in from afresh), so
 *   that attempts arriving together cannot all be checked.
 *
 * The address limit counts in the call logs' sliding log (src/http/plugins/rate-limit.ts registers the store); the
 * per-user-id failures too; the pairs live in src/rate-limit/login-failures.ts. The outcome of a login is
 * read from its answer's status in an onSend hook, before the answer leaves, so that the next attempt of
 * the same client already sees it.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, Errors } from '../../domain/errors.js';
import { backoffRemainingMs } from '../../domain/access/login-backoff.js';
import { MemoryLoginFailures, SharedLoginFailures, type LoginFailureStore } from '../../rate-limit/login-failures.js';
import type { App } from '../app-type.js';
import { enforce, isLimited, redisKeyPrefix, type CallLogs, type Check, type RateLimitOptions } from './rate-limit.js';
import { SESSION_PATH } from '../routes/session.js';

const MINUTE = 60_000;

const isLogin = (request: FastifyRequest) => request.method === 'POST' && request.routeOptions.url === SESSION_PATH;

/** A login the credentials refused (401, 403): a failure. 200 is a success; anything else (400, 429, 503) neither. */
const isFailure = (status: number) => status === 401 || status === 403;

const wholeSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

/** The 429 of a failure limit, with the headers @fastify/rate-limit sends (docs/design/rate-limits.md). */
function rateLimited(reply: FastifyReply, limit: number, message: string, retryAfterMs: number): ApiError {
  const seconds = wholeSeconds(retryAfterMs);
  reply.header('x-ratelimit-limit', limit);
  reply.header('x-ratelimit-remaining', 0);
  reply.header('x-ratelimit-reset', seconds);
  return new ApiError(Errors.RATE_LIMITED, `${message}; retry after ${seconds} s`, [], {
    'Retry-After': String(seconds),
  });
}

/**
 * Registers the login limiters that are on, after registerRateLimits; `callLogs` is what it answered (null
 * when every limit is off): the call log, and the Redis link the pairs share too.
 */
export function registerLoginLimits(
  app: App,
  options: RateLimitOptions,
  callLogs: CallLogs | null,
  holdsApiKey: (userId: string, apiKey: string, from: string) => Promise<boolean> = async () => false,
): void {
  const { loginsPerMinutePerUser, loginsPerMinutePerAddress, loginBackoffAfterFailures } = options;
  const backoffMaxMs = options.loginBackoffMaxSeconds * 1000;
  if (
    callLogs === null ||
    ![loginsPerMinutePerUser, loginsPerMinutePerAddress, loginBackoffAfterFailures].some(isLimited)
  )
    return;
  const { admit, link } = callLogs;

  // The pairs are needed by the back-off, and by the per-user-id limit for the addresses it exempts.
  const usesPairs = isLimited(loginBackoffAfterFailures) || isLimited(loginsPerMinutePerUser);
  const pairs: LoginFailureStore | undefined = usesPairs
    ? link === null
      ? new MemoryLoginFailures()
      : new SharedLoginFailures(link, redisKeyPrefix(options))
    : undefined;
  const userFailuresKey = (userId: string) => `login-user-failures:${userId}`;
  /** The logins that took their slot of the per-user-id log before their password was checked. */
  const countedAttempts = new WeakSet<FastifyRequest>();

  let loginsByAddress: Check | undefined;
  app.addHook('onReady', async () => {
    if (isLimited(loginsPerMinutePerAddress)) {
      loginsByAddress = app.createRateLimit({
        max: loginsPerMinutePerAddress,
        timeWindow: MINUTE,
        keyGenerator: (request) => `login-address:${request.ip}`,
      });
    }
  });

  app.addHook('preValidation', async (request, reply) => {
    if (!isLogin(request)) return;
    if (loginsByAddress)
      await enforce(
        loginsByAddress,
        request,
        reply,
        (max) => `Too many login attempts from this address: at most ${max} a minute`,
        'refused',
      );
    // A body without a plausible user_id fails validation next; the address limit has counted it.
    const userId = loginUserId(request);
    if (userId === undefined || pairs === undefined) return;
    const pair = await pairs.state(userId, request.ip);
    /** Whether the login carries an active API key of the user: read once, and only when a limit would refuse. */
    let keyHolder: Promise<boolean> | undefined;
    const holdsKey = () => (keyHolder ??= holdsApiKey(userId, loginApiKey(request), request.ip));
    const waitMs = backoffRemainingMs(pair, pair.now, loginBackoffAfterFailures, backoffMaxMs);
    if (waitMs > 0 && !(await holdsKey())) {
      throw rateLimited(
        reply,
        loginBackoffAfterFailures,
        `Too many failed login attempts for this user_id from this address (${pair.failures} in a row)`,
        waitMs,
      );
    }
    if (isLimited(loginsPerMinutePerUser) && !pair.knownAddress) {
      // The slot is taken now, before the password is checked: attempts arriving together are counted one
      // by one, and at most the limit of them is checked. A refused attempt takes none.
      const slot = await admit(userFailuresKey(userId), MINUTE, loginsPerMinutePerUser);
      if (slot.accepted) {
        countedAttempts.add(request);
      } else if (!(await holdsKey())) {
        const message = `Too many failed login attempts for this user_id: at most ${loginsPerMinutePerUser} a minute, except from an address it logged in from lately`;
        throw rateLimited(reply, loginsPerMinutePerUser, message, slot.resetMs);
      }
    }
  });

  if (pairs === undefined) return;
  app.addHook('onSend', async (request, reply, payload) => {
    if (!isLogin(request)) return payload;
    const userId = loginUserId(request);
    if (userId === undefined) return payload;
    if (reply.statusCode === 200) {
      await pairs.recordSuccess(userId, request.ip);
    } else if (isFailure(reply.statusCode)) {
      await pairs.recordFailure(userId, request.ip);
      // A failure the limit exempted (a known address, an API key) still counts against the others.
      if (isLimited(loginsPerMinutePerUser) && !countedAttempts.has(request))
        await admit(userFailuresKey(userId), MINUTE, loginsPerMinutePerUser);
    }
    return payload;
  });
}

/** The api_key of a login body, '' when it has none. */
function loginApiKey(request: FastifyRequest): string {
  const body = request.body as { api_key?: unknown } | null | undefined;
  const key = typeof body === 'object' && body !== null ? body.api_key : undefined;
  return typeof key === 'string' && key.length <= 256 ? key : '';
}

/** The user_id of a login body, when it is one the schema accepts (a string of 1 to 64 characters). */
export function loginUserId(request: FastifyRequest): string | undefined {
  const body = request.body as { user_id?: unknown } | null | undefined;
  const userId = typeof body === 'object' && body !== null ? body.user_id : undefined;
  return typeof userId === 'string' && userId.length >= 1 && userId.length <= 64 ? userId : undefined;
}
