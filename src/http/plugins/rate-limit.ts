/**
 * Call limits (docs/design/rate-limits.md): order-entry calls per user per second, login attempts per
 * user id and per client address per minute. @fastify/rate-limit computes the keys, limits and headers;
 * its own stores count in fixed windows (twice the limit can pass across a window edge), so the counts
 * live in a sliding-log store (src/rate-limit/call-logs.ts): in memory, or with REDIS_URL in Redis, shared
 * by every node. A cart execution places its orders at the same per-user rate: besides the call's own
 * slot, each order it places takes a slot of the same log, waiting for one when the user's last second is
 * full (`request.orderSlots`).
 */
import fastifyRateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RateLimitConfig } from '../../config.js';
import { ApiError, Errors } from '../../domain/errors.js';
import { admitWhenFree, memoryAdmit, SharedCallLog, type Admit } from '../../rate-limit/call-logs.js';
import { RedisLink } from '../../rate-limit/redis-link.js';
import type { OrderSlots } from '../../services/order-carts.js';
import type { App } from '../app-type.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The order-entry slots of an order-entry call while the order limit is on; null otherwise. */
    orderSlots: OrderSlots | null;
  }
}

export interface RateLimitOptions extends RateLimitConfig {
  /** Prefix of every Redis key (tests give each server its own). */
  redisKeyPrefix?: string;
}

/** The call log every limiter counts in, and the Redis link behind it when the counts are shared. */
export interface CallLogs {
  admit: Admit;
  link: RedisLink | null;
}

/** Where every Redis key of the limits starts. */
export const redisKeyPrefix = (options: RateLimitOptions) => options.redisKeyPrefix ?? 'ordergate:rate:';

export const RATE_LIMITS_OFF: RateLimitOptions = {
  ordersPerSecond: 0,
  cartWritesPerSecond: 0,
  loginsPerMinutePerUser: 0,
  loginsPerMinutePerAddress: 0,
  loginBackoffAfterFailures: 0,
  loginBackoffMaxSeconds: 900,
  redisUrl: null,
};

const SECOND = 1000;

/** The key of a user's order-entry log: single order-entry calls and a cart's orders share it. */
const orderEntryKey = (userId: string) => `orders:${userId}`;
/** The key of a user's log of cart writes (create, update, delete). */
const cartWritesKey = (userId: string) => `carts:${userId}`;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A route counted by a per-user limit other than order entry's (which `auth: 'order-entry'` names). */
    rateLimited?: 'cart-writes';
  }
}

/**
 * The orders one order-entry call may place at the user's order rate: each waits until the user's log
 * admits one more, and is counted in it, competing with the user's other calls on every node. The call's
 * own slot, counted by the hook, is not one of them: it was taken before the call read anything (the cart,
 * the registry), so an order placed on it could arrive well after its instant in the log.
 */
function orderSlotsOfUser(admit: Admit, userId: string, max: number): OrderSlots {
  return { take: () => admitWhenFree(admit, orderEntryKey(userId), SECOND, max) };
}

/** The store @fastify/rate-limit calls; every limiter shares it (their keys carry their name). */
function slidingWindowStore(admit: Admit): FastifyRateLimitStoreCtor {
  class SlidingWindowStore {
    incr(
      key: string,
      callback: (error: Error | null, result?: { current: number; ttl: number }) => void,
      timeWindow: number,
      max: number,
    ): void {
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

export type Check = ReturnType<App['createRateLimit']>;

/** Runs one limiter: sets the x-ratelimit-* headers and, over the limit, throws the 429 with Retry-After. */
export async function enforce(
  check: Check,
  request: FastifyRequest,
  reply: FastifyReply,
  refusal: (max: number) => string,
  headers: 'always' | 'refused',
): Promise<void> {
  const result = await check(request);
  if (result.isAllowed) return;
  const seconds = Math.max(1, result.ttlInSeconds);
  if (headers === 'always' || result.isExceeded) {
    reply.header('x-ratelimit-limit', result.max);
    reply.header('x-ratelimit-remaining', result.isExceeded ? 0 : result.remaining);
    reply.header('x-ratelimit-reset', seconds);
  }
  if (result.isExceeded) {
    throw new ApiError(Errors.RATE_LIMITED, `${refusal(result.max)}; retry after ${seconds} s`, [], {
      'Retry-After': String(seconds),
    });
  }
}

export const isLimited = (max: number) => max > 0;

/**
 * Registers the limiters that are on. Order entry is counted in an onRequest hook added right after the
 * auth hook (so per authenticated user, before the body is read and before any later hook such as the
 * Idempotency-Key replay). Answers the call log the login limits (src/http/plugins/login-limits.ts) count in and
 * the Redis link they share (null without REDIS_URL), or null when nothing counts. With REDIS_URL and
 * `countsThreshold`, the log is opened even with every limit off: SEBI's threshold (services/algo-gate.ts)
 * counts every node's orders in it.
 */
export function registerRateLimits(app: App, options: RateLimitOptions, countsThreshold = false): CallLogs | null {
  const {
    ordersPerSecond,
    cartWritesPerSecond,
    loginsPerMinutePerUser,
    loginsPerMinutePerAddress,
    loginBackoffAfterFailures,
  } = options;
  // Decorated with every limit off too: a route reads null, and places its orders without waiting.
  app.decorateRequest('orderSlots', null);
  const sharesThreshold = countsThreshold && options.redisUrl !== null;
  if (
    !sharesThreshold &&
    ![
      ordersPerSecond,
      cartWritesPerSecond,
      loginsPerMinutePerUser,
      loginsPerMinutePerAddress,
      loginBackoffAfterFailures,
    ].some(isLimited)
  ) {
    return null;
  }

  const link = options.redisUrl === null ? null : new RedisLink(options.redisUrl, app.log);
  const admit: Admit = link === null ? memoryAdmit() : new SharedCallLog(link, redisKeyPrefix(options)).admit;
  // The plugin's decorators only: the hooks below decide which calls each limiter sees.
  app.register(fastifyRateLimit, { global: false, store: slidingWindowStore(admit) });

  let orders: Check | undefined;
  let cartWrites: Check | undefined;
  app.addHook('onReady', async () => {
    await link?.connect();
    if (isLimited(ordersPerSecond)) {
      orders = app.createRateLimit({
        max: ordersPerSecond,
        timeWindow: SECOND,
        keyGenerator: (request) => orderEntryKey(request.caller!.userId),
      });
    }
    if (isLimited(cartWritesPerSecond)) {
      cartWrites = app.createRateLimit({
        max: cartWritesPerSecond,
        timeWindow: SECOND,
        keyGenerator: (request) => cartWritesKey(request.caller!.userId),
      });
    }
  });
  app.addHook('onClose', async () => {
    await link?.close();
  });

  if (isLimited(ordersPerSecond)) {
    app.addHook('onRequest', async (request, reply) => {
      // A call refused by auth has thrown before this hook: only authenticated callers are counted.
      if (orders === undefined || request.routeOptions.config.auth !== 'order-entry' || request.caller === null) return;
      await enforce(
        orders,
        request,
        reply,
        (max) => `Too many order-entry calls: at most ${max} a second per user`,
        'always',
      );
      request.orderSlots = orderSlotsOfUser(admit, request.caller.userId, ordersPerSecond);
    });
  }
  if (isLimited(cartWritesPerSecond)) {
    // Cart writes store rows (the cart, its Idempotency-Key's answer for a day): a user may not add them
    // at the speed the server answers.
    app.addHook('onRequest', async (request, reply) => {
      if (
        cartWrites === undefined ||
        request.routeOptions.config.rateLimited !== 'cart-writes' ||
        request.caller === null
      )
        return;
      await enforce(
        cartWrites,
        request,
        reply,
        (max) => `Too many cart changes: at most ${max} creates, updates and deletes a second per user`,
        'always',
      );
    });
  }
  return { admit, link };
}
