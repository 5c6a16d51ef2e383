/**
 * Idempotency keys of order-entry calls: claim a key for a request, or answer what the key already says
 * (replay the kept answer, 422 for another request, 409 while it runs); then keep the request's answer or
 * free the key. A change that can write its answer in its own transaction does so (AnswerInTransaction),
 * so that no crash can leave the change committed and the key without its answer.
 */
import { randomUUID } from 'node:crypto';
import { ApiError, Errors, DatabaseUnavailableError } from '../domain/errors.js';
import {
  decideOnHeldKey,
  isKeptStatus,
  LEASE_MS,
  REPLAY_WINDOW_MS,
  requestFingerprint,
  type KeyedRequest,
} from '../domain/orders/idempotency.js';
import type {
  ClaimedKey,
  IdempotencyKeyRepository,
  KeptAnswer,
  KeyClaim,
  NewKeyClaim,
} from '../store/orders/idempotency.js';
import type { StoreTx } from '../store/sql/write-tx.js';

export type { ClaimedKey, KeptAnswer, KeyClaim } from '../store/orders/idempotency.js';

export type KeyOutcome = { kind: 'claimed'; claim: ClaimedKey } | { kind: 'replay'; answer: KeptAnswer };

/** The answer of a change, written in the change's own transaction. */
export interface AnswerInTransaction<T> {
  /** Before anything is written: refuses (409 e-116) if the request no longer holds its key. */
  confirmHeld(tx: StoreTx): Promise<void>;
  /** Once the change is written, in the same transaction: keeps its answer. */
  keep(tx: StoreTx, result: T): Promise<void>;
}

/**
 * The steps of a request that makes several changes, each in its own transaction (a cart execution: one
 * order per line), kept one by one under its key, so that a run of the same request after a crash (the
 * key taken over once its lease ran out) or after an answer that freed the key (a 5xx) does not make a
 * change twice: it takes each kept step's result instead. Every write first confirms that the request
 * still holds its key (409 e-116 if not). Steps are kept as JSON; they expire and are purged with the key.
 */
export interface KeptSteps {
  /**
   * The steps that runs of this request kept within its 24 hours, by name; `seeds` are kept first, each
   * unless kept already (the cart's lines as the first run read them, say).
   */
  recall(seeds?: Record<string, unknown>): Promise<Map<string, unknown>>;
  /** A step whose change is written in a transaction of its own (order entry): its result kept with it. */
  inTransaction<T>(step: string, value: (result: T) => unknown): AnswerInTransaction<T>;
  /** Keeps a step that wrote nothing (a refused line). */
  keep(step: string, value: unknown): Promise<void>;
  /** Runs `change` in a transaction that keeps `step`, unless a run of the request has kept it already. */
  once(step: string, change: (tx: StoreTx) => Promise<unknown>): Promise<void>;
}

export interface IdempotencyOptions {
  /** How often a running request renews its lease (real time); a third of the lease by default. */
  renewEveryMs?: number;
  /** How often (by the service's clock) keys past their 24 hours are deleted; every minute by default. */
  purgeEveryMs?: number;
  /** How often an answer that could not be kept (or a key not freed) during an outage is retried; 1 s. */
  settleRetryMs?: number;
}

/** A claim that keeps failing because other requests keep changing the key (in practice never). */
const MAX_CLAIM_ATTEMPTS = 10;
/** How a claim whose write's answer was lost is settled: as a refused request's, the key freed. */
const LOST_CLAIM: KeptAnswer = { statusCode: 503, body: '', headers: {} };

function stillRunning(): ApiError {
  return new ApiError(
    Errors.IDEMPOTENCY_KEY_RUNNING,
    'A request with this Idempotency-Key is still running; retry in a moment to get its answer',
    [{ field: 'Idempotency-Key', message: 'is held by a request that is still running' }],
    { 'Retry-After': '1' },
  );
}

export class IdempotencyService {
  private readonly renewEveryMs: number;
  private readonly purgeEveryMs: number;
  /** The lease renewals of the claims this process holds, by owner. */
  private readonly renewals = new Map<string, NodeJS.Timeout>();
  private lastPurge = Number.NEGATIVE_INFINITY;
  /** Answers not kept, or keys not freed, because the database was out: retried every second until done. */
  private readonly unsettled = new Map<string, { claim: KeyClaim; answer: KeptAnswer }>();
  private settling: NodeJS.Timeout | undefined;
  /** How often an unsettled answer is retried (ms). */
  private readonly settleRetryMs: number;

  constructor(
    private readonly keys: IdempotencyKeyRepository,
    private readonly now: () => number,
    options: IdempotencyOptions = {},
  ) {
    this.renewEveryMs = options.renewEveryMs ?? LEASE_MS / 3;
    this.purgeEveryMs = options.purgeEveryMs ?? 60_000;
    this.settleRetryMs = options.settleRetryMs ?? 1_000;
  }

  /**
   * Claims `key` of `userId` for the request, or answers what the key already holds. A claim's lease is
   * renewed while its request runs, until finish(): only a request whose node died loses its key.
   */
  async claim(userId: string, key: string, request: KeyedRequest): Promise<KeyOutcome> {
    this.purgeIfDue();
    const claim: NewKeyClaim = {
      userId,
      key,
      owner: randomUUID(),
      method: request.method,
      path: request.path,
      fingerprint: requestFingerprint(request),
    };
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
      const now = this.now();
      if (await this.claimWrite(claim, () => this.keys.insertRunning(claim, now, now + LEASE_MS)))
        return this.claimed({ ...claim, claimedAt: now });
      const held = await this.keys.find(userId, key);
      // Freed since the insert failed: try again.
      if (held === undefined) continue;
      const decision = decideOnHeldKey(held, claim.fingerprint, now);
      switch (decision.action) {
        case 'take-over':
          if (await this.claimWrite(claim, () => this.keys.takeOver(claim, held, now, now + LEASE_MS)))
            return this.claimed({ ...claim, claimedAt: now });
          continue;
        case 'replay':
          return {
            kind: 'replay',
            answer: { statusCode: held.statusCode!, body: held.responseBody!, headers: held.responseHeaders },
          };
        case 'reused':
          throw new ApiError(
            Errors.IDEMPOTENCY_KEY_REUSED,
            `This Idempotency-Key was used within the last 24 hours for another request (first for ${held.method} ${held.path}); use a new key for a new request`,
            [{ field: 'Idempotency-Key', message: 'was used for another request' }],
          );
        case 'running':
          // Held by an earlier request of this node that could not settle its key (the database was out: its
          // answer not kept, or its claim committed with the answer of the write lost): settle it now, so
          // that the retry runs (or replays) instead of waiting for the lease.
          if (await this.settleHeldHere(userId, key)) continue;
          throw stillRunning();
      }
    }
    throw stillRunning();
  }

  /**
   * Runs a claim's write. When the database goes away during it, the write may have been committed and its
   * answer lost: the claim is settled later like any request that could not settle its key (freed once the
   * database answers, at once by a retry on this node), not left held until its lease runs out.
   */
  private async claimWrite(claim: KeyClaim, write: () => Promise<boolean>): Promise<boolean> {
    try {
      return await write();
    } catch (error) {
      if (error instanceof DatabaseUnavailableError) this.settleLater(claim, LOST_CLAIM);
      throw error;
    }
  }

  /** Settles this node's unsettled claim of the key, if it has one; answers whether it did. */
  private async settleHeldHere(userId: string, key: string): Promise<boolean> {
    for (const [owner, { claim, answer }] of this.unsettled) {
      if (claim.userId !== userId || claim.key !== key) continue;
      await this.settle(claim, answer);
      this.unsettled.delete(owner);
      return true;
    }
    return false;
  }

  /** Keeps the request's answer if it is one to keep (200, 422); else frees the key so that a retry runs again. */
  async finish(claim: KeyClaim, answer: KeptAnswer): Promise<void> {
    this.stopRenewing(claim);
    try {
      await this.settle(claim, answer);
    } catch (error) {
      // The database is out (the answer is most likely a 503): without this, a retry once it is back would
      // get 409 until the lease ran out, instead of running again.
      if (error instanceof DatabaseUnavailableError) this.settleLater(claim, answer);
      throw error;
    }
  }

  /** Whether answers wait to be kept or keys to be freed (the database was out). */
  get unsettledCount(): number {
    return this.unsettled.size;
  }

  private async settle(claim: KeyClaim, answer: KeptAnswer): Promise<void> {
    if (isKeptStatus(answer.statusCode)) await this.keys.keepAnswer(claim, answer);
    else await this.keys.release(claim);
  }

  private settleLater(claim: KeyClaim, answer: KeptAnswer): void {
    this.unsettled.set(claim.owner, { claim, answer });
    if (this.settling !== undefined) return;
    const retry = async () => {
      for (const [owner, { claim: held, answer: kept }] of this.unsettled) {
        try {
          await this.settle(held, kept);
          this.unsettled.delete(owner);
        } catch (error) {
          if (!(error instanceof DatabaseUnavailableError)) this.unsettled.delete(owner);
        }
      }
      this.settling =
        this.unsettled.size === 0 ? undefined : setTimeout(() => void retry(), this.settleRetryMs).unref();
    };
    // retry catches each settle's failure itself: it never rejects.
    this.settling = setTimeout(() => void retry(), this.settleRetryMs).unref();
  }

  /** The claim's request has ended: its lease is no longer renewed (finish() does this too). */
  stopRenewing(claim: KeyClaim): void {
    clearInterval(this.renewals.get(claim.owner));
    this.renewals.delete(claim.owner);
  }

  /** The claim's answer, written in the transaction of the change: `answer` gives it from the change's result. */
  answerInTransaction<T>(claim: KeyClaim, answer: (result: T) => KeptAnswer): AnswerInTransaction<T> {
    return {
      confirmHeld: async (tx) => {
        if (!(await this.keys.isHeld(tx, claim))) throw stillRunning();
      },
      keep: async (tx, result) => {
        if (!(await this.keys.keepAnswer(claim, answer(result), tx)))
          throw new Error('the idempotency key was taken over inside its own transaction');
      },
    };
  }

  /** The kept steps of the claim's request (see KeptSteps). */
  keptSteps(claim: ClaimedKey): KeptSteps {
    const confirmHeld = async (tx: StoreTx) => {
      if (!(await this.keys.isHeld(tx, claim))) throw stillRunning();
    };
    return {
      recall: async (seeds = {}) => {
        const json = Object.fromEntries(Object.entries(seeds).map(([step, value]) => [step, JSON.stringify(value)]));
        const kept = await this.keys.inTransaction(async (tx) => {
          await confirmHeld(tx);
          return this.keys.adoptSteps(tx, claim, this.now(), REPLAY_WINDOW_MS, json);
        });
        return new Map([...kept].map(([step, value]) => [step, JSON.parse(value) as unknown]));
      },
      inTransaction: <T>(step: string, value: (result: T) => unknown): AnswerInTransaction<T> => ({
        confirmHeld,
        keep: async (tx, result) => {
          if (!(await this.keys.insertStep(tx, claim, step, JSON.stringify(value(result)))))
            throw new Error(`the step ${step} was kept twice`);
        },
      }),
      keep: async (step, value) => {
        await this.keys.inTransaction(async (tx) => {
          await confirmHeld(tx);
          await this.keys.insertStep(tx, claim, step, JSON.stringify(value));
        });
      },
      once: async (step, change) => {
        await this.keys.inTransaction(async (tx) => {
          await confirmHeld(tx);
          if (await this.keys.insertStep(tx, claim, step, 'true')) await change(tx);
        });
      },
    };
  }

  private claimed(claim: ClaimedKey): KeyOutcome {
    const renewal = setInterval(() => {
      this.keys.renewLease(claim, this.now() + LEASE_MS).catch(() => undefined);
    }, this.renewEveryMs);
    // A lease renewal never keeps the process alive.
    renewal.unref();
    this.renewals.set(claim.owner, renewal);
    return { kind: 'claimed', claim };
  }

  /** Deletes the keys past their 24 hours, at most once per purgeEveryMs, beside the claim that called it. */
  private purgeIfDue(): void {
    const now = this.now();
    if (now >= this.lastPurge && now - this.lastPurge < this.purgeEveryMs) return;
    this.lastPurge = now;
    // Housekeeping only: a failure (the database is away) is retried at the next due claim.
    this.keys.purgeClaimedBefore(now - REPLAY_WINDOW_MS).catch(() => undefined);
  }
}
