/**
 * Environment -> typed settings. Every setting the service reads is here, documented in docs/configuration.md: one
 * TypeBox schema (`ConfigSchema`) gives the settings' shape, types, defaults and rules, and each of its
 * leaves names the environment variable it is read from.
 */
import { isIP } from 'node:net';
import Type, { type StaticDecode, type TSchema } from 'typebox';
import type { TLocalizedValidationError } from 'typebox/error';
import Value from 'typebox/value';
import { PASSWORD_HASH_COSTS } from './auth/credentials.js';
import { DAILY_END_PATTERN } from './domain/access/session-end.js';
import { genericAlgoIdsText, parseGenericAlgoIds, type GenericAlgoIds } from './domain/orders/algo-rules.js';

export class ConfigError extends Error {
  override name = 'ConfigError';
}

export const MAX_TOKEN_TTL_SECONDS = 7 * 24 * 60 * 60;

/** The OMS worker's outbox lease (src/oms/outbox-loop.ts). */
export const DEFAULT_OMS_LEASE_MS = 30_000;
/**
 * The OMS's pause after a pass without a backlog: short, so that at a steady rate its batches (each one
 * transaction that holds SQLite's writer and event loop) stay small (docs/design/performance.md).
 */
export const DEFAULT_OMS_POLL_MS = 50;

export const DEFAULT_DATABASE_URL = 'sqlite:./data/ordergate.db';

/** Our bodies are at most 64 KiB: 30 s is ample for a real client and short for one that trickles bytes. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;

/** The keyword of a schema leaf that names its environment variable; its `default` is the value when unset or empty. */
const ENV = 'x-env';

/** A whole number from `minimum` to `maximum`, written in decimal digits. */
function WholeNumber(env: string, fallback: number, minimum: number, maximum: number) {
  return Type.Integer({ [ENV]: env, default: fallback, minimum, maximum });
}

/** `true` or `false`, spelled so. */
function Flag(env: string, fallback: boolean) {
  return Type.Boolean({ [ENV]: env, default: fallback });
}

/** A setting that is null when its variable is unset or empty. */
function Nullable<T extends TSchema>(env: string, type: T) {
  return Type.Union([type, Type.Null()], { [ENV]: env, default: null });
}

/** PUBLIC_URL: read as an origin, so that a trailing slash or a default port make no difference. */
const PublicUrl = Type.Codec(
  Type.Refine(
    Type.String(),
    (text) => {
      const url = URL.canParse(text) ? new URL(text) : null;
      return (
        url !== null &&
        ['http:', 'https:'].includes(url.protocol) &&
        url.pathname === '/' &&
        url.search === '' &&
        url.hash === ''
      );
    },
    (text) => `must be an http:// or https:// URL without a path, e.g. https://api.example.com, got "${text}"`,
  ),
)
  .Decode((text) => new URL(text).origin)
  .Encode((origin) => origin);

const PROXY_RANGE_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

/** The first entry of a TRUST_PROXY list that is no address, CIDR range or proxy-addr name (undefined: none). */
function badProxyEntry(text: string): string | undefined {
  const trimmed = text.trim();
  if (trimmed === '' || trimmed === 'true' || trimmed === 'false') return undefined;
  return trimmed
    .split(',')
    .map((entry) => entry.trim())
    .find((entry) => {
      if (PROXY_RANGE_NAMES.includes(entry)) return false;
      const [address, bits, extra] = entry.split('/');
      const family = isIP(address ?? '');
      const prefixOk = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= (family === 6 ? 128 : 32));
      return family === 0 || !prefixOk || extra !== undefined;
    });
}

/**
 * TRUST_PROXY: unset or false, true, or a comma-separated list of addresses and CIDR ranges. No hop count:
 * it cannot tell a proxy from a client that sends enough X-Forwarded-For entries (Fastify refuses it too).
 * proxy-addr's (Fastify's) names: 127.0.0.0/8 and ::1; 169.254.0.0/16 and fe80::/10; the private ranges.
 */
const TrustProxySetting = Type.Codec(
  Type.Refine(
    Type.String({ [ENV]: 'TRUST_PROXY', default: false }),
    (text) => badProxyEntry(text) === undefined,
    (text) =>
      `must be true, false or a comma-separated list of IP addresses, CIDR ranges and the names ${PROXY_RANGE_NAMES.join(', ')}, got "${badProxyEntry(text)}"`,
  ),
)
  .Decode((text): boolean | string => {
    const trimmed = text.trim();
    if (trimmed === '' || trimmed === 'false') return false;
    if (trimmed === 'true') return true;
    return trimmed
      .split(',')
      .map((entry) => entry.trim())
      .join(',');
  })
  .Encode(String);

/** Per-user and per-address call limits (docs/design/rate-limits.md); 0 turns a limit off. */
const RateLimitSchema = Type.Object({
  /** Order-entry calls accepted per user in any one second. */
  ordersPerSecond: WholeNumber('RATE_LIMIT_ORDERS_PER_SECOND', 10, 0, 1_000_000),
  /** Cart creates, updates and deletes accepted per user in any one second. */
  cartWritesPerSecond: WholeNumber('RATE_LIMIT_CART_WRITES_PER_SECOND', 10, 0, 1_000_000),
  /** Login attempts accepted per user id in any one minute. */
  loginsPerMinutePerUser: WholeNumber('RATE_LIMIT_LOGINS_PER_MINUTE', 10, 0, 1_000_000),
  /** Login attempts accepted per client address in any one minute. */
  loginsPerMinutePerAddress: WholeNumber('RATE_LIMIT_LOGINS_PER_MINUTE_PER_ADDRESS', 100, 0, 1_000_000),
  /** Failed logins of one user id from one address before each further attempt from there waits (doubling); 0: off. */
  loginBackoffAfterFailures: WholeNumber('RATE_LIMIT_LOGIN_BACKOFF_AFTER', 5, 0, 1000),
  /** The longest such wait, in seconds. */
  loginBackoffMaxSeconds: WholeNumber('RATE_LIMIT_LOGIN_BACKOFF_MAX_SECONDS', 900, 1, 24 * 60 * 60),
  /** Where the counts are kept so that every node shares them; null: each node counts in its memory. */
  redisUrl: Nullable(
    'REDIS_URL',
    Type.Refine(
      Type.String(),
      (text) => /^rediss?:\/\/./.test(text) && URL.canParse(text),
      // A password in a malformed URL is not echoed: only what comes before its first colon.
      (text) => `must be a redis:// or rediss:// URL, got "${text.split(':')[0]}:..."`,
    ),
  ),
});

/** Caps on what one user or one node may hold (docs/design/security.md). */
const LimitsSchema = Type.Object({
  /** Order-event streams (SSE) and live order sockets one user may hold open on one node. */
  streamsPerUser: WholeNumber('MAX_STREAMS_PER_USER', 10, 1, 100_000),
  /** Order-event streams and live order sockets one node holds open, all users together (logged in). */
  streamsPerNode: WholeNumber('MAX_STREAMS_PER_NODE', 2000, 1, 1_000_000),
  /** Live order socket connections not yet logged in that one node holds, apart from streamsPerNode. */
  pendingSocketsPerNode: WholeNumber('MAX_PENDING_SOCKETS_PER_NODE', 200, 1, 1_000_000),
  /** Of those, how many one client address may hold. */
  pendingSocketsPerAddress: WholeNumber('MAX_PENDING_SOCKETS_PER_ADDRESS', 10, 1, 1_000_000),
  /** Order carts one user may keep. */
  cartsPerUser: WholeNumber('MAX_CARTS_PER_USER', 100, 1, 1_000_000),
  /** Cart executions of one user that may be placing their lines at once on one node. */
  cartExecutionsPerUser: WholeNumber('MAX_CART_EXECUTIONS_PER_USER', 2, 1, 1000),
  /** Whether a login must carry an active API key of the user (`api_key`), so that a password alone opens no session. */
  loginRequiresApiKey: Flag('LOGIN_REQUIRES_API_KEY', false),
  /**
   * Whether an API key without a registered address is refused (SEBI's static IP rule: every API key bound
   * to one primary and at most one secondary address). A key with registered addresses is always held to them.
   */
  staticIpRequired: Flag('STATIC_IP_REQUIRED', false),
  /**
   * Whether a login must pass a second factor (TOTP): a user not enrolled in TOTP logs in only when the
   * operator exempted it (`ordergate users second-factor USER --exempt`). SEBI's rule for API logins; the
   * production setting.
   */
  secondFactorRequired: Flag('LOGIN_SECOND_FACTOR_REQUIRED', false),
  /**
   * Wrong TOTP codes of one user in a row, from any address and with or without an API key, before each
   * further code waits (1 s, doubling).
   */
  secondFactorBackoffAfter: WholeNumber('LOGIN_SECOND_FACTOR_BACKOFF_AFTER', 3, 1, 100),
  /** The longest such wait, in seconds. */
  secondFactorBackoffMaxSeconds: WholeNumber('LOGIN_SECOND_FACTOR_BACKOFF_MAX_SECONDS', 300, 1, 24 * 60 * 60),
  /** Wrong or spent TOTP codes of one user in a row that lock its second factor until the operator unlocks it (`ordergate users totp-unlock`). */
  secondFactorLockoutAfter: WholeNumber('LOGIN_SECOND_FACTOR_LOCKOUT_AFTER', 10, 1, 1000),
});

/** ALGO_GENERIC_ID: one generic algo ID for both segments, or NSE_EQ=ID,BSE_EQ=ID. */
const GenericAlgoIdsSetting = Type.Codec(
  Type.Refine(
    Type.String(),
    (text) => typeof parseGenericAlgoIds(text) !== 'string',
    (text) => `${parseGenericAlgoIds(text) as string}`,
  ),
)
  .Decode((text) => parseGenericAlgoIds(text) as GenericAlgoIds)
  .Encode((ids) => genericAlgoIdsText(ids));

/** SEBI's rules for API and algo orders (docs/design/sebi-algo.md). */
const AlgoSchema = Type.Object({
  /**
   * The exchanges' generic algo IDs, stamped on every order that carries no registered algo's; null: the
   * rules are off (an algo_id is stored as sent, no threshold), for development. A stopped algo is refused
   * either way.
   */
  genericIds: Nullable('ALGO_GENERIC_ID', GenericAlgoIdsSetting),
  /** Orders a second one user may send in one exchange segment without a registered algo ID (SEBI: 10). */
  thresholdPerSecond: WholeNumber('ALGO_THRESHOLD_ORDERS_PER_SECOND', 10, 1, 1000),
});

/** Load shedding (docs/design/security.md): past either threshold, new order-entry calls answer 503 at once. */
const SheddingSchema = Type.Object({
  /** Event-loop delay (ms) past which order entry is shed; 0: off. */
  eventLoopDelayMs: WholeNumber('SHED_EVENT_LOOP_DELAY_MS', 1000, 0, 600_000),
  /** How long (ms) the oldest order waiting for its commit may have waited before order entry is shed; 0: off. */
  commitWaitMs: WholeNumber('SHED_COMMIT_WAIT_MS', 2000, 0, 600_000),
});

/** A credential or a path: printable characters only (a control character is a pasting mistake). */
function PrintableText() {
  return Type.Refine(
    Type.String(),
    (text) => /^[\x20-\x7e\u00a0-\uffff]+$/.test(text),
    () => 'must be printable text without control characters',
  );
}

/** How the OMS reaches the exchanges (docs/exchanges.md). */
export const EXCHANGE_LINKS = ['sim', 'in-process', 'nse'] as const;

/**
 * The exchange links (src/oms/links/, docs/exchanges.md): `sim`, the exchange simulator started by `serve` on
 * loopback, reached through the e-OFS link over HTTP for NSE_EQ and through iBBS files for BSE_EQ;
 * `in-process`, the simulator inside the OMS with no wire; `nse`, the real exchanges: NSE's e-OFS Web API
 * for NSE_EQ, and BSE's iBBS files for BSE_EQ when the EXCHANGE_BSE_* settings are given (else BSE_EQ bids
 * are refused).
 */
const ExchangeSchema = Type.Object({
  link: Type.Enum(EXCHANGE_LINKS, { [ENV]: 'EXCHANGE_LINK', default: 'sim' }),
  /** EXCHANGE_SIM_PORT: the loopback port of the simulator `serve` starts (0: a free port). */
  simPort: WholeNumber('EXCHANGE_SIM_PORT', 0, 0, 65535),
  /** How long an exchange call may take before its answer counts as lost, in milliseconds. */
  timeoutMs: WholeNumber('EXCHANGE_TIMEOUT_MS', 5_000, 100, 120_000),
  /** EXCHANGE_NSE_URL: the e-OFS API's base URL, e.g. https://eofsuat.nseindia.com/api (EXCHANGE_LINK=nse). */
  nseUrl: Nullable(
    'EXCHANGE_NSE_URL',
    Type.Refine(
      Type.String(),
      (text) => URL.canParse(text) && ['http:', 'https:'].includes(new URL(text).protocol),
      (text) => `must be an http:// or https:// URL, e.g. https://eofsuat.nseindia.com/api, got "${text}"`,
    ),
  ),
  /** The trading member's code at NSE. */
  nseMemberCode: Nullable('EXCHANGE_NSE_MEMBER_CODE', PrintableText()),
  /** The API user's login id, enabled in NSE's member portal. */
  nseLoginId: Nullable('EXCHANGE_NSE_LOGIN_ID', PrintableText()),
  /** The API user's password (never logged); or EXCHANGE_NSE_PASSWORD_FILE. */
  nsePassword: Nullable('EXCHANGE_NSE_PASSWORD', PrintableText()),
  /** A file holding the API user's password (its first line). */
  nsePasswordFile: Nullable('EXCHANGE_NSE_PASSWORD_FILE', PrintableText()),
  /**
   * BSE's iBBS (EXCHANGE_LINK=nse, when set: BSE_EQ bids go as upload files; docs/exchanges.md): the trading
   * member's code at BSE, in the files' names.
   */
  bseMemberCode: Nullable(
    'EXCHANGE_BSE_MEMBER_CODE',
    Type.String({ pattern: '^[0-9A-Z]{1,12}$', description: '1 to 12 capital letters and digits' }),
  ),
  /** The folder ordergate writes upload files into, for iBBS (or the member's file transfer) to take. */
  bseOutbox: Nullable('EXCHANGE_BSE_OUTBOX', PrintableText()),
  /** The folder the exchange's downloads arrive in (success, rejection, bid book, allocation). */
  bseInbox: Nullable('EXCHANGE_BSE_INBOX', PrintableText()),
  /**
   * The link's own record of what it uploaded: on a disk that survives a restart, never shared with
   * another deployment. With EXCHANGE_LINK=sim, a folder of its own under the system's temporary folder
   * when unset.
   */
  bseRecordDir: Nullable('EXCHANGE_BSE_RECORD_DIR', PrintableText()),
});

/**
 * The metrics listener (src/http/routes/metrics.ts): /metrics, /health/live, /health/ready and /health/oms on a port of their
 * own. The metrics reveal the traffic of every user: reachable beyond this machine they need a token, and a
 * token or host without a port to protect is a mistake (`metricsProblem`).
 */
const MetricsSchema = Type.Object({
  /** METRICS_PORT; null: no metrics listener; 0: a free port. */
  port: Nullable('METRICS_PORT', Type.Integer({ minimum: 0, maximum: 65535 })),
  /** METRICS_HOST: the address it binds, an IP address (127.0.0.1: this machine only). */
  host: Type.Refine(
    Type.String({ [ENV]: 'METRICS_HOST', default: '127.0.0.1' }),
    (text) => isIP(text) !== 0,
    (text) => `must be an IP address, e.g. 127.0.0.1 or 0.0.0.0, got "${text}"`,
  ),
  /** METRICS_TOKEN: the Bearer token a scrape must send; null: none, allowed only on a loopback address. */
  token: Nullable(
    'METRICS_TOKEN',
    Type.String({
      pattern: '^[\\x21-\\x7e]{32,512}$',
      description: '32 to 512 printable ASCII characters without spaces (e.g. openssl rand -hex 32)',
    }),
  ),
});

/** Every setting, in the shape the service uses, in the order they are read: the first faulty one is reported. */
export const ConfigSchema = Type.Object({
  logLevel: Type.Enum(LOG_LEVELS, { [ENV]: 'LOG_LEVEL', default: 'info' }),
  host: Type.String({ [ENV]: 'HOST', default: '127.0.0.1' }),
  port: WholeNumber('PORT', 8080, 0, 65535),
  databaseUrl: Type.String({ [ENV]: 'DATABASE_URL', default: DEFAULT_DATABASE_URL }),
  /** How long a client may take to send a whole request (headers and body), in milliseconds. */
  requestTimeoutMs: WholeNumber('REQUEST_TIMEOUT_MS', DEFAULT_REQUEST_TIMEOUT_MS, 100, 600_000),
  /**
   * The base URL clients reach the server at (behind TLS or a proxy), named in the login answer as the live
   * order socket; null: the login request's own protocol and Host.
   */
  publicUrl: Nullable('PUBLIC_URL', PublicUrl),
  /**
   * How long an access token lives, in seconds. At most a week: a token leaked unnoticed lives until it
   * expires, and a trading session is a day.
   */
  tokenTtlSeconds: WholeNumber('TOKEN_TTL_SECONDS', 24 * 60 * 60, 1, MAX_TOKEN_TTL_SECONDS),
  /**
   * SESSION_DAILY_END: India time (`HH:MM`) at which every session ends, whatever its TTL (SEBI: before the
   * next trading day begins); null: sessions last their TTL.
   */
  sessionDailyEnd: Nullable(
    'SESSION_DAILY_END',
    Type.Refine(
      Type.String(),
      (text) => DAILY_END_PATTERN.test(text),
      (text) => `must be a time of day in India as HH:MM (00:00 to 23:59), e.g. 06:00, got "${text}"`,
    ),
  ),
  /**
   * PASSWORD_HASH_COST: the cost of new password hashes, OWASP's (`owasp`, the default) or, for test suites
   * only, a hundredth of it (`test-only-insecure`, refused when NODE_ENV=production).
   */
  passwordHashCost: Type.Enum(PASSWORD_HASH_COSTS, { [ENV]: 'PASSWORD_HASH_COST', default: 'owasp' }),
  /** Whether `serve` runs the OMS worker in its own process (false when `ordergate oms` runs it). */
  omsEmbedded: Flag('OMS_EMBEDDED', true),
  /** The pause between two passes of the OMS worker, in milliseconds. */
  omsPollMs: WholeNumber('OMS_POLL_MS', DEFAULT_OMS_POLL_MS, 10, 60_000),
  /**
   * How long an outbox entry a worker claimed stays with it, in milliseconds: a worker that dies leaves its
   * entries to the others for this long.
   */
  omsLeaseMs: WholeNumber('OMS_LEASE_MS', DEFAULT_OMS_LEASE_MS, 1_000, 3_600_000),
  /** How long one webhook POST may take, in milliseconds. */
  webhookTimeoutMs: WholeNumber('WEBHOOK_TIMEOUT_MS', 10_000, 100, 120_000),
  /** How long a webhook delivery is retried after its event, in seconds. */
  webhookRetryForSeconds: WholeNumber('WEBHOOK_RETRY_FOR_SECONDS', 24 * 60 * 60, 60, 30 * 24 * 60 * 60),
  /** Whether webhook URLs may use plain http:// (else https:// only). */
  webhookAllowHttp: Flag('WEBHOOK_ALLOW_HTTP', false),
  /** Whether webhook URLs may name (or resolve to) loopback, private, link-local or metadata addresses. */
  webhookAllowPrivateAddresses: Flag('WEBHOOK_ALLOW_PRIVATE_ADDRESSES', false),
  /** WEBHOOK_ALLOW_ANY_PORT: webhooks may name any port (else 443, the scheme's default, and 1024 to 65535). */
  webhookAllowAnyPort: Flag('WEBHOOK_ALLOW_ANY_PORT', false),
  /**
   * Which proxies' X-Forwarded-For the server believes (Fastify's `trustProxy`): false (none, the TCP peer
   * is the client), true (every hop), or a comma-separated list of addresses and CIDR ranges.
   */
  trustProxy: TrustProxySetting,
  rateLimits: RateLimitSchema,
  limits: LimitsSchema,
  algo: AlgoSchema,
  shedding: SheddingSchema,
  metrics: MetricsSchema,
  exchange: ExchangeSchema,
});

export type Config = StaticDecode<typeof ConfigSchema>;
export type RateLimitConfig = Config['rateLimits'];
export type Limits = Config['limits'];
export type AlgoConfig = Config['algo'];
export type SheddingConfig = Config['shedding'];
export type MetricsConfig = Config['metrics'];
export type TrustProxy = Config['trustProxy'];
export type ExchangeConfig = Config['exchange'];

export const DEFAULT_LIMITS = Value.Default(LimitsSchema, {}) as Limits;

export const DEFAULT_ALGO = Value.Default(AlgoSchema, {}) as AlgoConfig;

export const DEFAULT_SHEDDING = Value.Default(SheddingSchema, {}) as SheddingConfig;

/** The JSON value a setting's text stands for, read as its type reads: decimal digits, or true or false. */
function valueOf(name: string, type: TSchema, text: string): unknown {
  if (Type.IsInteger(type)) {
    if (!/^\d+$/.test(text)) throw new ConfigError(`${name} must be a whole number, got "${text}"`);
    return Number(text);
  }
  if (Type.IsBoolean(type)) {
    if (text !== 'true' && text !== 'false') throw new ConfigError(`${name} must be true or false, got "${text}"`);
    return text === 'true';
  }
  return text;
}

/** One line that names the variable and says what it must be. */
function refusal(name: string, type: TSchema, text: string, value: unknown, error: TLocalizedValidationError): string {
  const bounds = type as { minimum?: number; maximum?: number; enum?: readonly unknown[]; description?: string };
  switch (error.keyword) {
    case 'minimum':
    case 'maximum':
      return `${name} must be between ${bounds.minimum} and ${bounds.maximum}, got ${String(value)}`;
    case 'enum':
      return `${name} must be one of ${bounds.enum?.join(', ')}, got "${text}"`;
    case '~refine':
      return `${name} ${error.message}`;
    default:
      // A pattern's text is not echoed: it may be a secret (METRICS_TOKEN). Its description says what is expected.
      return `${name} must be ${bounds.description ?? error.message}`;
  }
}

/** Reads the settings `schema` describes from `env`: a leaf's default when its variable is unset or empty. */
function read(schema: TSchema, env: NodeJS.ProcessEnv): unknown {
  const name = (schema as Record<string, unknown>)[ENV];
  if (typeof name !== 'string') {
    const { properties } = schema as { properties: Record<string, TSchema> };
    return Object.fromEntries(Object.entries(properties).map(([key, member]) => [key, read(member, env)]));
  }
  const text = env[name];
  if (text === undefined || text === '') return (schema as { default: unknown }).default;
  // A setting that may be unset is its type or null, and a variable that is set is read as that type.
  const type = Type.IsUnion(schema) ? schema.anyOf[0]! : schema;
  const value = valueOf(name, type, text);
  const [error] = Value.Errors(type, value);
  if (error !== undefined) throw new ConfigError(refusal(name, type, text, value, error));
  return Value.Decode(type, value);
}

/** Why the metrics settings together are refused (null: they are not). */
function metricsProblem(metrics: MetricsConfig, env: NodeJS.ProcessEnv): string | null {
  if (metrics.port === null && (metrics.token !== null || env.METRICS_HOST))
    return 'METRICS_HOST and METRICS_TOKEN need METRICS_PORT: without it there is no metrics listener';
  if (metrics.port !== null && metrics.token === null && !isLoopback(metrics.host)) {
    return `METRICS_HOST ${metrics.host} is reachable beyond this machine: set METRICS_TOKEN, or bind 127.0.0.1`;
  }
  return null;
}

/** What EXCHANGE_LINK=nse lacks, in one line; null: nothing. */
function exchangeProblem(exchange: ExchangeConfig): string | null {
  if (exchange.link !== 'nse') return null;
  const missing = [
    exchange.nseUrl === null && 'EXCHANGE_NSE_URL',
    exchange.nseMemberCode === null && 'EXCHANGE_NSE_MEMBER_CODE',
    exchange.nseLoginId === null && 'EXCHANGE_NSE_LOGIN_ID',
    exchange.nsePassword === null &&
      exchange.nsePasswordFile === null &&
      'EXCHANGE_NSE_PASSWORD or EXCHANGE_NSE_PASSWORD_FILE',
  ].filter((name) => name !== false);
  if (missing.length > 0) return `EXCHANGE_LINK=nse needs ${missing.join(', ')}`;
  const bse = [
    ['EXCHANGE_BSE_MEMBER_CODE', exchange.bseMemberCode],
    ['EXCHANGE_BSE_OUTBOX', exchange.bseOutbox],
    ['EXCHANGE_BSE_INBOX', exchange.bseInbox],
    ['EXCHANGE_BSE_RECORD_DIR', exchange.bseRecordDir],
  ] as const;
  const unset = bse.filter(([, value]) => value === null).map(([name]) => name);
  if (unset.length > 0 && unset.length < bse.length)
    return `BSE's iBBS link needs all of ${bse.map(([name]) => name).join(', ')}; unset: ${unset.join(', ')}`;
  return null;
}

function isLoopback(address: string): boolean {
  return /^127\./.test(address) || address === '::1' || /^::ffff:127\./i.test(address);
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
  const exposed =
    env.NODE_ENV === 'production'
      ? 'NODE_ENV=production'
      : bindsLoopbackOnly(config.host)
        ? null
        : `HOST=${config.host}`;
  if (exposed === null) return null;
  return (
    `PUBLIC_URL is required with ${exposed}: the login answer names the live order socket (data.others.messageSocket), ` +
    'and without it that URL would follow the Host header each client sends; set PUBLIC_URL to the address clients reach, e.g. https://api.example.com'
  );
}

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  // Every leaf's value has passed its schema's check: the result has the schema's decoded type.
  const config = read(ConfigSchema, env) as Config;
  if (config.passwordHashCost === 'test-only-insecure' && env.NODE_ENV === 'production') {
    throw new ConfigError(
      'PASSWORD_HASH_COST=test-only-insecure is for test suites; it is refused with NODE_ENV=production',
    );
  }
  const metrics = metricsProblem(config.metrics, env);
  if (metrics !== null) throw new ConfigError(metrics);
  const exchange = exchangeProblem(config.exchange);
  if (exchange !== null) throw new ConfigError(exchange);
  return config;
}
