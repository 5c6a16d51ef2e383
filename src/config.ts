/** Environment -> typed settings. Every setting the service reads is here, documented in the README. */
export interface Config {
  host: string;
  port: number;
  databaseUrl: string;
  logLevel: string;
  /** How long a client may take to send a whole request (headers and body), in milliseconds. */
  requestTimeoutMs: number;
  /**
   * The base URL clients reach the server at (behind TLS or a proxy), named in the login answer as the live
   * order socket; null: the login request's own protocol and Host.
   */
  publicUrl: string | null;
  /** How long an access token lives, in seconds. */
  tokenTtlSeconds: number;
  /** Whether `serve` runs the OMS worker in its own process (false when `ordergate oms` runs it). */
  omsEmbedded: boolean;
  /** The pause between two passes of the OMS worker, in milliseconds. */
  omsPollMs: number;
  /** How long one webhook POST may take, in milliseconds. */
  webhookTimeoutMs: number;
  /** How long a webhook delivery is retried after its event, in seconds. */
  webhookRetryForSeconds: number;
  rateLimits: RateLimitConfig;
}

/** Per-user and per-address call limits (docs/design/rate-limits.md); 0 turns a limit off. */
export interface RateLimitConfig {
  /** Order-entry calls accepted per user in any one second. */
  ordersPerSecond: number;
  /** Login attempts accepted per user id in any one minute. */
  loginsPerMinutePerUser: number;
  /** Login attempts accepted per client address in any one minute. */
  loginsPerMinutePerAddress: number;
  /** Where the counts are kept so that every node shares them; null: each node counts in its memory. */
  redisUrl: string | null;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const DEFAULT_DATABASE_URL = 'sqlite:./data/ordergate.db';

/** Our bodies are at most 64 KiB: 30 s is ample for a real client and short for one that trickles bytes. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

function wholeNumber(env: NodeJS.ProcessEnv, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(`${name} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${value}`);
  return value;
}

function flag(env: NodeJS.ProcessEnv, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
}

function publicUrl(env: NodeJS.ProcessEnv): string | null {
  const raw = env.PUBLIC_URL;
  if (raw === undefined || raw === '') return null;
  const url = URL.canParse(raw) ? new URL(raw) : null;
  if (url === null || !['http:', 'https:'].includes(url.protocol) || url.pathname !== '/' || url.search !== '' || url.hash !== '') {
    throw new ConfigError(`PUBLIC_URL must be an http:// or https:// URL without a path, e.g. https://api.example.com, got "${raw}"`);
  }
  return url.origin;
}

function redisUrl(env: NodeJS.ProcessEnv): string | null {
  const raw = env.REDIS_URL;
  if (raw === undefined || raw === '') return null;
  if (!/^rediss?:\/\/./.test(raw) || !URL.canParse(raw)) throw new ConfigError(`REDIS_URL must be a redis:// or rediss:// URL, got "${raw.split(':')[0]}:..."`);
  return raw;
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const logLevel = env.LOG_LEVEL || 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  return {
    host: env.HOST || '127.0.0.1',
    port: wholeNumber(env, 'PORT', 8080, 0, 65535),
    databaseUrl: env.DATABASE_URL || DEFAULT_DATABASE_URL,
    logLevel,
    requestTimeoutMs: wholeNumber(env, 'REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 100, 600_000),
    publicUrl: publicUrl(env),
    tokenTtlSeconds: wholeNumber(env, 'TOKEN_TTL_SECONDS', 24 * 60 * 60, 1, 365 * 24 * 60 * 60),
    omsEmbedded: flag(env, 'OMS_EMBEDDED', true),
    omsPollMs: wholeNumber(env, 'OMS_POLL_MS', 200, 10, 60_000),
    webhookTimeoutMs: wholeNumber(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    webhookRetryForSeconds: wholeNumber(env, 'WEBHOOK_RETRY_FOR_SECONDS', 24 * 60 * 60, 60, 30 * 24 * 60 * 60),
    rateLimits: {
      ordersPerSecond: wholeNumber(env, 'RATE_LIMIT_ORDERS_PER_SECOND', 10, 0, 1_000_000),
      loginsPerMinutePerUser: wholeNumber(env, 'RATE_LIMIT_LOGINS_PER_MINUTE', 10, 0, 1_000_000),
      loginsPerMinutePerAddress: wholeNumber(env, 'RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS', 100, 0, 1_000_000),
      redisUrl: redisUrl(env),
    },
  };
}
