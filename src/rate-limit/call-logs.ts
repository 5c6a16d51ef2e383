/**
 * The call logs behind the rate limits (docs/design/rate-limits.md): each key's recent calls in a sliding
 * log, in this node's memory or, shared by every node, in Redis. They know nothing of HTTP; the hooks in
 * src/http/rate-limit.ts decide which calls each limiter counts.
 */
import { once } from 'node:events';
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { BaseLogger } from 'pino';
import { admitCall, type SlidingWindowDecision } from '../domain/sliding-window.js';

const SWEEP_INTERVAL_MS = 1000;
/** A Redis that does not answer within this delays a call by no more (the node then counts alone). */
const REDIS_COMMAND_TIMEOUT_MS = 500;
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

/** Logs one call of a key and decides it: accepted while fewer than `max` calls fall in the window. */
export type Admit = (key: string, windowMs: number, max: number) => Promise<SlidingWindowDecision>;

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
    if (now - this.sweptAt < SWEEP_INTERVAL_MS) return;
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
    private readonly log: Pick<BaseLogger, 'warn' | 'info'>,
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

  /** Whether the counts are shared right now (false while Redis cannot be reached). */
  get sharing(): boolean {
    return !this.degraded && this.redis.status === 'ready';
  }

  /** Waits (a bounded time) for the first connection; serving starts either way. */
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
