/**
 * Operator actions on webhooks behind `ordergate webhooks`: register a URL for a user (the signing secret
 * is shown once), list, remove, and inspect or retry deliveries.
 */
import { timeOrderedId } from '../ids.js';
import { newWebhookSecret } from '../auth/credentials.js';
import { literalAddress, type WebhookAddressPolicy } from '../domain/orders/webhook-addresses.js';
import { refusedResolution, type Resolver } from '../webhooks/address-guard.js';
import {
  DeliveryStatus,
  webhookUrlProblem,
  type ListedDelivery,
  type WebhookSummary,
} from '../domain/orders/webhooks.js';
import type { UserRepository } from '../store/access/users.js';
import type { DeliveryFilter, WebhookRepository } from '../store/orders/webhooks.js';
import { AdminError } from '../domain/errors.js';

export interface NewWebhook {
  webhookId: string;
  userId: string;
  url: string;
  secret: string;
}

export class WebhookAdminService {
  constructor(
    private readonly webhooks: WebhookRepository,
    private readonly users: UserRepository,
    /** What URLs may be registered (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_ADDRESSES, WEBHOOK_ALLOW_ANY_PORT). */
    private readonly addresses: WebhookAddressPolicy,
    private readonly now: () => number = Date.now,
    /** Resolves a host name at registration (tests give their own). */
    private readonly resolve?: Resolver,
  ) {}

  /**
   * Registers `url` for the user's order events. The URL is checked, never fetched; a host that is a name
   * is resolved, and refused if it resolves to a refused address now (it is checked again at every
   * delivery, as it may resolve elsewhere later).
   */
  async add(userId: string, url: string): Promise<NewWebhook> {
    const problem = webhookUrlProblem(url, this.addresses);
    if (problem !== null) throw new AdminError(problem);
    const { hostname } = new URL(url);
    const refused =
      literalAddress(hostname) === null ? await refusedResolution(hostname, this.addresses, this.resolve) : null;
    if (refused !== null) throw new AdminError(refused);
    if ((await this.users.find(userId)) === undefined) throw new AdminError(`no user ${userId}`);
    const webhook: NewWebhook = {
      webhookId: `wh_${timeOrderedId()}`,
      userId,
      url,
      secret: newWebhookSecret(),
    };
    await this.webhooks.create({ ...webhook, createdAt: this.now() });
    return webhook;
  }

  list(userId?: string): Promise<WebhookSummary[]> {
    return this.webhooks.list(userId);
  }

  async remove(webhookId: string): Promise<void> {
    if (await this.webhooks.remove(webhookId, this.now())) return;
    const webhook = await this.webhooks.find(webhookId);
    throw new AdminError(
      webhook === undefined ? `no webhook ${webhookId}` : `webhook ${webhookId} was removed already`,
    );
  }

  deliveries(filter: DeliveryFilter): Promise<ListedDelivery[]> {
    return this.webhooks.deliveries(filter);
  }

  /** Sends a FAILED delivery again, with a fresh retry time. */
  async retry(deliveryId: number): Promise<void> {
    if (await this.webhooks.retry(deliveryId, this.now())) return;
    throw new AdminError(`delivery ${deliveryId} is not a failed delivery of an active webhook`);
  }
}

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = Object.values(DeliveryStatus);
