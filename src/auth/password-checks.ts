/**
 * Password checks take turns. A scrypt hash holds one of libuv's four threads (shared with file, DNS and
 * other crypto work) and 32 MiB for its whole run, so a login flood must not start them all at once: at
 * most PASSWORD_CHECKS_AT_ONCE run, PASSWORD_CHECKS_WAITING more wait their turn (first come, first
 * served), and a check beyond those is refused with 503 at once rather than queued without bound. While
 * the checks are busy (half the waiting places taken), one client address holds at most
 * PASSWORD_CHECKS_PER_ADDRESS places (running or waiting) and one more from it is refused with 429, so
 * that a few addresses flooding logins cannot take every place and keep everyone else's logins out; the
 * other half stays for the addresses below their share. When the checks are not busy, an address (an
 * office behind one NAT, a proxy without TRUST_PROXY) may hold more.
 */
import { ApiError, Errors } from '../domain/errors.js';

export const PASSWORD_CHECKS_AT_ONCE = 2;
export const PASSWORD_CHECKS_WAITING = 16;
export const PASSWORD_CHECKS_PER_ADDRESS = 2;

export class PasswordChecks {
  private running = 0;
  private readonly waiting: (() => void)[] = [];
  /** The places each client address holds, running or waiting. */
  private readonly held = new Map<string, number>();

  constructor(
    private readonly atOnce: number = PASSWORD_CHECKS_AT_ONCE,
    private readonly maxWaiting: number = PASSWORD_CHECKS_WAITING,
    private readonly perAddress: number = PASSWORD_CHECKS_PER_ADDRESS,
  ) {}

  /**
   * Runs `check` in its turn; throws the 503 (e-503, Retry-After: 1) when every place is taken, and the
   * 429 (e-429, Retry-After: 1) when the checks are busy and `address` already holds its share of them.
   */
  async run<T>(check: () => Promise<T>, address?: string): Promise<T> {
    if (address === undefined) return this.inTurn(check);
    const held = this.held.get(address) ?? 0;
    if (held >= this.perAddress && this.waiting.length >= this.maxWaiting / 2) {
      throw new ApiError(
        Errors.RATE_LIMITED,
        `Too many logins at once from this address (at most ${this.perAddress} checked at a time); retry after 1 s`,
        [],
        {
          'Retry-After': '1',
        },
      );
    }
    this.held.set(address, held + 1);
    try {
      return await this.inTurn(check);
    } finally {
      const left = (this.held.get(address) ?? 1) - 1;
      if (left === 0) this.held.delete(address);
      else this.held.set(address, left);
    }
  }

  private async inTurn<T>(check: () => Promise<T>): Promise<T> {
    if (this.running >= this.atOnce) {
      if (this.waiting.length >= this.maxWaiting) {
        throw new ApiError(Errors.UNAVAILABLE, 'Too many logins at once on this server; retry after 1 s', [], {
          'Retry-After': '1',
        });
      }
      await new Promise<void>((turn) => this.waiting.push(turn));
    } else {
      this.running += 1;
    }
    try {
      return await check();
    } finally {
      // The turn passes straight to the next waiting check: `running` stays as it is.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }

  /** Runs `check` only if a place is free now, without waiting; null when none is. */
  async runIfFree<T>(check: () => Promise<T>): Promise<T | null> {
    if (this.running >= this.atOnce) return null;
    return this.inTurn(check);
  }
}
