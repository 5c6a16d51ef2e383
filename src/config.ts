/** Environment -> typed settings. Every setting the service reads is here, documented in the README. */
import { isIP } from 'node:net';
import { PASSWORD_HASH_COSTS, type PasswordHashCost } from './auth/credentials.js';

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
  /**
   * PASSWORD_HASH_COST: the cost of new password hashes, OWASP's (`owasp`, the default) or, for test suites
   * only, a hundredth of it (`test-only-insecure`, refused when NODE_ENV=production).
   */
  passwordHashCost: PasswordHashCost;
  /** Whether `serve` runs the OMS worker in its own process (false when `ordergate oms` runs it). */
  omsEmbedded: boolean;
  /** The pause between two passes of the OMS worker, in milliseconds. */
  omsPollMs: number;
  /**
   * How long an outbox entry a worker claimed stays with it, in milliseconds: a worker that dies leaves its
   * entries to the others for this long.
   */
  omsLeaseMs: number;
  /** How long one webhook POST may take, in milliseconds. */
  webhookTimeoutMs: number;
  /** How long a webhook delivery is retried after its event, in seconds. */
  webhookRetryForSeconds: number;
  /** Whether webhook URLs may use plain http:// (else https:// only). */
  webhookAllowHttp: boolean;
  /** Whether webhook URLs may name (or resolve to) loopback, private, link-local or metadata addresses. */
  webhookAllowPrivateAddresses: boolean;
  /** WEBHOOK_ALLOW_ANY_PORT: webhooks may name any port (else 443, the scheme's default, and 1024 to 65535). */
  webhookAllowAnyPort: boolean;
  /**
   * Which proxies' X-Forwarded-For the server believes (Fastify's `trustProxy`): false (none, the TCP peer
   * is the client), true (every hop), or a comma-separated list of addresses and CIDR ranges.
   */
  trustProxy: TrustProxy;
  rateLimits: RateLimitConfig;
  limits: Limits;
  shedding: SheddingConfig;
  metrics: MetricsConfig;
}

/** The metrics listener (src/http/metrics.ts): /metrics, /health/live and /health/ready on a port of their own. */
export interface MetricsConfig {
  /** METRICS_PORT; null: no metrics listener; 0: a free port. */
  port: number | null;
  /** METRICS_HOST: the address it binds, an IP address (127.0.0.1: this machine only). */
  host: string;
  /** METRICS_TOKEN: the Bearer token a scrape must send; null: none, allowed only on a loopback address. */
  token: string | null;
}

export type TrustProxy = boolean | string;

/** Caps on what one user or one node may hold (docs/design/security.md). */
export interface Limits {
  /** Order-event streams (SSE) and live order sockets one user may hold open on one node. */
  streamsPerUser: number;
  /** Order-event streams and live order sockets one node holds open, all users together (logged in). */
  streamsPerNode: number;
  /** Live order socket connections not yet logged in that one node holds, apart from streamsPerNode. */
  pendingSocketsPerNode: number;
  /** Of those, how many one client address may hold. */
  pendingSocketsPerAddress: number;
  /** Order carts one user may keep. */
  cartsPerUser: number;
  /** Cart executions of one user that may be placing their lines at once on one node. */
  cartExecutionsPerUser: number;
  /** Whether a login must carry an active API key of the user (`api_key`), so that a password alone opens no session. */
  loginRequiresApiKey: boolean;
}

export const DEFAULT_LIMITS: Limits = {
  streamsPerUser: 10,
  streamsPerNode: 2000,
  pendingSocketsPerNode: 200,
  pendingSocketsPerAddress: 10,
  cartsPerUser: 100,
  cartExecutionsPerUser: 2,
  loginRequiresApiKey: false,
};

/** Load shedding (docs/design/security.md): past either threshold, new order-entry calls answer 503 at once. */
export interface SheddingConfig {
  /** Event-loop delay (ms) past which order entry is shed; 0: off. */
  eventLoopDelayMs: number;
  /** How long (ms) the oldest order waiting for its commit may have waited before order entry is shed; 0: off. */
  commitWaitMs: number;
}

export const DEFAULT_SHEDDING: SheddingConfig = { eventLoopDelayMs: 1000, commitWaitMs: 2000 };

/** Per-user and per-address call limits (docs/design/rate-limits.md); 0 turns a limit off. */
export interface RateLimitConfig {
  /** Order-entry calls accepted per user in any one second. */
  ordersPerSecond: number;
  /** Cart creates, updates and deletes accepted per user in any one second. */
  cartWritesPerSecond: number;
  /** Login attempts accepted per user id in any one minute. */
  loginsPerMinutePerUser: number;
  /** Login attempts accepted per client address in any one minute. */
  loginsPerMinutePerAddress: number;
  /** Failed logins of one user id from one address before each further attempt from there waits (doubling); 0: off. */
  loginBackoffAfterFailures: number;
  /** The longest such wait, in seconds. */
  loginBackoffMaxSeconds: number;
  /** Where the counts are kept so that every node shares them; null: each node counts in its memory. */
  redisUrl: string | null;
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const MAX_TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;

/** The OMS worker's outbox lease (src/oms/worker.ts). */
export const DEFAULT_OMS_LEASE_MS = 30_000;

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

function passwordHashCost(env: NodeJS.ProcessEnv): PasswordHashCost {
  const raw = env.PASSWORD_HASH_COST || 'owasp';
  if (!(PASSWORD_HASH_COSTS as readonly string[]).includes(raw)) throw new ConfigError(`PASSWORD_HASH_COST must be one of ${PASSWORD_HASH_COSTS.join(', ')}, got "${raw}"`);
  if (raw === 'test-only-insecure' && env.NODE_ENV === 'production') throw new ConfigError('PASSWORD_HASH_COST=test-only-insecure is for test suites; it is refused with NODE_ENV=production');
  return raw as PasswordHashCost;
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

/** Whether HOST binds this machine only (a loopback address or name). */
function bindsLoopbackOnly(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
}

/**
 * Why a server may not start as configured, for the live socket's URL (null: it may). Without PUBLIC_URL the
 * login answer names the socket after the request's Host header, which any client chooses: fine on a
 * developer's machine, not for a server others reach (NODE_ENV=production, or a HOST beyond loopback), where
 * a forged Host would have the answer point a client's socket elsewhere (issue 21 row 11).
 */
export function publicUrlProblem(config: Pick<Config, 'publicUrl' | 'host'>, env: NodeJS.ProcessEnv): string | null {
  if (config.publicUrl !== null) return null;
  const exposed = env.NODE_ENV === 'production' ? 'NODE_ENV=production' : bindsLoopbackOnly(config.host) ? null : `HOST=${config.host}`;
  if (exposed === null) return null;
  return (
    `PUBLIC_URL is required with ${exposed}: the login answer names the live order socket (data.others.messageSocket), ` +
    'and without it that URL would follow the Host header each client sends; set PUBLIC_URL to the address clients reach, e.g. https://api.example.com'
  );
}

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/**
 * TRUST_PROXY: unset or false, true, or a comma-separated list of addresses and CIDR ranges. No hop count:
 * it cannot tell a proxy from a client that sends enough X-Forwarded-For entries (Fastify refuses it too).
 */
function trustProxy(env: NodeJS.ProcessEnv): TrustProxy {
  // proxy-addr's (Fastify's) names: 127.0.0.0/8 and ::1; 169.254.0.0/16 and fe80::/10; the private ranges.
  const raw = (env.TRUST_PROXY ?? '').trim();
  if (raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    if (PROXY_RANGE_NAMES.includes(entry)) continue;
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address ?? '');
    const prefixOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
    if (family === 0 || !prefixOk || extra !== undefined) {
      throw new ConfigError(`TRUST_PROXY must be true, false or a comma-separated list of IP addresses, CIDR ranges and the names ${PROXY_RANGE_NAMES.join(', ')}, got "${entry}"`);
    }
  }
  return entries.join(',');
}

/**
 * METRICS_PORT, METRICS_HOST, METRICS_TOKEN. The metrics reveal the traffic of every user: reachable
 * beyond this machine they need a token, and a token or host without a port to protect is a mistake.
 */
function metricsConfig(env: NodeJS.ProcessEnv): MetricsConfig {
  const port = env.METRICS_PORT === undefined || env.METRICS_PORT === '' ? null : wholeNumber(env, 'METRICS_PORT', 0, 0, 65535);
  const host = env.METRICS_HOST || '127.0.0.1';
  if (isIP(host) === 0) throw new ConfigError(`METRICS_HOST must be an IP address, e.g. 127.0.0.1 or 0.0.0.0, got "${host}"`);
  const rawToken = env.METRICS_TOKEN;
  const token = rawToken === undefined || rawToken === '' ? null : rawToken;
  if (token !== null && !/^[\x21-\x7e]{32,512}$/.test(token)) {
    throw new ConfigError('METRICS_TOKEN must be 32 to 512 printable ASCII characters without spaces (e.g. openssl rand -hex 32)');
  }
  if (port === null && (token !== null || env.METRICS_HOST)) throw new ConfigError('METRICS_HOST and METRICS_TOKEN need METRICS_PORT: without it there is no metrics listener');
  if (port !== null && token === null && !isLoopback(host)) {
    throw new ConfigError(`METRICS_HOST ${host} is reachable beyond this machine: set METRICS_TOKEN, or bind 127.0.0.1`);
  }
  return { port, host, token };
}

function isLoopback(address: string): boolean {
  return /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);
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
    // At most a week: a token leaked unnoticed lives until it expires, and a trading session is a day.
    tokenTtlSeconds: wholeNumber(env, 'TOKEN_TTL_SECONDS', 24 * 60 * 60, 1, MAX_TOKEN_TTL_SECONDS),
    passwordHashCost: passwordHashCost(env),
    omsEmbedded: flag(env, 'OMS_EMBEDDED', true),
    omsPollMs: wholeNumber(env, 'OMS_POLL_MS', 200, 10, 60_000),
    omsLeaseMs: wholeNumber(env, 'OMS_LEASE_MS', DEFAULT_OMS_LEASE_MS, 1_000, 3_600_000),
    webhookTimeoutMs: wholeNumber(env, 'WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
    webhookRetryForSeconds: wholeNumber(env, 'WEBHOOK_RETRY_FOR_SECONDS', 24 * 60 * 60, 60, 30 * 24 * 60 * 60),
    webhookAllowHttp: flag(env, 'WEBHOOK_ALLOW_HTTP', false),
    webhookAllowPrivateAddresses: flag(env, 'WEBHOOK_ALLOW_PRIVATE_ADDRESSES', false),
    webhookAllowAnyPort: flag(env, 'WEBHOOK_ALLOW_ANY_PORT', false),
    trustProxy: trustProxy(env),
    rateLimits: {
      ordersPerSecond: wholeNumber(env, 'RATE_LIMIT_ORDERS_PER_SECOND', 10, 0, 1_000_000),
      cartWritesPerSecond: wholeNumber(env, 'RATE_LIMIT_CART_WRITES_PER_SECOND', 10, 0, 1_000_000),
      loginsPerMinutePerUser: wholeNumber(env, 'RATE_LIMIT_LOGINS_PER_MINUTE', 10, 0, 1_000_000),
      loginsPerMinutePerAddress: wholeNumber(env, 'RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS', 100, 0, 1_000_000),
      loginBackoffAfterFailures: wholeNumber(env, 'RATE_LIMIT_LOGIN_BACKOFF_AFTER', 5, 0, 1000),
      loginBackoffMaxSeconds: wholeNumber(env, 'RATE_LIMIT_LOGIN_BACKOFF_MAX_SECONDS', 900, 1, 24 * 60 * 60),
      redisUrl: redisUrl(env),
    },
    limits: {
      streamsPerUser: wholeNumber(env, 'MAX_STREAMS_PER_USER', DEFAULT_LIMITS.streamsPerUser, 1, 100_000),
      streamsPerNode: wholeNumber(env, 'MAX_STREAMS_PER_NODE', DEFAULT_LIMITS.streamsPerNode, 1, 1_000_000),
      pendingSocketsPerNode: wholeNumber(env, 'MAX_PENDING_SOCKETS_PER_NODE', DEFAULT_LIMITS.pendingSocketsPerNode, 1, 1_000_000),
      pendingSocketsPerAddress: wholeNumber(env, 'MAX_PENDING_SOCKETS_PER_ADDRESS', DEFAULT_LIMITS.pendingSocketsPerAddress, 1, 1_000_000),
      cartsPerUser: wholeNumber(env, 'MAX_CARTS_PER_USER', DEFAULT_LIMITS.cartsPerUser, 1, 1_000_000),
      cartExecutionsPerUser: wholeNumber(env, 'MAX_CART_EXECUTIONS_PER_USER', DEFAULT_LIMITS.cartExecutionsPerUser, 1, 1000),
      loginRequiresApiKey: flag(env, 'LOGIN_REQUIRES_API_KEY', DEFAULT_LIMITS.loginRequiresApiKey),
    },
    shedding: {
      eventLoopDelayMs: wholeNumber(env, 'SHED_EVENT_LOOP_DELAY_MS', DEFAULT_SHEDDING.eventLoopDelayMs, 0, 600_000),
      commitWaitMs: wholeNumber(env, 'SHED_COMMIT_WAIT_MS', DEFAULT_SHEDDING.commitWaitMs, 0, 600_000),
    },
    metrics: metricsConfig(env),
  };
}
