/**
 * The exchange simulator's API users and their sessions, in memory: a login with a configured API user's
 * member code, login id and password answers a token; one session per API user and exchange (a new login
 * ends the earlier token, as a refresh does); a token lives `tokenTtlSeconds` on the simulator's clock.
 * Passwords are compared by their digests in constant time and never logged or echoed.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** An API user as the member portal enables it (mapping.ts's NseCredentials). */
export interface ApiUser {
  memberCode: string;
  loginId: string;
  password: string;
}

/** Who holds a live token. */
export interface SessionHolder {
  exchange: string;
  memberCode: string;
  loginId: string;
}

interface Session extends SessionHolder {
  token: string;
  expiresAt: number;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

/** The problem with a list of API users (none, a blank field, one named twice), or null. */
export function apiUsersProblem(users: readonly ApiUser[]): string | null {
  if (users.length === 0) return 'no API user is configured';
  const seen = new Set<string>();
  for (const [i, user] of users.entries()) {
    for (const field of ['memberCode', 'loginId', 'password'] as const) {
      if (typeof user[field] !== 'string' || user[field] === '')
        return `API user ${i + 1}: ${field} must be a non-empty string`;
    }
    const key = `${user.memberCode}\u0000${user.loginId}`;
    if (seen.has(key)) return `API user ${i + 1}: ${user.memberCode}/${user.loginId} is listed twice`;
    seen.add(key);
  }
  return null;
}

export class SessionBook {
  private readonly users: { memberCode: string; loginId: string; passwordDigest: Buffer }[];
  private readonly byToken = new Map<string, Session>();
  /** The live token of each API user on each exchange. */
  private readonly byHolder = new Map<string, string>();

  constructor(
    users: readonly ApiUser[],
    private readonly now: () => number,
    private readonly ttlMs: number,
  ) {
    this.users = users.map((user) => ({
      memberCode: user.memberCode,
      loginId: user.loginId,
      passwordDigest: digest(user.password),
    }));
  }

  /** A new session for these credentials (ending the API user's earlier one on that exchange), or null. */
  login(exchange: string, memberCode: string, loginId: string, password: string): Session | null {
    const given = digest(password);
    // Every user's digest is compared, whether or not the names match, so that the time says nothing.
    let found: (typeof this.users)[number] | undefined;
    for (const user of this.users) {
      const same = timingSafeEqual(user.passwordDigest, given);
      if (same && user.memberCode === memberCode && user.loginId === loginId) found = user;
    }
    if (found === undefined) return null;
    return this.open({ exchange, memberCode: found.memberCode, loginId: found.loginId });
  }

  /** The live session of a token, or null (unknown, ended or expired). */
  holder(token: string): Session | null {
    const session = this.byToken.get(token);
    if (session === undefined) return null;
    if (session.expiresAt <= this.now()) {
      this.end(session);
      return null;
    }
    return session;
  }

  /** A fresh token for a live one; the old one ends. */
  refresh(token: string): Session | null {
    const session = this.holder(token);
    return session === null ? null : this.open(session);
  }

  /** Ends every session (the fault hook `expireTokens`). */
  endAll(): void {
    this.byToken.clear();
    this.byHolder.clear();
  }

  get ttlSeconds(): number {
    return this.ttlMs / 1000;
  }

  private open(holder: SessionHolder): Session {
    const key = holderKey(holder);
    const earlier = this.byHolder.get(key);
    if (earlier !== undefined) this.byToken.delete(earlier);
    const session: Session = {
      exchange: holder.exchange,
      memberCode: holder.memberCode,
      loginId: holder.loginId,
      token: randomBytes(32).toString('base64url'),
      expiresAt: this.now() + this.ttlMs,
    };
    this.byToken.set(session.token, session);
    this.byHolder.set(key, session.token);
    return session;
  }

  private end(session: Session): void {
    this.byToken.delete(session.token);
    const key = holderKey(session);
    if (this.byHolder.get(key) === session.token) this.byHolder.delete(key);
  }
}

const holderKey = (holder: SessionHolder) => `${holder.exchange}\u0000${holder.memberCode}\u0000${holder.loginId}`;
