/**
 * Call limits (docs/design/rate-limits.md): order-entry calls per user per second, login attempts per
 * user id and per client address per minute. @fastify/rate-limit computes the keys, limits and headers;
 * its own stores count in fixed windows (twice the limit can pass across a window edge), so the counts
 * live in a sliding-log store (src/rate-limit/call-logs.ts): in memory, or with REDIS_URL in Redis, shared
 * by every node.
 */
import fastifyRateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../config.js';
import { ApiError, Errors } from '../domain/errors.js';
import { MemoryCallLog, SharedCallLog, type Admit } from '../rate-limit/call-logs.js';
import type { App } from './app-type.js';
import { SESSION_PATH } from './session.js';

export interface RateLimitOptions extends RateLimitConfig {
  /** Prefix of every Redis key (tests give each server its own). */
  redisKeyPrefix?: string;
}

export const RATE_LIMITS_OFF: RateLimitOptions = { ordersPerSecond: 0, loginsPerMinutePerUser: 0, loginsPerMinutePerAddress: 0, redisUrl: null };

const SECOND = 1000;
const MINUTE = 60 * SECOND;

/** The store @fastify/rate-limit calls; every limiter shares it (their keys carry their name). */
function slidingWindowStore(admit: Admit): FastifyRateLimitStoreCtor {
  class SlidingWindowStore {
    incr(key: string, callback: (error: Error | null, result?: { current: number; ttl: number }) => void, timeWindow: number, max: number): void {
      admit(key, timeWindow, max).then(
        // The plugin refuses a call whose `current` exceeds max; a refused call is not logged.
        (decision) => callback(null, { current: decision.accepted ? decision.count : max + 1, ttl: decision.resetMs }),
        (error: Error) => callback(error),
      );
    }
    child(): SlidingWindowStore {
      return this;
    }
  }
  return SlidingWindowStore as unknown as FastifyRateLimitStoreCtor;
}

type Check = ReturnType<App['createRateLimit']>;

/** Runs one limiter: sets the x-ratelimit-* headers and, over the limit, throws the 429 with Retry-After. */
async function enforce(check: Check, request: FastifyRequest, reply: FastifyReply, refusal: (max: number) => string, headers: 'always' | 'refused'): Promise<void> {
  const result = await check(request);
  if (result.isAllowed) return;
  const seconds = Math.max(1, result.ttlInSeconds);
  if (headers === 'always' || result.isExceeded) {
    reply.header('x-ratelimit-limit', result.max);
    reply.header('x-ratelimit-remaining', result.isExceeded ? 0 : result.remaining);
    reply.header('x-ratelimit-reset', seconds);
  }
  if (result.isExceeded) {
    throw new ApiError(Errors.RATE_LIMITED, `${refusal(result.max)}; retry after ${seconds} s`, [], { 'Retry-After': String(seconds) });
  }
}

const isLimited = (max: number) => max > 0;

const inMemory = (log: MemoryCallLog): Admit => async (key, windowMs, max) => log.admit(key, windowMs, max);

/**
 * Registers the limiters that are on. Order entry is counted in an onRequest hook added right after the
 * auth hook (so per authenticated user, before the body is read and before any later hook such as the
 * Idempotency-Key replay); login attempts in preValidation, where the body's user_id is known.
 */
export function registerRateLimits(app: App, options: RateLimitOptions): void {
  const { ordersPerSecond, loginsPerMinutePerUser, loginsPerMinutePerAddress } = options;
  if (![ordersPerSecond, loginsPerMinutePerUser, loginsPerMinutePerAddress].some(isLimited)) return;

  const shared = options.redisUrl === null ? undefined : new SharedCallLog(options.redisUrl, options.redisKeyPrefix ?? 'ordergate:rate:', app.log);
  const admit: Admit = shared?.admit ?? inMemory(new MemoryCallLog());
  // The plugin's decorators only: the hooks below decide which calls each limiter sees.
  app.register(fastifyRateLimit, { global: false, store: slidingWindowStore(admit) });

  let orders: Check | undefined;
  let loginsByUser: Check | undefined;
  let loginsByAddress: Check | undefined;
  app.addHook('onReady', async () => {
    await shared?.connect();
    if (isLimited(ordersPerSecond)) {
      orders = app.createRateLimit({ max: ordersPerSecond, timeWindow: SECOND, keyGenerator: (request) => `orders:${request.caller!.userId}` });
    }
    if (isLimited(loginsPerMinutePerUser)) {
      loginsByUser = app.createRateLimit({ max: loginsPerMinutePerUser, timeWindow: MINUTE, keyGenerator: (request) => `login-user:${loginUserId(request)}` });
    }
    if (isLimited(loginsPerMinutePerAddress)) {
      loginsByAddress = app.createRateLimit({ max: loginsPerMinutePerAddress, timeWindow: MINUTE, keyGenerator: (request) => `login-address:${request.ip}` });
    }
  });
  app.addHook('onClose', async () => {
    await shared?.close();
  });

  if (isLimited(ordersPerSecond)) {
    app.addHook('onRequest', async (request, reply) => {
      // A call refused by auth has thrown before this hook: only authenticated callers are counted.
      if (orders === undefined || request.routeOptions.config.auth !== 'order-entry' || request.caller === null) return;
      await enforce(orders, request, reply, (max) => `Too many order-entry calls: at most ${max} a second per user`, 'always');
    });
  }
  if (isLimited(loginsPerMinutePerUser) || isLimited(loginsPerMinutePerAddress)) {
    app.addHook('preValidation', async (request, reply) => {
      if (request.method !== 'POST' || request.routeOptions.url !== SESSION_PATH) return;
      if (loginsByAddress) await enforce(loginsByAddress, request, reply, (max) => `Too many login attempts from this address: at most ${max} a minute`, 'refused');
      // A body without a plausible user_id fails validation next; the address limit has counted it.
      if (loginsByUser && loginUserId(request) !== undefined) {
        await enforce(loginsByUser, request, reply, (max) => `Too many login attempts for this user_id: at most ${max} a minute`, 'refused');
      }
    });
  }
}

/** The user_id of a login body, when it is one the schema accepts (a string of 1 to 64 characters). */
function loginUserId(request: FastifyRequest): string | undefined {
  const body = request.body as { user_id?: unknown } | null | undefined;
  const userId = typeof body === 'object' && body !== null ? body.user_id : undefined;
  return typeof userId === 'string' && userId.length >= 1 && userId.length <= 64 ? userId : undefined;
}
