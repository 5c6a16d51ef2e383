/**
 * The one Redis connection (REDIS_URL) behind the rate limits' call logs and the login back-off: the
 * counts every node shares. While Redis cannot be reached (or does not answer within
 * REDIS_COMMAND_TIMEOUT_MS), each store counts in this node's memory instead, so that the limits then hold
 * per node and order entry and logins keep working; the change of state is logged once each way.
 */
import { once } from 'node:events';
import { Redis } from 'ioredis';
import type { BaseLogger } from 'pino';

/** A Redis that does not answer within this delays a call by no more (the node then counts alone). */
const REDIS_COMMAND_TIMEOUT_MS = 500;
/** How long start-up waits for Redis before serving with per-node counts. */
const REDIS_CONNECT_WAIT_MS = 2000;

export class RedisLink {
  readonly redis: Redis;
  private degraded = false;

  constructor(
    redisUrl: string,
    private readonly log: Pick<BaseLogger, 'warn' | 'info'>,
  ) {
    this.redis = new Redis(redisUrl, {
      // Disconnected: fail at once (and count locally) rather than queue the call.
      enableOfflineQueue: false,
      commandTimeout: REDIS_COMMAND_TIMEOUT_MS,
      connectTimeout: REDIS_CONNECT_WAIT_MS,
      maxRetriesPerRequest: 0,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2000),
    });
    this.redis.on('error', (error: Error) => this.markDegraded(error));
    this.redis.on('ready', () => this.markShared());
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

  /** Runs `inRedis`; when Redis fails it, `inMemory` (this node's own count) instead. */
  async run<T>(inRedis: () => Promise<T>, inMemory: () => T | Promise<T>): Promise<T> {
    try {
      const result = await inRedis();
      this.markShared();
      return result;
    } catch (error) {
      this.markDegraded(error instanceof Error ? error : new Error(String(error)));
      return inMemory();
    }
  }

  async close(): Promise<void> {
    // quit() waits for Redis; a Redis that is gone gets disconnect().
    if (this.redis.status === 'ready') await this.redis.quit().catch(() => this.redis.disconnect());
    else this.redis.disconnect();
  }

  private markDegraded(error: Error): void {
    if (this.degraded) return;
    this.degraded = true;
    this.log.warn(
      { err: error },
      'Redis (REDIS_URL) cannot be reached: rate limits and login failures are counted per node until it is back',
    );
  }

  private markShared(): void {
    if (!this.degraded) return;
    this.degraded = false;
    this.log.info('Redis (REDIS_URL) is back: rate limits and login failures are shared by all nodes again');
  }
}
