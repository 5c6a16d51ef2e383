/**
 * `ordergate webhooks add|list|remove|deliveries|retry`: webhooks per user, and what became of their
 * deliveries. The signing secret is printed once, by `add`, alone on the last line.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { DeliveryStatus, ListedDelivery } from '../domain/orders/webhooks.js';
import { AdminError } from '../domain/errors.js';
import { DELIVERY_STATUSES, WebhookAdminService } from '../services/webhooks.js';
import { WebhookRepository } from '../store/orders/webhooks.js';
import { CliError, isoInstant, withWorkspace, writeFields, type CliIo, type Workspace } from './context.js';

function positiveInteger(value: string): number {
  if (!/^[1-9]\d{0,14}$/.test(value)) throw new InvalidArgumentError('expected a whole number >= 1');
  return Number(value);
}

async function withWebhooks<T>(
  io: CliIo,
  work: (service: WebhookAdminService, workspace: Workspace) => Promise<T>,
): Promise<T> {
  return withWorkspace(io, async (workspace) => {
    try {
      const {
        webhookAllowHttp: allowHttp,
        webhookAllowPrivateAddresses: allowPrivateAddresses,
        webhookAllowAnyPort: allowAnyPort,
      } = workspace.config;
      const service = new WebhookAdminService(new WebhookRepository(workspace.store.db), workspace.users, {
        allowHttp,
        allowPrivateAddresses,
        allowAnyPort,
      });
      return await work(service, workspace);
    } catch (error) {
      if (error instanceof AdminError) throw new CliError(error.message);
      throw error;
    }
  });
}

const instantOrDash = (ms: number | null) => (ms === null ? '-' : isoInstant(ms));
const instantOrNull = (ms: number | null) => (ms === null ? null : isoInstant(ms));

/** One delivery as `deliveries --json` prints it (snake_case keys, instants as ISO 8601). */
function deliveryJson(d: ListedDelivery): Record<string, unknown> {
  return {
    delivery_id: d.id,
    webhook_id: d.webhookId,
    user_id: d.userId,
    url: d.url,
    event_id: d.eventId,
    status: d.status,
    attempts: d.attempts,
    created_at: isoInstant(d.createdAt),
    last_attempt_at: instantOrNull(d.lastAttemptAt),
    next_attempt_at: d.status === 'PENDING' ? isoInstant(d.nextAttemptAt) : null,
    delivered_at: instantOrNull(d.deliveredAt),
    failed_at: instantOrNull(d.failedAt),
    last_status_code: d.lastStatusCode,
    last_error: d.lastError,
  };
}

export function webhooksCommand(io: CliIo): Command {
  const webhooks = new Command('webhooks').description(
    "POST a user's order events to a URL, signed (see docs/events.md: Webhooks)",
  );
  webhooks
    .command('add')
    .description(
      "register a URL for a user's order events (https, or http with WEBHOOK_ALLOW_HTTP=true; it is not fetched now)",
    )
    .argument('<user_id>')
    .argument('<url>')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout:',
        '  webhook_id: <id>      (pass it to `ordergate webhooks remove` or `deliveries --webhook`)',
        '  user_id: <user_id>',
        '  url: <url>',
        '  <the signing secret>  (alone on the last line; it cannot be shown again)',
        '',
        'Refused unless allowed: plain http (WEBHOOK_ALLOW_HTTP=true), a user name or password in the URL, and',
        'a host that is (or now resolves to) a loopback, private, link-local or other non-public address (WEBHOOK_ALLOW_PRIVATE_ADDRESSES=true),',
        "and a port other than 443, the scheme's default or 1024 to 65535 (WEBHOOK_ALLOW_ANY_PORT=true).",
        'A name is checked at each delivery, against every address it resolves to.',
      ].join('\n'),
    )
    .action(async (userId: string, url: string) => {
      await withWebhooks(io, async (service) => {
        const webhook = await service.add(userId, url);
        writeFields(io, [
          ['webhook_id', webhook.webhookId],
          ['user_id', webhook.userId],
          ['url', webhook.url],
        ]);
        io.stdout.write(`${webhook.secret}\n`);
        io.stderr.write(`registered webhook ${webhook.webhookId}; the signing secret is shown only this once\n`);
      });
    });
  webhooks
    .command('list')
    .description('list webhooks (removed ones too) with their delivery counts')
    .option('--user <user_id>', "only this user's webhooks")
    .addHelpText(
      'after',
      '\nPrints on stdout one line per webhook:\n  <webhook_id> user=<user_id> url=<url> created=<ISO> removed=<ISO|-> pending=<n> delivered=<n> failed=<n>',
    )
    .action(async (options: { user?: string }) => {
      await withWebhooks(io, async (service) => {
        for (const w of await service.list(options.user)) {
          io.stdout.write(
            `${w.webhookId} user=${w.userId} url=${w.url} created=${isoInstant(w.createdAt)} removed=${instantOrDash(w.removedAt)} pending=${w.pending} delivered=${w.delivered} failed=${w.failed}\n`,
          );
        }
      });
    });
  webhooks
    .command('remove')
    .description('stop a webhook: no new deliveries, and its pending ones are given up')
    .argument('<webhook_id>')
    .addHelpText('after', '\nPrints on stdout:\n  removed: <webhook_id>')
    .action(async (webhookId: string) => {
      await withWebhooks(io, async (service) => {
        await service.remove(webhookId);
        writeFields(io, [['removed', webhookId]]);
      });
    });
  webhooks
    .command('deliveries')
    .description('show deliveries, newest first: their status, attempts, and the last error')
    .option('--webhook <webhook_id>', 'only this webhook')
    .option('--user <user_id>', "only this user's webhooks")
    .addOption(new Option('--status <status>', 'only deliveries in this status').choices(DELIVERY_STATUSES))
    .option('--event <event_id>', 'only this order event', positiveInteger)
    .option('--limit <n>', 'at most this many', positiveInteger, 50)
    .option('--json', 'one JSON object per line instead of text')
    .addHelpText(
      'after',
      '\nPrints on stdout one line per delivery:\n  <id> <status> event=<event_id> webhook=<webhook_id> attempts=<n> next=<ISO|-> last=<HTTP status|-> error=<text|->',
    )
    .action(
      async (options: {
        webhook?: string;
        user?: string;
        status?: DeliveryStatus;
        event?: number;
        limit: number;
        json?: boolean;
      }) => {
        await withWebhooks(io, async (service) => {
          const rows = await service.deliveries({
            limit: options.limit,
            ...(options.webhook !== undefined && { webhookId: options.webhook }),
            ...(options.user !== undefined && { userId: options.user }),
            ...(options.status !== undefined && { status: options.status }),
            ...(options.event !== undefined && { eventId: options.event }),
          });
          for (const d of rows) {
            if (options.json) {
              io.stdout.write(`${JSON.stringify(deliveryJson(d))}\n`);
            } else {
              const next = d.status === 'PENDING' ? isoInstant(d.nextAttemptAt) : '-';
              io.stdout.write(
                `${d.id} ${d.status} event=${d.eventId} webhook=${d.webhookId} attempts=${d.attempts} next=${next} last=${d.lastStatusCode ?? '-'} error=${d.lastError ?? '-'}\n`,
              );
            }
          }
        });
      },
    );
  webhooks
    .command('retry')
    .description('send a FAILED delivery again (its retry time starts afresh)')
    .argument('<delivery_id>', 'from `ordergate webhooks deliveries`', positiveInteger)
    .addHelpText('after', '\nPrints on stdout:\n  retrying: <delivery_id>')
    .action(async (deliveryId: number) => {
      await withWebhooks(io, async (service) => {
        await service.retry(deliveryId);
        writeFields(io, [['retrying', String(deliveryId)]]);
      });
    });
  return webhooks;
}
