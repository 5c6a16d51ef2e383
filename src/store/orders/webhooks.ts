/**
 * The store of webhooks and their deliveries. A delivery row is written for every (active webhook of the
 * order's owner, order event) in the transaction that writes the event (see OrderRepository), so an event
 * is never committed without its deliveries. The dispatcher then claims due deliveries under a lease, as
 * the OMS claims its outbox: several processes may deliver at once, never the same delivery twice at once.
 */
import type { ExpressionBuilder, Kysely, Selectable } from 'kysely';
import {
  DeliveryStatus,
  type DueDelivery,
  type ListedDelivery,
  type Webhook,
  type WebhookSummary,
} from '../../domain/orders/webhooks.js';
import type { Database, WebhookDeliveriesTable, WebhooksTable } from '../schema/tables.js';

type WebhookRow = Selectable<WebhooksTable>;
type DeliveryRow = Selectable<WebhookDeliveriesTable>;

const numberOrNull = (value: number | string | null) => (value === null ? null : Number(value));

/** The webhook a row holds. Integer columns come back from PostgreSQL as strings (int8). */
function webhookFromRow(row: WebhookRow): Webhook {
  return {
    webhookId: row.webhook_id,
    userId: row.user_id,
    url: row.url,
    secret: row.secret,
    createdAt: Number(row.created_at),
    removedAt: numberOrNull(row.removed_at),
  };
}

/** The delivery a row holds, with its webhook's owner and URL; the status is only ever written from DeliveryStatus. */
function listedDeliveryFromRow(row: DeliveryRow & { user_id: string; url: string }): ListedDelivery {
  return {
    id: Number(row.id),
    webhookId: row.webhook_id,
    eventId: Number(row.event_id),
    status: row.status as DeliveryStatus,
    attempts: Number(row.attempts),
    nextAttemptAt: Number(row.next_attempt_at),
    claimedBy: row.claimed_by,
    claimedUntil: numberOrNull(row.claimed_until),
    payload: row.payload,
    lastStatusCode: numberOrNull(row.last_status_code),
    lastError: row.last_error,
    createdAt: Number(row.created_at),
    lastAttemptAt: numberOrNull(row.last_attempt_at),
    deliveredAt: numberOrNull(row.delivered_at),
    failedAt: numberOrNull(row.failed_at),
    userId: row.user_id,
    url: row.url,
  };
}

export interface DeliveryFilter {
  webhookId?: string;
  userId?: string;
  status?: DeliveryStatus;
  eventId?: number;
  limit: number;
}

/** Not leased, or its lease has run out. */
const claimable = (now: number) => (eb: ExpressionBuilder<Database, 'webhook_deliveries'>) =>
  eb.or([eb('webhook_deliveries.claimed_until', 'is', null), eb('webhook_deliveries.claimed_until', '<', now)]);

const DELIVERY_COLUMNS = 'webhook_id, event_id, status, attempts, next_attempt_at, created_at';

/**
 * The deliveries of new order events: one per active webhook of each event's owner, written in the
 * events' own transaction (OrderRepository.apply), so that an event never commits without them.
 */
export const ENQUEUE_DELIVERIES = {
  /** SQLite: parameters now, now, and the first and last id of the history rows just inserted. */
  sqlite: `insert into webhook_deliveries (${DELIVERY_COLUMNS})
    select w.webhook_id, h.id, '${DeliveryStatus.PENDING}', 0, ?, ?
    from order_history h join webhooks w on w.user_id = h.user_id and w.removed_at is null
    where h.id between ? and ? order by h.id`,
  /**
   * PostgreSQL, in the statement that inserts the history rows: `events` is that CTE (returning id and
   * user_id), `now` the parameter of now.
   */
  postgres: (events: string, now: string) => `insert into webhook_deliveries (${DELIVERY_COLUMNS})
    select w.webhook_id, h.id, '${DeliveryStatus.PENDING}', 0, ${now}, ${now}
    from ${events} h join webhooks w on w.user_id = h.user_id and w.removed_at is null
    order by h.id`,
};

export class WebhookRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async create(webhook: Omit<Webhook, 'removedAt'>): Promise<void> {
    await this.db
      .insertInto('webhooks')
      .values({
        webhook_id: webhook.webhookId,
        user_id: webhook.userId,
        url: webhook.url,
        secret: webhook.secret,
        created_at: webhook.createdAt,
        removed_at: null,
      })
      .execute();
  }

  async find(webhookId: string): Promise<Webhook | undefined> {
    const row = await this.db.selectFrom('webhooks').selectAll().where('webhook_id', '=', webhookId).executeTakeFirst();
    return row && webhookFromRow(row);
  }

  /** Webhooks (removed ones too) with their delivery counts, oldest first. */
  async list(userId?: string): Promise<WebhookSummary[]> {
    let query = this.db
      .selectFrom('webhooks')
      .selectAll('webhooks')
      .select((eb) => [
        countDeliveries(eb, DeliveryStatus.PENDING).as('pending'),
        countDeliveries(eb, DeliveryStatus.DELIVERED).as('delivered'),
        countDeliveries(eb, DeliveryStatus.FAILED).as('failed'),
      ])
      .orderBy('created_at')
      .orderBy('webhook_id');
    if (userId !== undefined) query = query.where('user_id', '=', userId);
    const rows = await query.execute();
    return rows.map((row) => ({
      ...webhookFromRow(row),
      pending: Number(row.pending),
      delivered: Number(row.delivered),
      failed: Number(row.failed),
    }));
  }

  /** Stops the webhook: no new deliveries, and the pending ones are given up. False if none was active. */
  async remove(webhookId: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('webhooks')
        .set({ removed_at: now })
        .where('webhook_id', '=', webhookId)
        .where('removed_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) return false;
      await trx
        .updateTable('webhook_deliveries')
        .set({ status: DeliveryStatus.FAILED, failed_at: now, last_error: 'webhook removed', claimed_until: null })
        .where('webhook_id', '=', webhookId)
        .where('status', '=', DeliveryStatus.PENDING)
        .execute();
      return true;
    });
  }

  /**
   * Up to `limit` pending deliveries that are due and not leased, of active webhooks, in event order,
   * with their webhook, of the events up to `upToEventId` (the committed event horizon: every earlier
   * event, and so every earlier delivery, is committed). A delivery waits while one of an earlier event to
   * the same webhook is waiting for its retry or is being sent (leased, by any dispatcher), so that a
   * receiver gets the events in order for as long as it can take them.
   */
  async due(now: number, limit: number, upToEventId: number): Promise<{ id: number; webhookId: string }[]> {
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhooks', 'webhooks.webhook_id', 'webhook_deliveries.webhook_id')
      .select(['webhook_deliveries.id', 'webhook_deliveries.webhook_id'])
      .where('webhook_deliveries.status', '=', DeliveryStatus.PENDING)
      .where('webhook_deliveries.next_attempt_at', '<=', now)
      .where('webhook_deliveries.event_id', '<=', upToEventId)
      .where('webhooks.removed_at', 'is', null)
      .where(claimable(now))
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('webhook_deliveries as earlier')
              .select('earlier.id')
              .whereRef('earlier.webhook_id', '=', 'webhook_deliveries.webhook_id')
              .where('earlier.status', '=', DeliveryStatus.PENDING)
              .whereRef('earlier.event_id', '<', 'webhook_deliveries.event_id')
              .where((inner) =>
                inner.or([inner('earlier.next_attempt_at', '>', now), inner('earlier.claimed_until', '>=', now)]),
              ),
          ),
        ),
      )
      .orderBy('webhook_deliveries.event_id')
      .limit(limit)
      .execute();
    return rows.map((row) => ({ id: Number(row.id), webhookId: row.webhook_id }));
  }

  /** Leases the deliveries to `workerId` until `until`, except those taken meanwhile; answers what it took. */
  async claim(ids: readonly number[], workerId: string, now: number, until: number): Promise<DueDelivery[]> {
    if (ids.length === 0) return [];
    const claimed = await this.db
      .updateTable('webhook_deliveries')
      .set({ claimed_by: workerId, claimed_until: until })
      .where('id', 'in', ids)
      .where('status', '=', DeliveryStatus.PENDING)
      // Still due: another dispatcher may have tried it meanwhile and put it off.
      .where('next_attempt_at', '<=', now)
      .where(claimable(now))
      .returning('id')
      .execute();
    if (claimed.length === 0) return [];
    const rows = await this.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhooks', 'webhooks.webhook_id', 'webhook_deliveries.webhook_id')
      .select([
        'webhook_deliveries.id',
        'webhook_deliveries.webhook_id',
        'webhook_deliveries.event_id',
        'webhook_deliveries.attempts',
        'webhook_deliveries.created_at',
        'webhook_deliveries.payload',
        'webhooks.url',
        'webhooks.secret',
      ])
      .where(
        'webhook_deliveries.id',
        'in',
        claimed.map((row) => Number(row.id)),
      )
      .orderBy('webhook_deliveries.event_id')
      .execute();
    return rows.map((row) => ({
      id: Number(row.id),
      webhookId: row.webhook_id,
      eventId: Number(row.event_id),
      url: row.url,
      secret: row.secret,
      attempts: Number(row.attempts),
      createdAt: Number(row.created_at),
      payload: row.payload,
    }));
  }

  /** Fixes the body of a delivery before its first attempt (kept for every retry). */
  async setPayload(id: number, payload: string): Promise<void> {
    await this.db
      .updateTable('webhook_deliveries')
      .set({ payload })
      .where('id', '=', id)
      .where('payload', 'is', null)
      .execute();
  }

  async markDelivered(id: number, workerId: string, now: number, statusCode: number): Promise<void> {
    await this.ownedPending(id, workerId)
      .set((eb) => ({
        status: DeliveryStatus.DELIVERED,
        attempts: eb('attempts', '+', 1),
        last_status_code: statusCode,
        last_error: null,
        last_attempt_at: now,
        delivered_at: now,
        claimed_until: null,
      }))
      .execute();
  }

  /** Records a failed attempt: the next one at `retryAt`, or given up (FAILED) when `retryAt` is null. */
  async markAttemptFailed(
    id: number,
    workerId: string,
    now: number,
    retryAt: number | null,
    statusCode: number | null,
    error: string,
  ): Promise<void> {
    await this.ownedPending(id, workerId)
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        last_status_code: statusCode,
        last_error: error.slice(0, 500),
        last_attempt_at: now,
        claimed_until: null,
        ...(retryAt === null ? { status: DeliveryStatus.FAILED, failed_at: now } : { next_attempt_at: retryAt }),
      }))
      .execute();
  }

  /** Gives back deliveries not attempted (held behind an earlier failure), to be due again at `dueAt`. */
  async release(ids: readonly number[], workerId: string, dueAt: number): Promise<void> {
    if (ids.length === 0) return;
    await this.db
      .updateTable('webhook_deliveries')
      .set({ claimed_until: null, next_attempt_at: dueAt })
      .where('id', 'in', ids)
      .where('claimed_by', '=', workerId)
      .where('claimed_until', 'is not', null)
      .where('status', '=', DeliveryStatus.PENDING)
      .execute();
  }

  /** Deliveries, newest first. */
  async deliveries(filter: DeliveryFilter): Promise<ListedDelivery[]> {
    let query = this.db
      .selectFrom('webhook_deliveries')
      .innerJoin('webhooks', 'webhooks.webhook_id', 'webhook_deliveries.webhook_id')
      .selectAll('webhook_deliveries')
      .select(['webhooks.user_id', 'webhooks.url'])
      .orderBy('webhook_deliveries.id', 'desc')
      .limit(filter.limit);
    if (filter.webhookId !== undefined) query = query.where('webhook_deliveries.webhook_id', '=', filter.webhookId);
    if (filter.userId !== undefined) query = query.where('webhooks.user_id', '=', filter.userId);
    if (filter.status !== undefined) query = query.where('webhook_deliveries.status', '=', filter.status);
    if (filter.eventId !== undefined) query = query.where('webhook_deliveries.event_id', '=', filter.eventId);
    return (await query.execute()).map(listedDeliveryFromRow);
  }

  /** Sends a failed delivery again from now on, with a fresh retry time. False if it is not FAILED. */
  async retry(id: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('webhook_deliveries')
      .set({
        status: DeliveryStatus.PENDING,
        next_attempt_at: now,
        created_at: now,
        failed_at: null,
        claimed_until: null,
      })
      .where('id', '=', id)
      .where('status', '=', DeliveryStatus.FAILED)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('webhooks')
            .select('webhooks.webhook_id')
            .whereRef('webhooks.webhook_id', '=', 'webhook_deliveries.webhook_id')
            .where('webhooks.removed_at', 'is', null),
        ),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  private ownedPending(id: number, workerId: string) {
    return this.db
      .updateTable('webhook_deliveries')
      .where('id', '=', id)
      .where('claimed_by', '=', workerId)
      .where('status', '=', DeliveryStatus.PENDING);
  }
}

function countDeliveries(eb: ExpressionBuilder<Database, 'webhooks'>, status: DeliveryStatus) {
  return eb
    .selectFrom('webhook_deliveries')
    .select((s) => s.fn.countAll().as('n'))
    .whereRef('webhook_deliveries.webhook_id', '=', 'webhooks.webhook_id')
    .where('webhook_deliveries.status', '=', status);
}
