/**
 * Who is calling: login (password, TOTP when enrolled or required, an API key optional or required),
 * access-token checks, API-key checks and logout. Sessions live in the database, so a token is valid on
 * every node and across restarts, and a token the operator revoked (or of a user the operator disabled) is
 * refused on every node.
 */
import {
  newAccessToken,
  NO_PASSWORD_HASH,
  OWASP_PASSWORD_HASHER,
  sha256Hex,
  verifyPassword,
  verifyTotp,
  type PasswordHasher,
} from '../auth/credentials.js';
import { PasswordChecks } from '../auth/password-checks.js';
import { ApiError, Errors } from '../domain/errors.js';
import type { MarginType, UserCategory } from '../domain/ofs/offer/offer.js';
import type { BidderCategory } from '../domain/ofs/rules.js';
import type { Session } from '../domain/access/user.js';
import type { UserRepository } from '../store/access/users.js';
import { keyAddressRefusal } from '../domain/access/static-ip.js';
import {
  locksSecondFactor,
  secondFactorGate,
  secondFactorRefusal,
  type SecondFactorCount,
  type SecondFactorLimits,
} from '../domain/access/second-factor.js';
import { dailyEndMinutes, tokenExpiry } from '../domain/access/session-end.js';
import type { Limits } from '../config.js';
import type { Member } from '../domain/access/member-data.js';

/** SHA-256 of the bearer token, or the 401 for a missing or malformed Authorization header. */
function bearerTokenHash(authorization: string | undefined): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) {
    throw new ApiError(
      Errors.TOKEN_MISSING,
      'Send Authorization: Bearer <access_token>; log in at POST /authentication/v1/user/session',
      [{ field: 'Authorization', message: 'missing or not a Bearer token' }],
    );
  }
  return sha256Hex(match[1]!);
}

function apiKeyMissing(): ApiError {
  return new ApiError(Errors.API_KEY_MISSING, 'Send your API key in the x-api-key header', [
    { field: 'x-api-key', message: 'missing' },
  ]);
}

function checkApiKeyOwner(caller: Caller, owner: string | undefined): void {
  if (owner === undefined)
    throw new ApiError(Errors.API_KEY_INVALID, 'The API key is not valid', [
      { field: 'x-api-key', message: 'unknown or revoked API key' },
    ]);
  if (owner !== caller.userId) {
    throw new ApiError(Errors.API_KEY_OTHER_USER, 'The API key belongs to another user than the access token', [
      { field: 'x-api-key', message: 'belongs to another user' },
    ]);
  }
}

/** What a call with a revoked token (a logout, the operator's revocation, a disabled user) is told; so is an open stream or socket it ends. */
export function tokenRevoked(): ApiError {
  return new ApiError(
    Errors.TOKEN_REVOKED,
    'The access token was revoked (a logout, or the operator ended the sessions of this user)',
    [{ field: 'Authorization', message: 'revoked access token' }],
  );
}

export interface Caller {
  userId: string;
  category: BidderCategory;
  /** The user's member data as the session's read found it (docs/design/member-data.md). */
  member: Member;
  /** SHA-256 of the bearer token, to revoke it at logout. */
  tokenHash: string;
  expiresAt: number;
}

/** What a login attempt presents: the user, the password and, when sent, the TOTP code and an API key. */
export interface LoginCredentials {
  user_id: string;
  password: string;
  second_auth?: string | null | undefined;
  api_key?: string | null | undefined;
}

export interface LoginResult {
  accessToken: string;
  userId: string;
  expiresAt: number;
}

export interface AuthOptions {
  /** LOGIN_REQUIRES_API_KEY: a login must carry an active API key of the user, so that a password alone opens no session. */
  loginRequiresApiKey?: boolean;
  /** STATIC_IP_REQUIRED: a key with no registered address is refused too (SEBI's static IP rule). */
  staticIpRequired?: boolean;
  /**
   * LOGIN_SECOND_FACTOR_REQUIRED: a user not enrolled in TOTP logs in only when the operator exempted them
   * (SEBI's two-factor rule); others are refused with 403 e-216.
   */
  secondFactorRequired?: boolean;
  /** SESSION_DAILY_END, in minutes after midnight India time: every token expires there at the latest. */
  dailyEndMinutes?: number | null;
  /** The cost of new hashes (a user's re-hash at login, the unknown user's hash); OWASP's by default. */
  passwordHasher?: PasswordHasher;
  /** LOGIN_SECOND_FACTOR_*: the per-user back-off and lockout of TOTP codes (DEFAULT_SECOND_FACTOR_LIMITS). */
  secondFactorLimits?: SecondFactorLimits;
}

/** The settings' defaults: 3 wrong codes in a row, then waits of 1, 2, 4... s up to 5 min; locked at the 10th. */
export const DEFAULT_SECOND_FACTOR_LIMITS: SecondFactorLimits = {
  backoffAfter: 3,
  backoffMaxMs: 300_000,
  lockoutAfter: 10,
};

/**
 * What every login of the server is held to, from the settings: the API key and static IP rules, the second
 * factor and its limits, the daily end. The one place they are read, so that a token issued by the
 * operator's commands (`ordergate demo`) is held to the same rules as one the API issues.
 */
export function authOptions(
  limits: Limits,
  sessionDailyEnd: string | null | undefined,
  passwordHasher?: PasswordHasher,
): AuthOptions {
  return {
    loginRequiresApiKey: limits.loginRequiresApiKey,
    staticIpRequired: limits.staticIpRequired,
    secondFactorRequired: limits.secondFactorRequired,
    secondFactorLimits: {
      backoffAfter: limits.secondFactorBackoffAfter,
      backoffMaxMs: limits.secondFactorBackoffMaxSeconds * 1000,
      lockoutAfter: limits.secondFactorLockoutAfter,
    },
    dailyEndMinutes: sessionDailyEnd == null ? null : dailyEndMinutes(sessionDailyEnd),
    ...(passwordHasher && { passwordHasher }),
  };
}

const wholeSeconds = (ms: number) => Math.max(1, Math.ceil(ms / 1000));

function secondFactorLocked(): ApiError {
  return new ApiError(
    Errors.SECOND_FACTOR_LOCKED,
    "This user's second factor is locked after too many wrong TOTP codes in a row; the operator unlocks it (ordergate users totp-unlock)",
    [{ field: 'second_auth', message: 'locked after too many wrong codes' }],
  );
}

function secondFactorWait(ms: number, why: string): ApiError {
  const seconds = wholeSeconds(ms);
  return new ApiError(
    Errors.RATE_LIMITED,
    `${why}; retry after ${seconds} s`,
    [{ field: 'second_auth', message: why }],
    { 'Retry-After': String(seconds) },
  );
}

/** The refusal of a key sent from an address it is not registered for; `field` names where it was sent. */
function keyAddressRefused(reason: string, field: string): ApiError {
  return new ApiError(Errors.API_KEY_ADDRESS, `The API key cannot be used from this address: ${reason}`, [
    { field, message: reason },
  ]);
}

const apiKeyNotActive = () =>
  new ApiError(Errors.LOGIN_API_KEY_INVALID, 'The api_key is not an active key of this user', [
    { field: 'api_key', message: 'not an active key of this user' },
  ]);

export class AuthService {
  /** Password checks of this process take turns (src/auth/password-checks.ts). */
  private readonly passwordChecks = new PasswordChecks();
  private readonly loginRequiresApiKey: boolean;
  private readonly staticIpRequired: boolean;
  private readonly secondFactorRequired: boolean;
  private readonly dailyEndMinutes: number | null;
  private readonly hasher: PasswordHasher;
  private readonly secondFactorLimits: SecondFactorLimits;

  constructor(
    private readonly users: UserRepository,
    private readonly tokenTtlMs: number,
    private readonly now: () => number,
    options: AuthOptions = {},
  ) {
    this.loginRequiresApiKey = options.loginRequiresApiKey ?? false;
    this.staticIpRequired = options.staticIpRequired ?? false;
    this.secondFactorRequired = options.secondFactorRequired ?? false;
    this.dailyEndMinutes = options.dailyEndMinutes ?? null;
    this.hasher = options.passwordHasher ?? OWASP_PASSWORD_HASHER;
    this.secondFactorLimits = options.secondFactorLimits ?? DEFAULT_SECOND_FACTOR_LIMITS;
  }

  /**
   * Whether `apiKey` is an active API key of `userId`, sent from an address it may be used from (a hash
   * lookup: keys are 256-bit random, no oracle).
   */
  async holdsApiKey(userId: string, apiKey: string, from: string): Promise<boolean> {
    if (apiKey === '') return false;
    const key = await this.users.activeApiKey(sha256Hex(apiKey));
    return key?.userId === userId && keyAddressRefusal(key.addresses, from, this.staticIpRequired) === null;
  }

  /** Refuses the login's api_key unless it is an active key of the user, sent from a registered address. */
  private async checkLoginKey(userId: string, apiKey: string, from: string | undefined): Promise<void> {
    const key = await this.users.activeApiKey(sha256Hex(apiKey));
    if (key?.userId !== userId) throw apiKeyNotActive();
    const refusal = keyAddressRefusal(key.addresses, from ?? '', this.staticIpRequired);
    if (refusal !== null) throw keyAddressRefused(refusal, 'api_key');
  }

  /** `from`: the client's address, whose share of the password checks the login takes (PasswordChecks). */
  async login(credentials: LoginCredentials, from?: string): Promise<LoginResult> {
    const apiKey = credentials.api_key ?? '';
    // Required, the key is checked first: without one no password is checked (nor hashed), so a leaked
    // password alone tells its holder nothing. Keys are 256-bit random: the answer is no oracle.
    if (this.loginRequiresApiKey) {
      if (apiKey === '') {
        throw new ApiError(
          Errors.LOGIN_API_KEY_REQUIRED,
          'This server takes a login only with an active api_key of the user',
          [{ field: 'api_key', message: 'required' }],
        );
      }
      await this.checkLoginKey(credentials.user_id, apiKey, from);
    }

    const user = await this.users.find(credentials.user_id);
    // Hash even for an unknown user, at the cost of a new hash, so that response time does not tell which
    // user ids exist.
    // A user with no usable password yet (NO_PASSWORD_HASH) is checked like an unknown one.
    const checkedHash =
      user === undefined || user.passwordHash === NO_PASSWORD_HASH ? this.hasher.unknownUserHash : user.passwordHash;
    const passwordOk = await this.passwordChecks.run(() => verifyPassword(credentials.password, checkedHash), from);
    if (!user || !passwordOk) throw new ApiError(Errors.LOGIN_FAILED, 'Invalid user_id or password');
    // Only after the password: to anyone without it, a disabled user looks like any other.
    if (user.disabledAt !== null) throw new ApiError(Errors.USER_DISABLED, 'This user is disabled; ask the operator');
    // Also only after the password, and before any session opens: a user the rule shuts out gets no token.
    const noSecondFactor = secondFactorRefusal(user, this.secondFactorRequired);
    if (noSecondFactor !== null) {
      throw new ApiError(
        Errors.SECOND_FACTOR_NOT_ENROLLED,
        'This server takes a login only with a second factor (TOTP) and this user is not enrolled; the operator must enrol the user in TOTP or exempt them',
        [{ field: 'second_auth', message: noSecondFactor }],
      );
    }

    let totpStep: number | null = null;
    let counted = 0;
    if (user.totpSecret !== null) {
      const code = credentials.second_auth ?? '';
      if (code === '')
        throw new ApiError(Errors.SECOND_FACTOR_REQUIRED, 'This user needs a TOTP code in second_auth', [
          { field: 'second_auth', message: 'a 6-digit TOTP code is required' },
        ]);
      counted = await this.countTotpCheck(user.userId, user.secondFactorCount);
      totpStep = verifyTotp(user.totpSecret, user.userId, code, this.now());
      if (totpStep === null) {
        await this.lockWhenDue(
          user.userId,
          counted,
          `${counted} wrong TOTP codes in a row, the last from ${from ?? 'an unknown address'}`,
        );
        throw new ApiError(Errors.SECOND_FACTOR_INVALID, 'The TOTP code is wrong or expired', [
          { field: 'second_auth', message: 'wrong or expired TOTP code' },
        ]);
      }
      // A right code not spent yet proves the factor: the count starts again, whatever else refuses this
      // login (its api_key, say). A spent one (a replay) stays counted, and is refused below.
      await this.users.clearTotpCount(user.userId, totpStep);
    }

    if (!this.loginRequiresApiKey && apiKey !== '') await this.checkLoginKey(user.userId, apiKey, from);

    const passwordHash = await this.rehashed(user.userId, credentials.password, checkedHash);
    const token = newAccessToken();
    const now = this.now();
    // Cut at the daily end: an open stream or socket ends at its token's expiry too.
    const expiresAt = tokenExpiry(now, this.tokenTtlMs, this.dailyEndMinutes);
    // A code works once, and is spent only by a login that passes every other check, in the transaction
    // that opens its session: a replayed (phished) code is refused, a login refused for its api_key leaves
    // the code to the corrected retry, and so does one whose session the database failed to write.
    const opened = await this.users.openSession(
      { tokenHash: token.hash, userId: user.userId, passwordHash, now, expiresAt },
      totpStep,
    );
    if (opened === 'totp-used') {
      await this.lockWhenDue(
        user.userId,
        counted,
        `${counted} TOTP codes in a row refused, the last a code already used, from ${from ?? 'an unknown address'}`,
      );
      throw new ApiError(Errors.SECOND_FACTOR_INVALID, 'This TOTP code was used already; log in with the next one', [
        { field: 'second_auth', message: 'TOTP code already used' },
      ]);
    }
    if (opened === 'refused') {
      // The operator disabled the user or changed the password while this login ran.
      if ((await this.users.find(user.userId))?.disabledAt != null)
        throw new ApiError(Errors.USER_DISABLED, 'This user is disabled; ask the operator');
      throw new ApiError(Errors.LOGIN_FAILED, 'Invalid user_id or password');
    }
    return { accessToken: token.secret, userId: user.userId, expiresAt };
  }

  /**
   * The per-user limits on TOTP codes (issue 47 row 2), whatever the address or API key: refuses a check
   * while the user must wait or is locked, else counts it before the code is compared (the count is the
   * database's, so every node and every check arriving at once is held to it). Answers the count, this
   * check included. `seen`: the count the login read with the user; when another check was counted since,
   * the count is read again and the rule applied to it, a few times, as if the checks had come one by one.
   */
  private async countTotpCheck(userId: string, seen: SecondFactorCount): Promise<number> {
    let count: SecondFactorCount | undefined = seen;
    for (let attempt = 0; count !== undefined && attempt < 5; attempt++) {
      const gate = secondFactorGate(count, this.now(), this.secondFactorLimits);
      if (gate.kind === 'locked') {
        // At the bound with no lock written (a check that reached it failed before locking): written now,
        // so that every lock has its record.
        if (count.lockedAt === null)
          await this.users.lockSecondFactor(
            userId,
            this.now(),
            `${count.failures} TOTP codes checked in a row without a login`,
          );
        throw secondFactorLocked();
      }
      if (gate.kind === 'wait')
        throw secondFactorWait(gate.ms, `Too many wrong TOTP codes for this user (${count.failures} in a row)`);
      if (await this.users.countTotpCheck(userId, count.failures, this.now())) return count.failures + 1;
      count = await this.users.secondFactorCount(userId);
    }
    // The count kept moving under this login (many checks at once): this one is not checked.
    throw secondFactorWait(1000, 'Other TOTP codes of this user are being checked');
  }

  /** Locks the user's second factor, recorded, when the check just counted reached the bound; then refuses. */
  private async lockWhenDue(userId: string, counted: number, detail: string): Promise<void> {
    if (!locksSecondFactor(counted, this.secondFactorLimits)) return;
    await this.users.lockSecondFactor(userId, this.now(), detail);
    throw secondFactorLocked();
  }

  /**
   * A hash made with an older cost is replaced, on a login that passed, by one with today's cost; when no
   * password check is free right now it waits for the next login. Answers the hash the user now has.
   */
  private async rehashed(userId: string, password: string, stored: string): Promise<string> {
    if (!this.hasher.needsRehash(stored)) return stored;
    const fresh = await this.passwordChecks.runIfFree(() => this.hasher.hash(password));
    return fresh !== null && (await this.users.setPasswordHash(userId, fresh, stored)) ? fresh : stored;
  }

  /**
   * Whether the caller's session still stands (not revoked by a logout or the operator, not expired, its
   * user not disabled); throws the 401 or 403 a call with its token would get now.
   */
  async recheck(caller: Caller): Promise<void> {
    this.callerOf(caller.tokenHash, await this.users.findSession(caller.tokenHash));
  }

  /** The caller behind an Authorization header value, or the 401 that explains why not. */
  async authenticate(authorization: string | undefined): Promise<Caller> {
    const tokenHash = bearerTokenHash(authorization);
    return this.callerOf(tokenHash, await this.users.findSession(tokenHash));
  }

  /**
   * The caller behind the bearer token, whose x-api-key must be an active key of the same user (seed 5),
   * sent from an address registered for it (`from`, the client's address as TRUST_PROXY reads it): token
   * faults first, then key faults, in one read, since every order-entry call pays for this. Without `from`
   * no address is known: a key with registered addresses is refused.
   */
  async authenticateWithApiKey(
    authorization: string | undefined,
    apiKey: string | undefined,
    from = '',
  ): Promise<Caller> {
    const tokenHash = bearerTokenHash(authorization);
    if (apiKey === undefined || apiKey === '') {
      this.callerOf(tokenHash, await this.users.findSession(tokenHash));
      throw apiKeyMissing();
    }
    const session = await this.users.findSessionAndKeyOwner(tokenHash, sha256Hex(apiKey));
    const caller = this.callerOf(tokenHash, session);
    checkApiKeyOwner(caller, session!.apiKeyOwner ?? undefined);
    const refusal = keyAddressRefusal(
      { addresses: session!.apiKeyAddresses, changedAt: null },
      from,
      this.staticIpRequired,
    );
    if (refusal !== null) throw keyAddressRefused(refusal, 'x-api-key');
    return caller;
  }

  private callerOf(tokenHash: string, session: Session | undefined): Caller {
    if (!session)
      throw new ApiError(Errors.TOKEN_INVALID, 'The access token is not valid', [
        { field: 'Authorization', message: 'unknown access token' },
      ]);
    if (session.revokedAt !== null) {
      throw tokenRevoked();
    }
    if (session.expiresAt <= this.now())
      throw new ApiError(Errors.TOKEN_EXPIRED, 'The access token has expired; log in again', [
        { field: 'Authorization', message: 'expired access token' },
      ]);
    return {
      userId: session.userId,
      category: session.category,
      member: session.member,
      tokenHash,
      expiresAt: session.expiresAt,
    };
  }

  /** Who the caller is, for a client to adapt to: the category, and whether the operator made them an operator. */
  async profile(caller: Caller): Promise<{
    userId: string;
    category: BidderCategory;
    offerCategory: UserCategory;
    marginType: MarginType;
    operator: boolean;
  }> {
    const user = await this.users.find(caller.userId);
    // The session's user row cannot go away (sessions reference it); the token is refused as unknown should it.
    if (user === undefined)
      throw new ApiError(Errors.TOKEN_INVALID, 'The access token is not valid', [
        { field: 'Authorization', message: 'unknown access token' },
      ]);
    return {
      userId: user.userId,
      category: user.category,
      offerCategory: user.offerCategory,
      marginType: user.marginType,
      operator: user.operator,
    };
  }

  async logout(caller: Caller): Promise<void> {
    await this.users.revokeSession(caller.tokenHash, this.now());
  }
}
