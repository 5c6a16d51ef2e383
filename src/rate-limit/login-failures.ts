/**
 * What the login limits remember of each (user id, client address) pair (docs/design/rate-limits.md,
 * "Login attempts"): its failed logins since its last success, for the back-off, and whether the user
 * logged in from that address lately, which exempts the address from the per-user-id failure limit. In this
 * node's memory, or with REDIS_URL in Redis, shared by every node; while Redis cannot be reached each node
 * remembers alone, as the call logs do.
 */
import type { Redis } from 'ioredis';
import type { PairFailures } from '../domain/access/login-backoff.js';
import type { RedisLink } from './redis-link.js';

/** A pair's failures are forgotten this long after its last one (well beyond any back-off). */
export const FAILURE_MEMORY_MS = 24 * 60 * 60 * 1000;
/** An address the user logged in from successfully stays known this long after that login. */
export const KNOWN_ADDRESS_MS = 30 * 24 * 60 * 60 * 1000;

const SWEEP_INTERVAL_MS = 60_000;

/** A pair as an attempt sees it: its failures, whether its address is known, and the store's clock now. */
export interface PairState extends PairFailures {
  knownAddress: boolean;
  now: number;
}

export interface LoginFailureStore {
  state(userId: string, address: string): Promise<PairState>;
  /** Counts one more failure of the pair; answers its failures, the new one included. */
  recordFailure(userId: string, address: string): Promise<PairFailures>;
  /** Clears the pair's failures and marks its address as known for the user. */
  recordSuccess(userId: string, address: string): Promise<void>;
}

/** user ids may hold any character; encoded, `:` only separates. */
const pairKey = (userId: string, address: string) => `${encodeURIComponent(userId)}:${address}`;

/** Every pair of this node, on a monotonic clock. */
export class MemoryLoginFailures implements LoginFailureStore {
  private readonly failures = new Map<string, PairFailures>();
  private readonly knownUntil = new Map<string, number>();
  private sweptAt = 0;

  constructor(private readonly now: () => number = () => performance.now()) {}

  async state(userId: string, address: string): Promise<PairState> {
    const now = this.now();
    this.sweep(now);
    const key = pairKey(userId, address);
    const pair = this.failures.get(key) ?? { failures: 0, lastFailureAt: 0 };
    return { ...pair, knownAddress: (this.knownUntil.get(key) ?? -Infinity) > now, now };
  }

  async recordFailure(userId: string, address: string): Promise<PairFailures> {
    const key = pairKey(userId, address);
    const now = this.now();
    const pair = { failures: (this.failures.get(key)?.failures ?? 0) + 1, lastFailureAt: now };
    this.failures.set(key, pair);
    return pair;
  }

  async recordSuccess(userId: string, address: string): Promise<void> {
    const key = pairKey(userId, address);
    this.failures.delete(key);
    this.knownUntil.set(key, this.now() + KNOWN_ADDRESS_MS);
  }

  private sweep(now: number): void {
    if (now - this.sweptAt < SWEEP_INTERVAL_MS) return;
    this.sweptAt = now;
    for (const [key, pair] of this.failures)
      if (pair.lastFailureAt <= now - FAILURE_MEMORY_MS) this.failures.delete(key);
    for (const [key, until] of this.knownUntil) if (until <= now) this.knownUntil.delete(key);
  }
}

/** Redis's clock in ms, so that the nodes' clocks do not matter. */
const REDIS_NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;

/** KEYS: failures hash, known-address key. Answers failures, last failure, known (0/1), now. */
const STATE_LUA = `${REDIS_NOW}
local pair = redis.call('HMGET', KEYS[1], 'failures', 'last')
return { tonumber(pair[1]) or 0, tonumber(pair[2]) or 0, redis.call('EXISTS', KEYS[2]), now }`;

/** KEYS: failures hash; ARGV: how long it is kept (ms). Answers failures, last failure. */
const FAILURE_LUA = `${REDIS_NOW}
local failures = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('HSET', KEYS[1], 'last', now)
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return { failures, now }`;

type RedisWithScripts = Redis & {
  loginPairState(pairKey: string, knownKey: string): Promise<[number, number, number, number]>;
  loginPairFailure(pairKey: string, keepMs: number): Promise<[number, number]>;
};

/** The pairs of every node in Redis (through the link, which falls back to this node's memory). */
export class SharedLoginFailures implements LoginFailureStore {
  private readonly redis: RedisWithScripts;
  private readonly fallback = new MemoryLoginFailures();

  constructor(
    private readonly link: RedisLink,
    private readonly keyPrefix: string,
  ) {
    link.redis.defineCommand('loginPairState', { numberOfKeys: 2, lua: STATE_LUA });
    link.redis.defineCommand('loginPairFailure', { numberOfKeys: 1, lua: FAILURE_LUA });
    this.redis = link.redis as RedisWithScripts;
  }

  state(userId: string, address: string): Promise<PairState> {
    return this.link.run(
      async () => {
        const [failures, lastFailureAt, known, now] = await this.redis.loginPairState(
          this.failuresKey(userId, address),
          this.knownKey(userId, address),
        );
        return { failures, lastFailureAt, knownAddress: known === 1, now };
      },
      () => this.fallback.state(userId, address),
    );
  }

  recordFailure(userId: string, address: string): Promise<PairFailures> {
    return this.link.run(
      async () => {
        const [failures, lastFailureAt] = await this.redis.loginPairFailure(
          this.failuresKey(userId, address),
          FAILURE_MEMORY_MS,
        );
        return { failures, lastFailureAt };
      },
      () => this.fallback.recordFailure(userId, address),
    );
  }

  recordSuccess(userId: string, address: string): Promise<void> {
    return this.link.run(
      async () => {
        await this.redis
          .multi()
          .del(this.failuresKey(userId, address))
          .set(this.knownKey(userId, address), '1', 'PX', KNOWN_ADDRESS_MS)
          .exec();
      },
      () => this.fallback.recordSuccess(userId, address),
    );
  }

  private failuresKey(userId: string, address: string): string {
    return `${this.keyPrefix}login-failures:${pairKey(userId, address)}`;
  }

  private knownKey(userId: string, address: string): string {
    return `${this.keyPrefix}login-known:${pairKey(userId, address)}`;
  }
}
