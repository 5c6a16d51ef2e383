/**
 * Redis for the tests of limits shared by several nodes: TEST_REDIS_URL (default redis://127.0.0.1:6379).
 * Under CI it must be there (the tests then fail when it is not); elsewhere they are skipped, and say so.
 */
import { randomUUID } from 'node:crypto';
import { tcpReachable } from './tcp-probe.js';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** Whether the Redis tests run; when they do not, the reason is written to stderr. */
export async function withRedis(): Promise<boolean> {
  if (process.env.CI === 'true' || (await tcpReachable(new URL(TEST_REDIS_URL), 6379))) return true;
  process.stderr.write(
    `\nRedis is not reachable at ${TEST_REDIS_URL}: the tests of limits shared through Redis are SKIPPED.\n\n`,
  );
  return false;
}

/** A key prefix of its own, so that tests (and runs) never share counts. */
export const uniqueRedisPrefix = () => `ordergate-test:${randomUUID()}:`;
