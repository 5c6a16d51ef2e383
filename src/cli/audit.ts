/**
 * `ordergate audit`: the audit trail. Order-entry request records and order state changes, merged oldest
 * first, as a table or as one JSON object per line; `audit archive` moves the request records older than
 * an instant to a file and removes them (the trail's one deletion), `audit verify-archive` checks such a
 * file against the database's record of it (docs/design/audit.md).
 */
import { Command, InvalidArgumentError } from 'commander';
import type { AuditArchiveRecord } from '../domain/access/audit.js';
import { formatPrice } from '../domain/ofs/issue/issue.js';
import { AuditArchiveService, AuditTrailService, type AuditEntry } from '../services/audit.js';
import { AuditRepository } from '../store/access/audit.js';
import { isoInstant, withWorkspace, writeFields, type CliIo } from './context.js';

export const DEFAULT_AUDIT_LIMIT = 100;
const MAX_AUDIT_LIMIT = 100_000;

interface AuditOptions {
  user?: string;
  order?: string;
  requestId?: string;
  since?: number;
  until?: number;
  limit: number;
  json?: boolean;
}

/** A date (UTC midnight) or a date and time with Z or an offset: an instant that means the same everywhere. */
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2}))?$/;

function parseInstant(value: string): number {
  const ms = ISO_INSTANT.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(ms))
    throw new InvalidArgumentError(
      'give an ISO 8601 date (2026-11-22) or date and time with a zone (2026-11-22T09:15:00Z).',
    );
  return ms;
}

function parseLimit(value: string): number {
  const limit = /^\d+$/.test(value) ? Number(value) : Number.NaN;
  if (!(limit >= 1 && limit <= MAX_AUDIT_LIMIT))
    throw new InvalidArgumentError(`give a whole number from 1 to ${MAX_AUDIT_LIMIT}.`);
  return limit;
}

/**
 * One JSON object per entry; a request's body is the JSON it carried (secrets redacted), or, when the trail
 * cut it, the text it kept; `path_cut` and `body_cut` say what a cut value was (`{bytes, sha256}`), else null.
 */
export function auditJson(entry: AuditEntry): Record<string, unknown> {
  if (entry.kind === 'request') {
    return {
      kind: 'request',
      at: new Date(entry.at).toISOString(),
      request_id: entry.requestId,
      user_id: entry.userId,
      client_address: entry.clientAddress,
      method: entry.method,
      route: entry.route,
      path: entry.path,
      path_cut: entry.pathCut,
      status: entry.statusCode,
      code: entry.code,
      order_id: entry.orderId,
      ordercart_id: entry.ordercartId,
      body: entry.body === null || entry.bodyCut !== null ? entry.body : (JSON.parse(entry.body) as unknown),
      body_cut: entry.bodyCut,
    };
  }
  return {
    kind: 'order_change',
    at: new Date(entry.at).toISOString(),
    order_id: entry.orderId,
    user_id: entry.userId,
    actor: entry.actor,
    request_id: entry.requestId,
    status: entry.status,
    reason: entry.reason,
    quantity: entry.quantity,
    price: formatPrice(entry.pricePaise),
    traded_quantity: entry.tradedQuantity,
  };
}

const TABLE_HEADER = ['AT', 'KIND', 'WHO', 'ADDRESS', 'REQUEST_ID', 'ORDER', 'WHAT'];

function tableRow(entry: AuditEntry): string[] {
  const at = isoInstant(entry.at);
  if (entry.kind === 'request') {
    const order = entry.orderId ?? (entry.ordercartId === null ? '-' : `cart ${entry.ordercartId}`);
    const path = entry.pathCut === null ? entry.path : `${entry.path}[cut: ${entry.pathCut.bytes} bytes]`;
    return [
      at,
      'request',
      entry.userId ?? '-',
      entry.clientAddress,
      entry.requestId,
      order,
      `${entry.method} ${path} -> ${entry.statusCode} ${entry.code ?? '-'}`,
    ];
  }
  const terms = `qty ${entry.quantity} price ${formatPrice(entry.pricePaise)} traded ${entry.tradedQuantity}`;
  return [
    at,
    'order',
    entry.actor ?? '-',
    '-',
    entry.requestId ?? '-',
    entry.orderId,
    `${entry.status} (${terms}): ${entry.reason}`,
  ];
}

/** Columns padded to their widest cell; the last column is not padded. */
function formatTable(rows: string[][]): string {
  const widths = TABLE_HEADER.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return (
    rows
      .map((row) =>
        row.map((cell, column) => (column === row.length - 1 ? cell : cell.padEnd(widths[column]!))).join('  '),
      )
      .join('\n') + '\n'
  );
}

function archiveFields(archive: AuditArchiveRecord): [string, string][] {
  return [
    ['rows', String(archive.rows)],
    ['first_id', String(archive.firstId)],
    ['last_id', String(archive.lastId)],
    ['before', isoInstant(archive.before)],
    ['archived_at', isoInstant(archive.archivedAt)],
    ['digest', archive.sha256],
  ];
}

function archiveCommand(io: CliIo): Command {
  return new Command('archive')
    .description(
      'move the request records that arrived before an instant to a new file, then remove them from the database',
    )
    .requiredOption('--before <instant>', 'archive the records that arrived before this ISO 8601 instant', parseInstant)
    .requiredOption('--to <file>', 'the archive file to create (never overwritten); FILE.sha256 is written beside it')
    .addHelpText(
      'after',
      [
        '',
        'The file: JSON lines, a header {"format","table","before"}, one line per record as stored, oldest first,',
        'and a trailer {"end","rows","first_id","last_id"}. It is synced before anything is removed; then, in one',
        "transaction, the database records the archive (rows, ids, the file's SHA-256) and removes exactly those",
        'records: the one deletion the trail allows. A failure removes the file and changes nothing.',
        'Prints archived, digest_file, rows, first_id, last_id, before, archived_at and digest (the SHA-256 of the file) as `name: value` lines.',
        "Order state changes (order_history) are the orders' own history and are not archived.",
      ].join('\n'),
    )
    .action(async (options: { before: number; to: string }) => {
      await withWorkspace(io, async ({ store }) => {
        const archive = await new AuditArchiveService(new AuditRepository(store), Date.now).archive(
          options.before,
          options.to,
        );
        if (archive === null) {
          io.stderr.write(`no request records arrived before ${isoInstant(options.before)}; nothing archived\n`);
          return;
        }
        writeFields(io, [['archived', options.to], ['digest_file', `${options.to}.sha256`], ...archiveFields(archive)]);
      });
    });
}

function verifyArchiveCommand(io: CliIo): Command {
  return new Command('verify-archive')
    .description('check that a file is a whole archive that this database made, unchanged')
    .argument('<file>', 'an archive file written by `ordergate audit archive`')
    .addHelpText(
      'after',
      '\nPrints verified, rows, first_id, last_id, before, archived_at and digest (the SHA-256 of the file) as `name: value` lines; else exit 1 with the reason.',
    )
    .action(async (file: string) => {
      await withWorkspace(io, async ({ store }) => {
        const archive = await new AuditArchiveService(new AuditRepository(store), Date.now).verify(file);
        writeFields(io, [['verified', file], ...archiveFields(archive)]);
      });
    });
}

export function auditCommand(io: CliIo): Command {
  return new Command('audit')
    .description('show the audit trail: order-entry requests and order state changes, oldest first')
    .option('--user <user_id>', "requests by this user, and the state changes of this user's orders")
    .option('--order <order_id>', 'the state changes of this order, and the requests that named or changed it')
    .option('--request-id <request_id>', 'the request with this Request-Id, and the changes it made')
    .option('--since <instant>', 'entries at or after this ISO 8601 instant', parseInstant)
    .option('--until <instant>', 'entries before this ISO 8601 instant', parseInstant)
    .option('--limit <n>', `show the newest n entries (1 to ${MAX_AUDIT_LIMIT})`, parseLimit, DEFAULT_AUDIT_LIMIT)
    .option('--json', 'print one JSON object per line (with the request bodies) instead of a table')
    .addHelpText(
      'after',
      [
        '',
        'Filters combine (all must hold). Prints on stdout, oldest first:',
        '  a table: AT KIND WHO ADDRESS REQUEST_ID ORDER WHAT  (WHO: the user, "oms" or "exchange")',
        '  with --json, one object per line:',
        '    {"kind":"request","at","request_id","user_id","client_address","method","route","path","path_cut","status","code","order_id","ordercart_id","body","body_cut"}',
        '    {"kind":"order_change","at","order_id","user_id","actor","request_id","status","reason","quantity","price","traded_quantity"}',
        'Nothing matches: nothing on stdout, a note on stderr, exit 0.',
        'Retention: `ordergate audit archive --before T --to FILE`; `ordergate audit verify-archive FILE`.',
      ].join('\n'),
    )
    .addCommand(archiveCommand(io))
    .addCommand(verifyArchiveCommand(io))
    .action(async (options: AuditOptions) => {
      await withWorkspace(io, async ({ store }) => {
        const entries = await new AuditTrailService(new AuditRepository(store)).entries({
          userId: options.user,
          orderId: options.order,
          requestId: options.requestId,
          since: options.since,
          until: options.until,
          limit: options.limit,
        });
        if (options.json) {
          io.stdout.write(entries.map((entry) => `${JSON.stringify(auditJson(entry))}\n`).join(''));
        } else if (entries.length > 0) {
          io.stdout.write(formatTable([TABLE_HEADER, ...entries.map(tableRow)]));
        }
        if (entries.length === 0) io.stderr.write('no audit entries match\n');
      });
    });
}
