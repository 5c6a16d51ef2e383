/**
 * The algo registry and the kill switch (SEBI's rules for API and algo orders; docs/design/sebi-algo.md):
 * the operator registers the algos an exchange approved (their IDs, for the users who run them), and stops
 * one at once: its ID is refused on new orders and modifications from the stop's commit on (on every node:
 * order entry reads the algo's row in each commit), and every live order carrying it that can still be
 * cancelled is cancelled, under the rules its owner's cancellation keeps. Every registration, stop and
 * start is recorded with who did it, why, and what the stop cancelled.
 */
import { ApiError } from '../domain/errors.js';
import {
  killSwitchReason,
  KILL_SWITCH_ACTOR,
  reasonViolations,
  registrationViolations,
  type AlgoRegistration,
  type AlgoSegment,
  type GenericAlgoIds,
} from '../domain/orders/algo-rules.js';
import type { AlgoChange, AlgoRepository } from '../store/orders/algos.js';
import type { Store } from '../store/sql/database.js';
import type { UserRepository } from '../store/access/users.js';
import { AdminError } from '../domain/errors.js';
import type { OrderEntryService } from './order-entry.js';

/** What the operator registers. */
export interface AlgoRegistrationRequest {
  algoId: string;
  exchange: string;
  approvalRef: string;
  name: string | null;
  userIds: readonly string[];
}

/** An order the kill switch could not cancel, and why (the refusal its owner's cancellation would get). */
export interface UncancelledOrder {
  orderId: string;
  userId: string;
  code: string;
  message: string;
}

/** What a stop did: the orders cancelled (their cancellation is queued for the exchange) and those left. */
export interface KillSwitchResult {
  registration: AlgoRegistration;
  /** False when the algo was already stopped: the live orders were swept again. */
  stoppedNow: boolean;
  cancelled: string[];
  notCancelled: UncancelledOrder[];
}

export class AlgoService {
  constructor(
    private readonly store: Pick<Store, 'writeTransaction'>,
    private readonly algos: AlgoRepository,
    private readonly users: Pick<UserRepository, 'find'>,
    private readonly orderEntry: Pick<OrderEntryService, 'cancelOnBehalf'>,
    private readonly now: () => number,
    private readonly genericIds: GenericAlgoIds | null,
  ) {}

  /**
   * Registers an algo the exchange approved, for these users; again for an algo already registered (same
   * exchange and approval), adds the users not yet named.
   */
  async register(
    request: AlgoRegistrationRequest,
    actor: string,
  ): Promise<{ registration: AlgoRegistration; created: boolean; added: string[] }> {
    const faults = registrationViolations(request, this.genericIds);
    if (faults.length > 0) throw new AdminError(faults.join('; '));
    for (const userId of new Set(request.userIds))
      if ((await this.users.find(userId)) === undefined) throw new AdminError(`no user ${userId}`);
    const userIds = [...new Set(request.userIds)];
    const at = this.now();
    const outcome = await this.store.writeTransaction(async (tx) => {
      const existing = await this.algos.lockForChange(tx, request.algoId);
      if (existing === undefined) {
        await this.algos.insert(tx, { ...request, exchange: request.exchange as AlgoSegment, registeredAt: at });
        await this.algos.addUsers(tx, request.algoId, userIds, at);
        const detail = `exchange ${request.exchange}, approval ${request.approvalRef}${request.name === null ? '' : `, name ${request.name}`}, users ${userIds.join(',')}`;
        await this.algos.recordChange(tx, request.algoId, { at, action: 'register', actor, reason: null, detail });
        return { created: true, added: userIds };
      }
      if (existing.exchange !== request.exchange || existing.approvalRef !== request.approvalRef) {
        throw new AdminError(
          `algo ${request.algoId} is registered on ${existing.exchange} with approval ${existing.approvalRef}; register it again with those to add users`,
        );
      }
      const added = userIds.filter((userId) => !existing.userIds.includes(userId));
      await this.algos.addUsers(tx, request.algoId, added, at);
      if (added.length > 0)
        await this.algos.recordChange(tx, request.algoId, {
          at,
          action: 'add-users',
          actor,
          reason: null,
          detail: `users ${added.join(',')}`,
        });
      return { created: false, added };
    });
    return { registration: (await this.algos.find(request.algoId))!, ...outcome };
  }

  async list(): Promise<AlgoRegistration[]> {
    return this.algos.list();
  }

  /** The algo and its registrations, stops and starts, oldest first. */
  async history(algoId: string): Promise<{ registration: AlgoRegistration; changes: AlgoChange[] }> {
    return { registration: await this.existing(algoId), changes: await this.algos.changes(algoId) };
  }

  /**
   * The kill switch: stops the algo (committed first, so that from then on no node takes an order with it),
   * then asks the OMS to cancel each of its live orders on its owner's behalf. An order that can no longer
   * be cancelled (its window closed, a 0 %-margin bid, a cancellation under way) is reported, not forced.
   * Stopping a stopped algo sweeps its live orders again.
   */
  async disable(algoId: string, reason: string, actor: string): Promise<KillSwitchResult> {
    const faults = reasonViolations(reason);
    if (faults.length > 0) throw new AdminError(faults.join('; '));
    const at = this.now();
    const stoppedNow = await this.store.writeTransaction(async (tx) => {
      const registration = await this.algos.lockForChange(tx, algoId);
      if (registration === undefined) throw new AdminError(`no algo ${algoId}`);
      if (registration.disabledAt !== null) return false;
      await this.algos.setDisabled(tx, algoId, at, reason);
      await this.algos.recordChange(tx, algoId, {
        at,
        action: 'disable',
        actor,
        reason,
        detail: 'stopped: new orders and modifications with it are refused',
      });
      return true;
    });
    const cancelled: string[] = [];
    const notCancelled: UncancelledOrder[] = [];
    const onBehalf = { actor: KILL_SWITCH_ACTOR, reason: killSwitchReason(algoId, reason) };
    // All at once: order entry's group commit takes them in a few transactions, not one each.
    const outcomes = await Promise.all(
      (await this.algos.liveOrders(algoId)).map(async (order) => {
        try {
          await this.orderEntry.cancelOnBehalf(
            { userId: order.userId, category: order.category },
            order.exchange,
            order.orderId,
            onBehalf,
          );
          return { order, refusal: null };
        } catch (error) {
          if (!(error instanceof ApiError) || error.kind.status >= 500) throw error;
          return { order, refusal: error };
        }
      }),
    );
    for (const { order, refusal } of outcomes) {
      if (refusal === null) cancelled.push(order.orderId);
      else
        notCancelled.push({
          orderId: order.orderId,
          userId: order.userId,
          code: refusal.kind.code,
          message: refusal.message,
        });
    }
    const detail = [
      `cancelled ${cancelled.length}${cancelled.length === 0 ? '' : `: ${cancelled.join(',')}`}`,
      `not cancelled ${notCancelled.length}${notCancelled.length === 0 ? '' : `: ${notCancelled.map((o) => `${o.orderId} (${o.code})`).join(',')}`}`,
    ].join('; ');
    await this.store.writeTransaction((tx) =>
      this.algos.recordChange(tx, algoId, { at: this.now(), action: 'cancel-orders', actor, reason, detail }),
    );
    return { registration: await this.existing(algoId), stoppedNow, cancelled, notCancelled };
  }

  /** Starts a stopped algo again: its orders are taken from the commit on. */
  async enable(algoId: string, reason: string, actor: string): Promise<AlgoRegistration> {
    const faults = reasonViolations(reason);
    if (faults.length > 0) throw new AdminError(faults.join('; '));
    await this.store.writeTransaction(async (tx) => {
      const registration = await this.algos.lockForChange(tx, algoId);
      if (registration === undefined) throw new AdminError(`no algo ${algoId}`);
      if (registration.disabledAt === null) throw new AdminError(`algo ${algoId} is not stopped`);
      await this.algos.setDisabled(tx, algoId, null, null);
      await this.algos.recordChange(tx, algoId, {
        at: this.now(),
        action: 'enable',
        actor,
        reason,
        detail: 'started again: its orders are taken',
      });
    });
    return this.existing(algoId);
  }

  private async existing(algoId: string): Promise<AlgoRegistration> {
    const registration = await this.algos.find(algoId);
    if (registration === undefined) throw new AdminError(`no algo ${algoId}`);
    return registration;
  }
}
