/**
 * Who is calling: login (password, optional TOTP, optional API key), access-token checks, API-key checks
 * and logout. Sessions live in the database, so a token is valid on every node and across restarts.
 */
import {
  newAccessToken,
  sha256Hex,
  UNKNOWN_USER_PASSWORD_HASH,
  verifyPassword,
  verifyTotp,
} from '../auth/credentials.js';
import { ApiError, Errors } from '../domain/errors.js';
import type { BidderCategory } from '../domain/ofs-rules.js';
import type { Session } from '../domain/user.js';
import type { UserRepository } from '../store/users.js';

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
  if (owner === undefined) throw new ApiError(Errors.API_KEY_INVALID, 'The API key is not valid', [{ field: 'x-api-key', message: 'unknown or revoked API key' }]);
  if (owner !== caller.userId) {
    throw new ApiError(Errors.API_KEY_OTHER_USER, 'The API key belongs to another user than the access token', [{ field: 'x-api-key', message: 'belongs to another user' }]);
  }
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

export class AuthService {
  constructor(
    private readonly users: UserRepository,
    private readonly tokenTtlMs: number,
    private readonly now: () => number,
  ) {}

  async login(credentials: LoginCredentials): Promise<LoginResult> {
    const user = await this.users.find(credentials.user_id);
    // Hash even for an unknown user, so that response time does not tell which user ids exist.
    const passwordOk = await verifyPassword(credentials.password, user?.passwordHash ?? UNKNOWN_USER_PASSWORD_HASH);
    if (!user || !passwordOk) throw new ApiError(Errors.LOGIN_FAILED, 'Invalid user_id or password');

    let totpStep: number | null = null;
    if (user.totpSecret !== null) {
      const code = credentials.second_auth ?? '';
      if (code === '') throw new ApiError(Errors.SECOND_FACTOR_REQUIRED, 'This user needs a TOTP code in second_auth', [{ field: 'second_auth', message: 'a 6-digit TOTP code is required' }]);
      totpStep = verifyTotp(user.totpSecret, user.userId, code, this.now());
      if (totpStep === null) {
        throw new ApiError(Errors.SECOND_FACTOR_INVALID, 'The TOTP code is wrong or expired', [{ field: 'second_auth', message: 'wrong or expired TOTP code' }]);
      }
    }

    const apiKey = credentials.api_key ?? '';
    if (apiKey !== '' && (await this.users.apiKeyOwner(sha256Hex(apiKey))) !== user.userId) {
      throw new ApiError(Errors.LOGIN_API_KEY_INVALID, 'The api_key is not an active key of this user', [{ field: 'api_key', message: 'not an active key of this user' }]);
    }

    // A code works once, and is spent only by a login that passes every other check: a replayed (phished)
    // code is refused, and a login refused for its api_key leaves the code to the corrected retry.
    if (totpStep !== null && !(await this.users.acceptTotpStep(user.userId, totpStep))) {
      throw new ApiError(Errors.SECOND_FACTOR_INVALID, 'This TOTP code was used already; log in with the next one', [{ field: 'second_auth', message: 'TOTP code already used' }]);
    }

    const token = newAccessToken();
    const now = this.now();
    const expiresAt = now + this.tokenTtlMs;
    await this.users.createSession({ tokenHash: token.hash, userId: user.userId, now, expiresAt });
    return { accessToken: token.secret, userId: user.userId, expiresAt };
  }

  /** The caller behind an Authorization header value, or the 401 that explains why not. */
  async authenticate(authorization: string | undefined): Promise<Caller> {
    const tokenHash = bearerTokenHash(authorization);
    return this.callerOf(tokenHash, await this.users.findSession(tokenHash));
  }

  /**
   * The caller behind the bearer token, whose x-api-key must be an active key of the same user (seed 5):
   * token faults first, then key faults, in one read, since every order-entry call pays for this.
   */
  async authenticateWithApiKey(authorization: string | undefined, apiKey: string | undefined): Promise<Caller> {
    const tokenHash = bearerTokenHash(authorization);
    if (apiKey === undefined || apiKey === '') {
      this.callerOf(tokenHash, await this.users.findSession(tokenHash));
      throw apiKeyMissing();
    }
    const session = await this.users.findSessionAndKeyOwner(tokenHash, sha256Hex(apiKey));
    const caller = this.callerOf(tokenHash, session);
    checkApiKeyOwner(caller, session!.apiKeyOwner ?? undefined);
    return caller;
  }

  private callerOf(tokenHash: string, session: Session | undefined): Caller {
    if (!session) throw new ApiError(Errors.TOKEN_INVALID, 'The access token is not valid', [{ field: 'Authorization', message: 'unknown access token' }]);
    if (session.revokedAt !== null) throw new ApiError(Errors.TOKEN_REVOKED, 'The access token was revoked by a logout', [{ field: 'Authorization', message: 'revoked access token' }]);
    if (session.expiresAt <= this.now()) throw new ApiError(Errors.TOKEN_EXPIRED, 'The access token has expired; log in again', [{ field: 'Authorization', message: 'expired access token' }]);
    return { userId: session.userId, category: session.category, tokenHash, expiresAt: session.expiresAt };
  }

  async logout(caller: Caller): Promise<void> {
    await this.users.revokeSession(caller.tokenHash, this.now());
  }
}
