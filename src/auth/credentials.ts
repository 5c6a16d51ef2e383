/**
 * Secrets: password hashing (scrypt from node:crypto), API keys and access tokens (random, stored only as
 * SHA-256 digests), and TOTP second factors (otpauth, RFC 6238). No I/O here.
 */
// A namespace import: `hash` is missing before Node 20.12, where a named import of it would fail to link.
import * as nodeCrypto from 'node:crypto';
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import * as OTPAuth from 'otpauth';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: object,
) => Promise<Buffer>;

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * The cost of every new password hash. OWASP's minimum for scrypt is N=2^17, r=8, p=1 (128 MiB per hash) or,
 * for the same work, N=2^15, r=8, p=3; scrypt's memory is 128 * N * r bytes per hash whatever p, so the
 * latter needs 32 MiB. With at most PASSWORD_CHECKS_AT_ONCE (2) hashes at a time that is 64 MiB at peak,
 * where the former would take 256 MiB, above the service's 250 MB peak RSS on its own.
 */
export const OWASP_SCRYPT_COST: ScryptCost = { N: 2 ** 15, r: 8, p: 3 };
/**
 * For test suites only (PASSWORD_HASH_COST=test-only-insecure): about a hundredth of the work, so that a
 * suite that creates and logs in a thousand users does not spend minutes hashing. Never for real passwords.
 */
export const TEST_ONLY_SCRYPT_COST: ScryptCost = { N: 2 ** 10, r: 8, p: 1 };
/** Node refuses a hash needing more; it bounds what a stored hash's parameters may ask. */
const SCRYPT_MAX_MEMORY = 64 * 1024 * 1024;
const KEY_LENGTH = 32;

/**
 * The stored hash of a user with no usable password (created by `ordergate users import-clients`): no
 * password matches it (it is no scrypt hash), and a login checks the unknown user's hash in its place, so
 * that its time tells nothing. `ordergate users reset-password` gives the user one.
 */
export const NO_PASSWORD_HASH = '!none';

/** Checks a password against a stored hash, whatever cost it was made with (its parameters are in it). */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, saltB64, hashB64] = stored.split('$');
  if (scheme !== 'scrypt' || !saltB64 || !hashB64) return false;
  const expected = Buffer.from(hashB64, 'base64');
  const actual = await scryptAsync(password, Buffer.from(saltB64, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: SCRYPT_MAX_MEMORY,
  });
  return timingSafeEqual(actual, expected);
}

/** Makes new password hashes at one cost (OWASP's by default) and tells the stored hashes made at another. */
export class PasswordHasher {
  /** A hash to compare against when the user does not exist: the cost of a new hash, so that timing tells nothing. */
  readonly unknownUserHash: string;

  constructor(readonly cost: ScryptCost = OWASP_SCRYPT_COST) {
    this.unknownUserHash = [
      'scrypt',
      cost.N,
      cost.r,
      cost.p,
      randomBytes(16).toString('base64'),
      randomBytes(KEY_LENGTH).toString('base64'),
    ].join('$');
  }

  async hash(password: string): Promise<string> {
    const { N, r, p } = this.cost;
    const salt = randomBytes(16);
    const hash = await scryptAsync(password, salt, KEY_LENGTH, { N, r, p, maxmem: SCRYPT_MAX_MEMORY });
    return ['scrypt', N, r, p, salt.toString('base64'), hash.toString('base64')].join('$');
  }

  /** Whether a stored hash was made with another cost than new hashes get: the next successful login re-hashes it. */
  needsRehash(stored: string): boolean {
    const [scheme, n, r, p] = stored.split('$');
    return scheme !== 'scrypt' || Number(n) !== this.cost.N || Number(r) !== this.cost.r || Number(p) !== this.cost.p;
  }
}

/** The hasher of production: OWASP's cost. */
export const OWASP_PASSWORD_HASHER = new PasswordHasher(OWASP_SCRYPT_COST);

/** PASSWORD_HASH_COST's values and the hasher each names. */
const HASHERS = { owasp: OWASP_PASSWORD_HASHER, 'test-only-insecure': new PasswordHasher(TEST_ONLY_SCRYPT_COST) };
export type PasswordHashCost = keyof typeof HASHERS;
export const PASSWORD_HASH_COSTS = Object.keys(HASHERS) as PasswordHashCost[];

export function passwordHasherFor(cost: PasswordHashCost): PasswordHasher {
  return HASHERS[cost];
}

/**
 * The hex SHA-256 of a text: every authenticated request hashes its access token and its API key. Node's
 * one-shot `crypto.hash` (Node >= 20.12) takes 0.4 us for a token, `createHash` 1.0 us (measured alone);
 * an older Node 20 gets the latter.
 */
export const sha256Hex: (secret: string) => string =
  typeof nodeCrypto.hash === 'function'
    ? (secret) => nodeCrypto.hash('sha256', secret, 'hex')
    : (secret) => createHash('sha256').update(secret).digest('hex');

export const API_KEY_PREFIX = 'ogk_';
export const ACCESS_TOKEN_PREFIX = 'ogt_';
export const WEBHOOK_SECRET_PREFIX = 'whsec_';

export interface NewSecret {
  /** The secret itself, shown once. */
  secret: string;
  /** What is stored. */
  hash: string;
  /** A short public id, safe to log and show. */
  id: string;
}

function newSecret(prefix: string): NewSecret {
  const secret = prefix + randomBytes(32).toString('base64url');
  return { secret, hash: sha256Hex(secret), id: secret.slice(0, prefix.length + 8) };
}

export const newApiKey = (): NewSecret => newSecret(API_KEY_PREFIX);
export const newAccessToken = (): NewSecret => newSecret(ACCESS_TOKEN_PREFIX);
/** A webhook signing secret: kept as is (every delivery is signed with it), so only `secret` is used. */
export const newWebhookSecret = (): string => newSecret(WEBHOOK_SECRET_PREFIX).secret;

export function newTotpSecret(): string {
  return new OTPAuth.Secret({ size: 20 }).base32;
}

function totpFor(secretBase32: string, userId: string): OTPAuth.TOTP {
  return new OTPAuth.TOTP({
    issuer: 'ordergate',
    label: userId,
    algorithm: 'SHA1',
    digits: 6,
    period: 30,
    secret: OTPAuth.Secret.fromBase32(secretBase32),
  });
}

/** The otpauth:// URI an authenticator app scans to enrol. */
export function totpUri(secretBase32: string, userId: string): string {
  return totpFor(secretBase32, userId).toString();
}

export function totpCode(secretBase32: string, userId: string, at: number = Date.now()): string {
  return totpFor(secretBase32, userId).generate({ timestamp: at });
}

/**
 * The time step (30 s periods since the epoch) whose code `code` is, when it is the current code or the
 * one before or after it (clock drift of up to 30 s); null otherwise. The caller accepts a step once.
 */
export function verifyTotp(secretBase32: string, userId: string, code: string, at: number = Date.now()): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const totp = totpFor(secretBase32, userId);
  const delta = totp.validate({ token: code, timestamp: at, window: 1 });
  return delta === null ? null : totp.counter({ timestamp: at }) + delta;
}
