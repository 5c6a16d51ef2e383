/**
 * The audit trail (docs/design/audit.md) as the services, the HTTP hooks and the CLI see it: the records of
 * order-entry requests and, beside them, the order state changes. The store maps them from its tables
 * (snake_case columns, PostgreSQL's int8 as strings); nothing above the store sees a row.
 */
import { createHash } from 'node:crypto';
import type { RecordedChange } from '../orders/order.js';

/** One order-entry request as the trail keeps it, before the store has numbered it. */
export interface NewAuditRequest {
  /** When the request arrived, epoch ms. */
  at: number;
  /** The Request-Id header of the answer. */
  requestId: string;
  /** The authenticated caller; null when authentication failed. */
  userId: string | null;
  /** The peer address of the connection (no proxy header is trusted). */
  clientAddress: string;
  method: string;
  /** The route pattern, e.g. /transactional/v1/orders/regular/:exchange/:order_id. */
  route: string;
  /** The path as requested, with its query string; its first AUDIT_PATH_MAX_BYTES when longer (see pathCut). */
  path: string;
  /** What the path was when it was cut; null when `path` is whole. */
  pathCut: CutValue | null;
  statusCode: number;
  /** The answer's code: e-NNN for a refusal, s-NNN for a success; null when the answer had none. */
  code: string | null;
  /** The order the request named or created. */
  orderId: string | null;
  /** The order cart the request named. */
  ordercartId: string | null;
  /** The JSON body as received, secrets redacted; null when there was none. Its first AUDIT_BODY_MAX_BYTES when longer (see bodyCut). */
  body: string | null;
  /** What the body (as it would have been stored) was when it was cut; null when `body` is whole or null. */
  bodyCut: CutValue | null;
}

/** A request record as read back from the trail, with its id (the order of appending). */
export interface AuditRequest extends NewAuditRequest {
  id: number;
}

/** An order state change as the trail shows it: its history entry, with its id and the order's owner. */
export interface AuditedOrderChange extends RecordedChange {
  id: number;
  /** The order's owner. */
  userId: string;
}

/**
 * The most of a request's path and body the trail stores, in UTF-8 bytes. Every order-entry path is far
 * shorter (the router caps a path parameter at 200 characters, and no order-entry route reads a query
 * string), and a well-formed order body is under 1 KiB (the body limit is 64 KiB); the caps bound what a
 * caller's junk can add to a table nobody may prune, while what a user sent stays evidence: a cut value
 * keeps its length and its SHA-256.
 */
export const AUDIT_PATH_MAX_BYTES = 1024;
export const AUDIT_BODY_MAX_BYTES = 8192;

/** What a value the trail cut was as a whole: its length in UTF-8 bytes and the hex SHA-256 of those bytes. */
export interface CutValue {
  bytes: number;
  sha256: string;
}

/** A value as the trail keeps it: whole (`cut` null), or its first bytes and what the whole was. */
export interface CappedText {
  text: string;
  cut: CutValue | null;
}

/**
 * The value whole when it fits in `maxBytes` of UTF-8, else its longest prefix that fits without splitting
 * a character, with the length and SHA-256 of the whole, so that a copy of the whole can be proven.
 */
export function capText(value: string, maxBytes: number): CappedText {
  // A string of n UTF-16 units has at most 3n UTF-8 bytes: short values need no encoding.
  if (value.length * 3 <= maxBytes) return { text: value, cut: null };
  const bytes = Buffer.from(value, 'utf8');
  if (bytes.length <= maxBytes) return { text: value, cut: null };
  let end = maxBytes;
  // Back to the start of a character: UTF-8 continuation bytes are 10xxxxxx.
  while (end > 0 && (bytes[end]! & 0xc0) === 0x80) end -= 1;
  return {
    text: bytes.subarray(0, end).toString('utf8'),
    cut: { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
  };
}

/**
 * An archive file of request records (`ordergate audit archive`), JSON lines: a header, one line per
 * record as stored (the body as its stored text, byte for byte), oldest id first, and a trailer that
 * counts them, so that a file cut short at a line boundary is told from a whole one.
 */
export const AUDIT_ARCHIVE_FORMAT = 'ordergate-audit-archive/1';

export interface AuditArchiveSummary {
  /** The records are those that arrived before this instant (epoch ms). */
  before: number;
  rows: number;
  firstId: number;
  lastId: number;
}

export function auditArchiveHeader(before: number): string {
  return `${JSON.stringify({ format: AUDIT_ARCHIVE_FORMAT, table: 'audit_requests', before: new Date(before).toISOString() })}\n`;
}

export function auditArchiveLine(record: AuditRequest): string {
  return `${JSON.stringify({
    id: record.id,
    at: record.at,
    request_id: record.requestId,
    user_id: record.userId,
    client_address: record.clientAddress,
    method: record.method,
    route: record.route,
    path: record.path,
    path_cut: record.pathCut,
    status_code: record.statusCode,
    code: record.code,
    order_id: record.orderId,
    ordercart_id: record.ordercartId,
    body: record.body,
    body_cut: record.bodyCut,
  })}\n`;
}

export function auditArchiveTrailer(summary: Omit<AuditArchiveSummary, 'before'>): string {
  return `${JSON.stringify({ end: AUDIT_ARCHIVE_FORMAT, rows: summary.rows, first_id: summary.firstId, last_id: summary.lastId })}\n`;
}

const isWhole = (value: unknown): value is number => Number.isSafeInteger(value);

function parseObject(line: string): Record<string, unknown> | null {
  try {
    const value = JSON.parse(line) as unknown;
    return value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

export type AuditArchiveReading = { ok: true; summary: AuditArchiveSummary } | { ok: false; problem: string };

/**
 * Reads an archive file line by line (so that a file of any size is checked in little memory) and tells
 * whether it is a whole archive: the header, records in increasing id order that all arrived before the
 * header's instant, and a trailer that counts exactly them, ending the file.
 */
export class AuditArchiveReader {
  private lines = 0;
  private before = Number.NaN;
  private rows = 0;
  private firstId = 0;
  private lastId = 0;
  private trailer: Record<string, unknown> | null = null;
  private problem: string | null = null;

  /** The next line, without its line break. */
  line(text: string): void {
    if (this.problem !== null) return;
    this.lines += 1;
    const at = `line ${this.lines}`;
    const value = parseObject(text);
    if (this.lines === 1) {
      this.before = typeof value?.before === 'string' ? Date.parse(value.before) : Number.NaN;
      if (value?.format !== AUDIT_ARCHIVE_FORMAT || value.table !== 'audit_requests' || Number.isNaN(this.before)) {
        this.problem = `${at} is not the header of an ${AUDIT_ARCHIVE_FORMAT} file`;
      }
    } else if (this.trailer !== null) {
      this.problem = `${at} follows the trailer: the file was added to`;
    } else if (value?.end === AUDIT_ARCHIVE_FORMAT) {
      this.trailer = value;
    } else if (value === null || !isWhole(value.id) || !isWhole(value.at) || typeof value.request_id !== 'string') {
      this.problem = `${at} is not a request record`;
    } else if (value.id <= this.lastId) {
      this.problem = `${at}: record ids are not increasing`;
    } else if (value.at >= this.before) {
      this.problem = `${at}: the record arrived after the archive's "before"`;
    } else {
      if (this.rows === 0) this.firstId = value.id;
      this.rows += 1;
      this.lastId = value.id;
    }
  }

  /** After the last line; `endsWithLineBreak`: whether the file's last byte is a line break. */
  end(endsWithLineBreak: boolean): AuditArchiveReading {
    const fail = (problem: string) => ({ ok: false as const, problem });
    if (this.problem !== null) return fail(this.problem);
    if (this.lines === 0) return fail('the file is empty');
    const trailer = this.trailer;
    if (trailer === null || !endsWithLineBreak) return fail('the trailer is missing: the file was cut short');
    if (trailer.rows !== this.rows || trailer.first_id !== this.firstId || trailer.last_id !== this.lastId) {
      return fail(
        `the trailer counts ${String(trailer.rows)} records (ids ${String(trailer.first_id)} to ${String(trailer.last_id)}); the file holds ${this.rows} (${this.firstId} to ${this.lastId})`,
      );
    }
    return { ok: true, summary: { before: this.before, rows: this.rows, firstId: this.firstId, lastId: this.lastId } };
  }
}

/** An archive as the database records it (`audit_archives`, append-only): what was removed, and the file's digest. */
export interface AuditArchiveRecord extends AuditArchiveSummary {
  id: number;
  /** When the rows were removed, epoch ms. */
  archivedAt: number;
  /** The hex SHA-256 of the whole archive file. */
  sha256: string;
  /** The file as the operator named it. */
  file: string;
}

/** Why an archive was not made or a file is not an archive; its message is the operator's one-line reason. */
export class AuditArchiveError extends Error {
  override name = 'AuditArchiveError';
}
