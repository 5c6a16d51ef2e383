/**
 * Redis for the tests of limits shared by several nodes: TEST_REDIS_URL (default redis://127.0.0.1:6379).
 * Under CI it must be there (the tests then fail when it is not); elsewhere they are skipped, and say so.
 */
import { randomUUID } from 'node:crypto';
import { connect } from 'node:net';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

/** Whether Redis accepts connections (a TCP probe, 2 s at most). */
function redisReachable(): Promise<boolean> {
  const url = new URL(TEST_REDIS_URL);
  return new Promise((resolve) => {
    const socket = connect({ host: url.hostname, port: Number(url.port || 6379) });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(2000, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

/** Whether the Redis tests run; when they do not, the reason is written to stderr. */
export async function withRedis(): Promise<boolean> {
  if (process.env.CI === 'true' || (await redisReachable())) return true;
  process.stderr.write(`\nRedis is not reachable at ${TEST_REDIS_URL}: the tests of limits shared through Redis are SKIPPED.\n\n`);
  return false;
}

/** A key prefix of its own, so that tests (and runs) never share counts. */
export const uniqueRedisPrefix = () => `ordergate-test:${randomUUID()}:`;
