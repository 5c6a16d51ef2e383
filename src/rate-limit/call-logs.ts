/**
 * The call logs behind the rate limits (docs/design/rate-limits.md): each key's recent calls in a sliding
 * log, in this node's memory or, shared by every node, in Redis. They know nothing of HTTP; the hooks in
 * src/http/plugins/rate-limit.ts decide which calls each limiter counts.
 */
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import type { Redis } from 'ioredis';
import { admitCall, type SlidingWindowDecision } from '../domain/access/sliding-window.js';
import type { RedisLink } from './redis-link.js';

const SWEEP_INTERVAL_MS = 1000;

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

/**
 * Logs one call of `key` as soon as its log admits it: asks, and while refused sleeps until the oldest
 * call in the window leaves it (`resetMs`), then asks again. A refusal is not logged, so waiting costs
 * the key nothing; a call admitted meanwhile by another request (or node) only makes the wait longer.
 */
export async function admitWhenFree(
  admit: Admit,
  key: string,
  windowMs: number,
  max: number,
  sleep: (ms: number) => Promise<unknown> = delay,
): Promise<void> {
  for (;;) {
    const decision = await admit(key, windowMs, max);
    if (decision.accepted) return;
    await sleep(Math.max(1, Math.ceil(decision.resetMs)));
  }
}

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

/** A call log in this node's memory, as an Admit. */
export function memoryAdmit(log: MemoryCallLog = new MemoryCallLog()): Admit {
  return async (key, windowMs, max) => log.admit(key, windowMs, max);
}

/** The counts shared by all nodes in Redis (through the link, which falls back to this node's memory). */
export class SharedCallLog {
  private readonly redis: Redis & {
    slidingLog(key: string, windowMs: number, max: number, member: string): Promise<[number, number, number]>;
  };
  private readonly fallback = new MemoryCallLog();

  constructor(
    private readonly link: RedisLink,
    private readonly keyPrefix: string,
  ) {
    link.redis.defineCommand('slidingLog', { numberOfKeys: 1, lua: SLIDING_LOG_LUA });
    this.redis = link.redis as typeof this.redis;
  }

  readonly admit: Admit = (key, windowMs, max) =>
    this.link.run(
      async () => {
        const [accepted, count, resetMicros] = await this.redis.slidingLog(
          this.keyPrefix + key,
          windowMs,
          max,
          randomUUID(),
        );
        return { accepted: accepted === 1, count, resetMs: resetMicros / 1000 };
      },
      () => this.fallback.admit(key, windowMs, max),
    );
}
