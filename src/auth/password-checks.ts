/**
 * Password checks take turns. A scrypt hash holds one of libuv's four threads (shared with file, DNS and
 * other crypto work) and 32 MiB for its whole run, so a login flood must not start them all at once: at
 * most PASSWORD_CHECKS_AT_ONCE run, PASSWORD_CHECKS_WAITING more wait their turn (first come, first
 * served), and a check beyond those is refused with 503 at once rather than queued without bound.
 */
import { ApiError, Errors } from '../domain/errors.js';

export const PASSWORD_CHECKS_AT_ONCE = 2;
export const PASSWORD_CHECKS_WAITING = 16;

export class PasswordChecks {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(
    private readonly atOnce: number = PASSWORD_CHECKS_AT_ONCE,
    private readonly maxWaiting: number = PASSWORD_CHECKS_WAITING,
  ) {}

  /** Runs `check` in its turn; throws the 503 (e-503, Retry-After: 1) when every place is taken. */
  async run<T>(check: () => Promise<T>): Promise<T> {
    if (this.running >= this.atOnce) {
      if (this.waiting.length >= this.maxWaiting) {
        throw new ApiError(Errors.UNAVAILABLE, 'Too many logins at once on this server; retry after 1 s', [], { 'Retry-After': '1' });
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
    return this.run(check);
  }
}
