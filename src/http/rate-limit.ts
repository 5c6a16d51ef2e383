/**
 * Call limits (docs/design/rate-limits.md): order-entry calls per user per second, login attempts per
 * user id and per client address per minute. @fastify/rate-limit computes the keys, limits and headers;
 * its own stores count in fixed windows (twice the limit can pass across a window edge), so the counts
 * live in a sliding-log store here: in memory, or with REDIS_URL in Redis, shared by every node.
 */
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import fastifyRateLimit, { type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyReply, FastifyRequest } from 'fastify';
import { Redis } from 'ioredis';
import type { RateLimitConfig } from '../config.js';
import { ApiError, Errors } from '../domain/errors.js';
import { admitCall, type SlidingWindowDecision } from '../domain/sliding-window.js';
import type { App } from '../app.js';
import { SESSION_PATH } from './session.js';

export interface RateLimitOptions extends RateLimitConfig {
  /** Prefix of every Redis key (tests give each server its own). */
  redisKeyPrefix?: string;
}

export const RATE_LIMITS_OFF: RateLimitOptions = { ordersPerSecond: 0, loginsPerMinutePerUser: 0, loginsPerMinutePerAddress: 0, redisUrl: null };

const SECOND = 1000;
const MINUTE = 60 * SECOND;
/** A Redis that does not answer within this delays a call by no more (the node then counts alone). */
export const REDIS_COMMAND_TIMEOUT_MS = 500;
/** How long start-up waits for Redis before serving with per-node counts. */
const REDIS_CONNECT_WAIT_MS = 2000;

/** The sliding-log counts of one key, decided atomically inside Redis on Redis's clock (µs). */
const SLIDING_LOG_LUA = `
local window = tonumber(ARGV[1]) * 1000
local max = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
local accepted = 0
if count < max then
  redis.call('ZADD', KEYS[1], now, ARGV[3])
  count = count + 1
  accepted = 1
end
local reset = 0
local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
if oldest[2] then reset = tonumber(oldest[2]) + window - now end
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return { accepted, count, reset }
`;

type Admit = (key: string, windowMs: number, max: number) => Promise<SlidingWindowDecision>;

/** Every limiter's counts of this node, kept in memory on a monotonic clock. */
export class MemoryCallLog {
  private readonly logs = new Map<string, { windowMs: number; instants: number[] }>();
  private sweptAt = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  admit(key: string, windowMs: number, max: number): SlidingWindowDecision {
    const now = this.now();
    this.sweep(now);
    let log = this.logs.get(key);
    if (log === undefined) {
      log = { windowMs, instants: [] };
      this.logs.set(key, log);
    }
    return admitCall(log.instants, now, windowMs, max);
  }

  /** Once a second, forget the keys that have no call left in their window. */
  private sweep(now: number): void {
    if (now - this.sweptAt < SECOND) return;
    this.sweptAt = now;
    for (const [key, { windowMs, instants }] of this.logs) {
      if ((instants.at(-1) ?? -Infinity) <= now - windowMs) this.logs.delete(key);
    }
  }
}

/**
 * The counts shared by all nodes in Redis. While Redis cannot be reached (or does not answer within
 * REDIS_COMMAND_TIMEOUT_MS) each call is counted in this node's memory instead: the limit then holds per
 * node, and order entry keeps working. The change of state is logged once each way.
 */
export class SharedCallLog {
  private readonly redis: Redis & { slidingLog(key: string, windowMs: number, max: number, member: string): Promise<[number, number, number]> };
  private readonly fallback = new MemoryCallLog();
  private degraded = false;

  constructor(
    redisUrl: string,
    private readonly keyPrefix: string,
    private readonly log: FastifyBaseLogger,
  ) {
    const redis = new Redis(redisUrl, {
      // Disconnected: fail at once (and count locally) rather than queue the call.
      enableOfflineQueue: false,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: REDIS_CONNECT_WAIT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    redis.defineCommand('slidingLog', { numberOfKeys: 1, lua: SLIDING_LOG_LUA });
    redis.on('error', (error: Error) => this.markDegraded(error));
    redis.on('ready', () => this.markShared());
    this.redis = redis as typeof this.redis;
  }

  /** Waits (a bounded time) for the first connection; serving starts either way. */
  /** Whether the counts are shared right now (false while Redis cannot be reached). */
  get sharing(): boolean {
    return !this.degraded && this.redis.status === 'ready';
  }

  async connect(): Promise<void> {
    if (this.redis.status === 'ready') return;
    try {
      await once(this.redis, 'ready', { signal: AbortSignal.timeout(REDIS_CONNECT_WAIT_MS) });
    } catch (error) {
      this.markDegraded(error instanceof Error ? error : new Error(String(error)));
    }
  }

  readonly admit: Admit = async (key, windowMs, max) => {
    try {
      const [accepted, count, resetMicros] = await this.redis.slidingLog(this.keyPrefix + key, windowMs, max, randomUUID());
      this.markShared();
      return { accepted: accepted === 1, count, resetMs: resetMicros / 1000 };
    } catch (error) {
      this.markDegraded(error instanceof Error ? error : new Error(String(error)));
      return this.fallback.admit(key, windowMs, max);
    }
  };

  async close(): Promise<void> {
    // quit() waits for Redis; a Redis that is gone gets disconnect().
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  private markDegraded(error: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log.warn({ err: error }, 'Redis (REDIS_URL) cannot be reached: rate limits are counted per node until it is back');
  }

  private markShared(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.log.info('Redis (REDIS_URL) is back: rate limits are shared by all nodes again');
  }
}

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
