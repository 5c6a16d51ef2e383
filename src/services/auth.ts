/**
 * Who is calling: login (password, TOTP when enrolled or required, an API key optional or required),
 * access-token checks, API-key checks and logout. Sessions live in the database, so a token is valid on
 * every node and across restarts, and a token the operator revoked (or of a user the operator disabled) is
 * refused on every node.
 */
import { newAccessToken, OWASP_PASSWORD_HASHER, sha256Hex, verifyPassword, verifyTotp, type PasswordHasher } from '../auth/credentials.js';
import { PasswordChecks } from '../auth/password-checks.js';
import { ApiError, Errors } from '../domain/errors.js';
import type { MarginType, UserCategory } from '../domain/ofs-offer.js';
import type { BidderCategory } from '../domain/ofs-rules.js';
import type { Session } from '../domain/user.js';
import type { UserRepository } from '../store/users.js';
import { keyAddressRefusal } from '../domain/static-ip.js';
import { secondFactorRefusal } from '../domain/second-factor.js';
import { tokenExpiry } from '../domain/session-end.js';

/** SHA-256 of the bearer token, or the 401 for a missing or malformed Authorization header. */
function bearerTokenHash(authorization: string | undefined): string {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (!match) {
    throw new ApiError(Errors.TOKEN_MISSING, 'Send Authorization: Bearer <access_token>; log in at POST /authentication/v1/user/session', [
      { field: 'Authorization', message: 'missing or not a Bearer token' },
    ]);
  }
  return sha256Hex(match[1]!);
}

function apiKeyMissing(): ApiError {
  return new ApiError(Errors.API_KEY_MISSING, 'Send your API key in the x-api-key header', [{ field: 'x-api-key', message: 'missing' }]);
}

function checkApiKeyOwner(caller: Caller, owner: string | undefined): void {
  if (owner === undefined)
    throw new ApiError(Errors.API_KEY_INVALID, 'The API key is not valid', [{ field: 'x-api-key', message: 'unknown or revoked API key' }]);
  if (owner !== caller.userId) {
    throw new ApiError(Errors.API_KEY_OTHER_USER, 'The API key belongs to another user than the access token', [
      { field: 'x-api-key', message: 'belongs to another user' },
    ]);
  }
}

/** What a call with a revoked token (a logout, the operator's revocation, a disabled user) is told; so is an open stream or socket it ends. */
export function tokenRevoked(): ApiError {
  return new ApiError(Errors.TOKEN_REVOKED, 'The access token was revoked (a logout, or the operator ended the sessions of this user)', [
    { field: 'Authorization', message: 'revoked access token' },
  ]);
}

export interface Caller {
  userId: string;
  category: BidderCategory;
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
}

/** The refusal of a key sent from an address it is not registered for; `field` names where it was sent. */
function keyAddressRefused(reason: string, field: string): ApiError {
  return new ApiError(Errors.API_KEY_ADDRESS, `The API key cannot be used from this address: ${reason}`, [{ field, message: reason }]);
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
        throw new ApiError(Errors.LOGIN_API_KEY_REQUIRED, 'This server takes a login only with an active api_key of the user', [
          { field: 'api_key', message: 'required' },
        ]);
      }
      await this.checkLoginKey(credentials.user_id, apiKey, from);
    }

    const user = await this.users.find(credentials.user_id);
    // Hash even for an unknown user, at the cost of a new hash, so that response time does not tell which
    // user ids exist.
    const checkedHash = user?.passwordHash ?? this.hasher.unknownUserHash;
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
    if (user.totpSecret !== null) {
      const code = credentials.second_auth ?? '';
      if (code === '')
        throw new ApiError(Errors.SECOND_FACTOR_REQUIRED, 'This user needs a TOTP code in second_auth', [
          { field: 'second_auth', message: 'a 6-digit TOTP code is required' },
        ]);
      totpStep = verifyTotp(user.totpSecret, user.userId, code, this.now());
      if (totpStep === null) {
        throw new ApiError(Errors.SECOND_FACTOR_INVALID, 'The TOTP code is wrong or expired', [
          { field: 'second_auth', message: 'wrong or expired TOTP code' },
        ]);
      }
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
    const opened = await this.users.openSession({ tokenHash: token.hash, userId: user.userId, passwordHash, now, expiresAt }, totpStep);
    if (opened === 'totp-used') {
      throw new ApiError(Errors.SECOND_FACTOR_INVALID, 'This TOTP code was used already; log in with the next one', [
        { field: 'second_auth', message: 'TOTP code already used' },
      ]);
    }
    if (opened === 'refused') {
      // The operator disabled the user or changed the password while this login ran.
      if ((await this.users.find(user.userId))?.disabledAt != null) throw new ApiError(Errors.USER_DISABLED, 'This user is disabled; ask the operator');
      throw new ApiError(Errors.LOGIN_FAILED, 'Invalid user_id or password');
    }
    return { accessToken: token.secret, userId: user.userId, expiresAt };
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
  async authenticateWithApiKey(authorization: string | undefined, apiKey: string | undefined, from = ''): Promise<Caller> {
    const tokenHash = bearerTokenHash(authorization);
    if (apiKey === undefined || apiKey === '') {
      this.callerOf(tokenHash, await this.users.findSession(tokenHash));
      throw apiKeyMissing();
    }
    const session = await this.users.findSessionAndKeyOwner(tokenHash, sha256Hex(apiKey));
    const caller = this.callerOf(tokenHash, session);
    checkApiKeyOwner(caller, session!.apiKeyOwner ?? undefined);
    const refusal = keyAddressRefusal({ addresses: session!.apiKeyAddresses, changedAt: null }, from, this.staticIpRequired);
    if (refusal !== null) throw keyAddressRefused(refusal, 'x-api-key');
    return caller;
  }

  private callerOf(tokenHash: string, session: Session | undefined): Caller {
    if (!session) throw new ApiError(Errors.TOKEN_INVALID, 'The access token is not valid', [{ field: 'Authorization', message: 'unknown access token' }]);
    if (session.revokedAt !== null) {
      throw tokenRevoked();
    }
    if (session.expiresAt <= this.now())
      throw new ApiError(Errors.TOKEN_EXPIRED, 'The access token has expired; log in again', [{ field: 'Authorization', message: 'expired access token' }]);
    return { userId: session.userId, category: session.category, tokenHash, expiresAt: session.expiresAt };
  }

  /** Who the caller is, for a client to adapt to: the category, and whether the operator made them an operator. */
  async profile(caller: Caller): Promise<{ userId: string; category: BidderCategory; offerCategory: UserCategory; marginType: MarginType; operator: boolean }> {
    const user = await this.users.find(caller.userId);
    // The session's user row cannot go away (sessions reference it); the token is refused as unknown should it.
    if (user === undefined)
      throw new ApiError(Errors.TOKEN_INVALID, 'The access token is not valid', [{ field: 'Authorization', message: 'unknown access token' }]);
    return { userId: user.userId, category: user.category, offerCategory: user.offerCategory, marginType: user.marginType, operator: user.operator };
  }

  async logout(caller: Caller): Promise<void> {
    await this.users.revokeSession(caller.tokenHash, this.now());
  }
}
