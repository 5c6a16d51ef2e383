/**
 * The credentials of order entry's requests, as read within the last second: a request whose change is
 * checked again in its own transaction (order entry's batches, OrderEntryService) takes its session and
 * API key from here instead of a read of its own. What this gives up is nothing durable: the batch reads
 * the same rows again in the transaction that would write the order and refuses the command with the
 * answer the request would have had (AuthService.confirmAtCommit), so no order is accepted on a session
 * revoked, expired or of a disabled user, or with a key revoked or used from an address no longer
 * registered, once that change has committed. Until the entry is a second old, such a request only gets as
 * far as the batch (its rate-limit slot, its validation); the logout's own node forgets the token at once.
 *
 * Bounded: at most `maxEntries` tokens, the oldest forgotten first. Only credentials that passed every
 * check are kept; a refusal is never cached, so a guessed token costs a read as before.
 */
import type { SessionWithKeyOwner } from '../store/users.js';

/** How long credentials read for one request serve the next ones of the same token and key. */
export const RECENT_CREDENTIALS_MS = 1_000;
/** Tokens kept at most (about 200 bytes each). */
export const RECENT_CREDENTIALS_MAX = 10_000;

interface Entry {
  keyHash: string;
  credentials: SessionWithKeyOwner;
  readAt: number;
}

export class RecentCredentials {
  private readonly entries = new Map<string, Entry>();

  /** `clock`: a monotonic clock in milliseconds (not the business clock, which tests may stop). */
  constructor(
    private readonly maxAgeMs: number = RECENT_CREDENTIALS_MS,
    private readonly maxEntries: number = RECENT_CREDENTIALS_MAX,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The credentials of the token with this key, read less than `maxAgeMs` ago; undefined otherwise. */
  get(tokenHash: string, keyHash: string): SessionWithKeyOwner | undefined {
    const entry = this.entries.get(tokenHash);
    if (entry === undefined || entry.keyHash !== keyHash) return undefined;
    if (this.clock() - entry.readAt >= this.maxAgeMs) {
      this.entries.delete(tokenHash);
      return undefined;
    }
    return entry.credentials;
  }

  /** Keeps credentials just read (and passed); a token holds one key's at a time. */
  set(tokenHash: string, keyHash: string, credentials: SessionWithKeyOwner): void {
    this.entries.delete(tokenHash);
    if (this.entries.size >= this.maxEntries) {
      // A Map iterates in insertion order, and every set re-inserts: the first key is the oldest.
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(tokenHash, { keyHash, credentials, readAt: this.clock() });
  }

  /** Forgets the token (its logout, or a refusal at commit). */
  forget(tokenHash: string): void {
    this.entries.delete(tokenHash);
  }

  get size(): number {
    return this.entries.size;
  }
}
