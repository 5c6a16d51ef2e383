/**
 * The exchange simulator's iBBS desk (docs/design/exchange-sim.md, "BSE's files (iBBS desk)"): BSE's bulk
 * files as iBBS would take and give them, over the same simulated exchange and SimWire as the e-OFS shape.
 * It reads the upload files a member's link writes into its outbox (the desk's upload folder), applies
 * each row to the book as the e-OFS wire would (a WireOrder of the same terms), and answers each upload
 * with a success and a rejection download of the upload's own stamp and sequence; it writes allocation
 * files as the simulated exchange allots, and a bid book now and then, into the link's inbox (the desk's
 * download folder). The wire is src/oms/links/bse-ibbs/mapping.ts; the folders' discipline files.ts.
 *
 * Idempotent by construction: an upload is moved to done/ only after its answers are written, so a crash
 * in between makes the desk read it again; a NEW row whose bid is in the book answers its bid id again
 * without placing it, a MODIFY whose terms the live bid already has is answered without changing it, a
 * DELETE of a deleted bid is done; an answer file already written (in the download folder, its done/ or
 * failed/) is not written again. An allocation file's sequence is the id of its last event, so that one
 * written before a crash and not yet recorded in the cursor is recognised and not written twice.
 */
import { createHash } from 'node:crypto';
import { mkdir, readdir, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Logger } from 'pino';
import { CUTOFF_ORDER_TYPE, IST_OFFSET_MS } from '../domain/ofs/rules.js';
import type { OfferCategory } from '../domain/ofs/offer/offer.js';
import { Inbox, writeDownloadFile } from '../oms/links/bse-ibbs/files.js';
import {
  categoryCodeOf,
  downloadFileName,
  encodeDownload,
  IBBS_MAX_ROWS,
  IBBS_WIDTHS,
  parseUploadFile,
  readFileName,
  REFERENCE_PATTERN,
  type AllocationRow,
  type BidBookRow,
  type DownloadKind,
  type DownloadRows,
  type IbbsRow,
  type RejectionRow,
  type SuccessRow,
} from '../oms/links/bse-ibbs/mapping.js';
import { investorCategoryOf, referenceOf, seriesOf } from '../oms/links/nse-eofs/mapping.js';
import { OfsIssueRepository } from '../store/ofs/issues.js';
import { OfsOfferRepository } from '../store/ofs/offers.js';
import { SimEventHorizon, SimExchangeRepository, type SimBookEntry } from '../store/ofs/sim-exchange.js';
import { ExchangeReferenceRepository } from '../store/orders/exchange-references.js';
import { StreamCursorRepository } from '../store/orders/exchange-sessions.js';
import type { Store } from '../store/sql/database.js';
import { termsOf, type ItemAnswer, type SimWire, type WireOrder } from './wire.js';

/** The exchange segment whose bids go by iBBS files. */
export const IBBS_EXCHANGE = 'BSE_EQ';
export const DEFAULT_IBBS_POLL_MS = 500;
export const DEFAULT_BID_BOOK_EVERY_MS = 60_000;
/** Allocation rows per file, at most (the events read at once). */
const ALLOCATION_ROWS_PER_FILE = 500;
/** Orders per look-up of the book or the references (an IN list). */
const LOOKUP_CHUNK = 500;
const BID_ID_PATTERN = /^[1-9][0-9]{0,19}$/;
const MAX_QUANTITY = 10 ** IBBS_WIDTHS.quantityDigits - 1;
const MAX_PRICE_PAISE = 10 ** (IBBS_WIDTHS.priceDigits + IBBS_WIDTHS.priceDecimals) - 1;

/**
 * The iBBS bid id of a bid of the simulated book. The simulated exchange's order ids are `SIM` and 32
 * hexadecimal characters, which no iBBS bid id (a number of up to 20 digits, mapping.ts) can carry, and the
 * book has no number of its own. Decision: a number of 19 digits (10^18 to 10^19 - 1) derived from the
 * exchange order id by SHA-256: the same in every process and after every restart, with nothing stored,
 * and for every bid of the book (also those placed over the e-OFS shape). Two bids share one with a
 * chance of about n^2 / 1.8e19 (one in 18 million for a million bids); the desk finds a bid by its CP code
 * and checks the bid id against it, so a shared one could mislead only a link that keys bids by bid id
 * alone. An exchange order id that is a number already is kept as it is.
 */
export function bidIdOf(exchangeOrderId: string): string {
  if (BID_ID_PATTERN.test(exchangeOrderId)) return exchangeOrderId;
  const digest = createHash('sha256').update(exchangeOrderId).digest();
  return String((digest.readBigUInt64BE(0) % 9_000_000_000_000_000_000n) + 1_000_000_000_000_000_000n);
}

/** The epoch milliseconds of a file name's stamp (YYYYMMDDHHMMSS, India time). */
function epochOfStamp(stamp: string): number {
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((at, i) => Number(stamp.slice(at, i === 0 ? 4 : at + 2)));
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) - IST_OFFSET_MS;
}

function codeOf(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | null)?.code;
}

async function present(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return false;
    throw error;
  }
}

/** The names in a folder; none when it does not exist. */
async function namesIn(dir: string): Promise<string[]> {
  try {
    return await readdir(dir);
  } catch (error) {
    if (codeOf(error) === 'ENOENT') return [];
    throw new Error(`the download folder ${dir} cannot be read (${codeOf(error) ?? String(error)})`, { cause: error });
  }
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export interface IbbsDeskOptions {
  /** The trading member whose files the desk takes (1 to 12 of [0-9A-Z]); another member's upload is set aside. */
  memberCode: string;
  /** The link's outbox: the uploads, read through an Inbox (done/, failed/). */
  uploadDir: string;
  /** The link's inbox: the downloads written here (the link moves them to its done/ or failed/). */
  downloadDir: string;
  /** Between two passes of start(); default DEFAULT_IBBS_POLL_MS. */
  pollMs?: number;
  /** A bid book at most this often, when the book changed; default DEFAULT_BID_BOOK_EVERY_MS. */
  bidBookEveryMs?: number;
}

/** What one upload's rows made: the accepted and the refused, in the file's order. */
interface Answers {
  success: SuccessRow[];
  rejection: RejectionRow[];
}

/** The simulator's iBBS desk over one simulated exchange (its SimWire) and its store. */
export class IbbsDesk {
  readonly memberCode: string;
  private readonly uploads: Inbox;
  private readonly downloadDir: string;
  private readonly pollMs: number;
  private readonly bidBookEveryMs: number;
  private readonly book: SimExchangeRepository;
  private readonly references: ExchangeReferenceRepository;
  private readonly cursors: StreamCursorRepository;
  private readonly offers: OfsOfferRepository;
  private readonly issues: OfsIssueRepository;
  /** Where its allocation files have got to, in exchange_stream_cursors: one per download folder. */
  readonly cursorName: string;
  /** Where the allocation files have got to (the events' id); null until read from the store. */
  private cursor: number | null = null;
  private horizon: SimEventHorizon | null = null;
  /** The last bid book's time and content hash (in memory: a restarted desk writes one at its first pass). */
  private lastBidBook: { at: number; hash: string } | null = null;
  /** The next bid book's sequence; null until seeded from the download folder. */
  private bidBookSequence: number | null = null;
  private folders: Promise<void> | null = null;
  /** The pass under way or queued; null: none. */
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  private generation = 0;

  constructor(
    private readonly wire: SimWire,
    private readonly store: Pick<Store, 'db' | 'readDb' | 'dialect'>,
    options: IbbsDeskOptions,
    private readonly now: () => number = Date.now,
    private readonly logger?: Logger,
  ) {
    if (!/^[0-9A-Z]{1,12}$/.test(options.memberCode))
      throw new Error(`iBBS desk: member code "${options.memberCode}" is not 1 to 12 of [0-9A-Z]`);
    this.memberCode = options.memberCode;
    this.uploads = new Inbox(options.uploadDir);
    this.downloadDir = options.downloadDir;
    this.pollMs = options.pollMs ?? DEFAULT_IBBS_POLL_MS;
    this.bidBookEveryMs = options.bidBookEveryMs ?? DEFAULT_BID_BOOK_EVERY_MS;
    // Reads as the wire reads (the read connection); the references and the cursor on the writer.
    this.book = new SimExchangeRepository(store.readDb, store.dialect);
    this.references = new ExchangeReferenceRepository(store.db);
    this.cursors = new StreamCursorRepository(store.db);
    this.offers = new OfsOfferRepository(store.readDb);
    this.issues = new OfsIssueRepository(store.readDb);
    // One cursor per download folder: a desk over a new folder (a node's own, made at its start) writes every
    // allocation again from the first, so that none written into a folder since lost is missed (the link
    // applies each once).
    const folder = createHash('sha256').update(resolve(options.downloadDir)).digest('hex').slice(0, 16);
    this.cursorName = `sim-ibbs:${IBBS_EXCHANGE}:${this.memberCode}:${folder}`;
  }

  get uploadDir(): string {
    return this.uploads.dir;
  }

  /**
   * One pass: the uploads (oldest first), then the allocation events, then a bid book if one is due. Each
   * part runs whatever the others did; a part that failed (a folder that cannot be read, the database out)
   * makes the pass throw after the others ran. Passes never overlap: one asked for while another runs
   * starts when it ends.
   */
  runOnce(): Promise<void> {
    const next = (this.running ?? Promise.resolve()).catch(() => undefined).then(() => this.pass());
    this.running = next;
    const clear = () => {
      if (this.running === next) this.running = null;
    };
    void next.then(clear, clear);
    return next;
  }

  /** Runs a pass every `pollMs` until stop(); a failed pass is logged and the next goes on. */
  start(): void {
    if (this.timer !== null) return;
    const generation = ++this.generation;
    const next = () => {
      this.timer = setTimeout(() => {
        this.runOnce().then(
          () => {
            if (this.generation === generation) next();
          },
          (error: unknown) => {
            this.logger?.error({ err: error }, 'iBBS desk: pass failed; the next goes on');
            if (this.generation === generation) next();
          },
        );
      }, this.pollMs);
    };
    next();
  }

  /** Stops the passes; resolves once the pass under way has finished. */
  async stop(): Promise<void> {
    this.generation += 1;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running?.catch(() => undefined);
  }

  private async pass(): Promise<void> {
    this.folders ??= Promise.all([
      mkdir(this.uploads.dir, { recursive: true }),
      mkdir(this.downloadDir, { recursive: true }),
    ]).then(
      () => undefined,
      (error: unknown) => {
        this.folders = null;
        throw error;
      },
    );
    await this.folders;
    const failures: unknown[] = [];
    for (const part of [() => this.readUploads(), () => this.writeAllocations(), () => this.bidBookIfDue()]) {
      try {
        await part();
      } catch (error) {
        failures.push(error);
      }
    }
    if (failures.length === 1) throw failures[0];
    if (failures.length > 1) throw new AggregateError(failures, 'iBBS desk: parts of the pass failed');
  }

  // Uploads.

  private async readUploads(): Promise<void> {
    for (const name of await this.uploads.list()) {
      try {
        await this.readUpload(name);
      } catch (error) {
        // The file stays where it is, to be read again at the next pass (its rows apply idempotently).
        this.logger?.error({ err: error, file: name }, 'iBBS desk: an upload could not be handled; it is read again');
      }
    }
  }

  private async readUpload(name: string): Promise<void> {
    const read = readFileName(name);
    if (read === null || read.kind !== 'upload') {
      await this.setAside(name, 'not an iBBS upload file name (OFSBID_<member>_<YYYYMMDDHHMMSS>_<sequence>.csv)');
      return;
    }
    if (read.memberCode !== this.memberCode) {
      await this.setAside(name, `an upload of member ${read.memberCode}; this desk takes member ${this.memberCode}'s`);
      return;
    }
    const { rows, problems } = parseUploadFile(await this.uploads.read(name));
    if (rows.length > IBBS_MAX_ROWS) {
      await this.setAside(name, `the file holds ${rows.length} rows: iBBS takes at most ${IBBS_MAX_ROWS} a file`);
      return;
    }
    for (const problem of problems) {
      this.logger?.warn({ file: name, line: problem.line, reason: problem.reason }, 'iBBS desk: upload line not read');
    }
    if (rows.length > 0) {
      const answers = await this.apply(rows);
      const at = epochOfStamp(read.stamp);
      await this.answer('success', downloadFileName('success', this.memberCode, at, read.sequence), answers.success);
      await this.answer(
        'rejection',
        downloadFileName('rejection', this.memberCode, at, read.sequence),
        answers.rejection,
      );
    }
    if (problems.length > 0) {
      const reason = [
        `${rows.length} rows answered; lines not read:`,
        ...problems.map((problem) => `line ${problem.line}: ${problem.reason}`),
      ].join('\n');
      await this.setAside(name, reason);
      return;
    }
    await this.uploads.markDone(name);
  }

  private async setAside(name: string, reason: string): Promise<void> {
    this.logger?.warn({ file: name, reason }, 'iBBS desk: upload set aside');
    await this.uploads.setAside(name, reason);
  }

  /** Writes an answer file, unless it has no rows or was written already (before a crash: the link may have it). */
  private async answer<K extends 'success' | 'rejection'>(
    kind: K,
    name: string,
    rows: readonly DownloadRows[K][],
  ): Promise<void> {
    if (rows.length === 0) return;
    for (const dir of [this.downloadDir, join(this.downloadDir, 'done'), join(this.downloadDir, 'failed')]) {
      if (await present(join(dir, name))) {
        this.logger?.info({ file: name }, 'iBBS desk: answer written before; not written again');
        return;
      }
    }
    await writeDownloadFile(this.downloadDir, name, encodeDownload(kind, rows));
  }

  /** The rows of one upload applied in order: each run of new bids placed together, each change on its own. */
  private async apply(rows: readonly IbbsRow[]): Promise<Answers> {
    const answers: Answers = { success: [], rejection: [] };
    const slots: (SuccessRow | RejectionRow | null)[] = [];
    const refused = (row: IbbsRow, error: string) => slots.push({ ...row, error });
    const accepted = (row: IbbsRow, exchangeOrderId: string) => slots.push({ ...row, bidId: bidIdOf(exchangeOrderId) });

    const named = [...new Set(rows.map((row) => row.reference).filter((r): r is string => r !== null))];
    const orders = await this.references.ordersOf(IBBS_EXCHANGE, named);
    const entries = await this.bookEntries([...orders.values()]);
    const seen = new Set<string>();
    let run: { row: IbbsRow; order: WireOrder; slot: number }[] = [];
    const flush = async () => {
      if (run.length === 0) return;
      const placed = await this.wire.place(
        IBBS_EXCHANGE,
        run.map((item) => item.order),
      );
      placed.forEach((answer, i) => {
        const { row, slot } = run[i]!;
        slots[slot] =
          answer.status === 200 ? { ...row, bidId: bidIdOf(answer.orderId) } : { ...row, error: answer.message };
      });
      run = [];
    };

    for (const row of rows) {
      const problem = this.rowProblem(row, seen);
      if (row.reference !== null) seen.add(row.reference);
      if (problem !== null) {
        refused(row, problem);
        continue;
      }
      const orderId = orders.get(row.reference!);
      if (orderId === undefined) {
        refused(row, `Unknown client/CP code ${row.reference}`);
        continue;
      }
      const entry = entries.get(orderId);
      if (entry !== undefined && entry.exchange !== IBBS_EXCHANGE) {
        refused(row, `Client/CP code ${row.reference} names a bid of another exchange`);
        continue;
      }
      if (row.action === 'NEW') {
        // Already in the book (an upload read again after a crash): its bid id again, nothing placed twice.
        if (entry !== undefined) accepted(row, entry.exchangeOrderId);
        else {
          run.push({ row, order: wireOrderOf(row, orderId, ''), slot: slots.length });
          slots.push(null);
        }
        continue;
      }
      await flush();
      if (entry === undefined) {
        refused(row, 'The exchange has no bid for this client/CP code');
        continue;
      }
      const bidId = bidIdOf(entry.exchangeOrderId);
      if (row.bidId !== bidId) {
        refused(row, `Bid id ${row.bidId} is not the bid of client/CP code ${row.reference} (${bidId})`);
        continue;
      }
      const order = wireOrderOf(row, orderId, entry.exchangeOrderId);
      // A modification the live bid already carries (read again after a crash) is done: nothing changes twice.
      if (row.action === 'MODIFY' && entry.status === 'LIVE' && sameTerms(entry, order)) {
        accepted(row, entry.exchangeOrderId);
        continue;
      }
      const answer: ItemAnswer = await this.wire.change(IBBS_EXCHANGE, order);
      if (answer.status === 200) accepted(row, entry.exchangeOrderId);
      else refused(row, answer.message);
    }
    await flush();
    for (const slot of slots) {
      if (slot === null) throw new Error('iBBS desk: a new bid was left without an answer');
      if ('error' in slot) answers.rejection.push(slot);
      else answers.success.push(slot);
    }
    return answers;
  }

  /** What iBBS refuses in a row before the book is asked: its widths, its bid id for its action, a repeated CP code. */
  private rowProblem(row: IbbsRow, seen: ReadonlySet<string>): string | null {
    if (row.reference === null) return 'No client/CP code: the simulator keeps bids by the member reference';
    if (row.reference.length > IBBS_WIDTHS.cpCode || !REFERENCE_PATTERN.test(row.reference))
      return `Client/CP code ${row.reference} is not 1 to ${IBBS_WIDTHS.cpCode} of [0-9A-Z]`;
    if (seen.has(row.reference)) return `Client/CP code ${row.reference} repeats a row of the same file`;
    if (row.symbol.length > IBBS_WIDTHS.symbol)
      return `Symbol ${row.symbol} is longer than ${IBBS_WIDTHS.symbol} characters`;
    if (row.ucc.length > IBBS_WIDTHS.ucc) return `UCC ${row.ucc} is longer than ${IBBS_WIDTHS.ucc} characters`;
    if (row.custodian !== null && row.custodian.length > IBBS_WIDTHS.custodian)
      return `Custodian code ${row.custodian} is longer than ${IBBS_WIDTHS.custodian} characters`;
    if (row.quantity > MAX_QUANTITY)
      return `Quantity ${row.quantity} has more than ${IBBS_WIDTHS.quantityDigits} digits`;
    if (row.pricePaise > MAX_PRICE_PAISE) return `Price ${row.pricePaise / 100} is above the price field's width`;
    if (row.action === 'NEW' && row.bidId !== null) return `A new bid carries bid id 0, not ${row.bidId}`;
    if (row.action !== 'NEW' && row.bidId === null) return `A ${row.action.toLowerCase()} row names the bid id`;
    return null;
  }

  /** The book's entries of these orders, by order id. */
  private async bookEntries(orderIds: readonly string[]): Promise<Map<string, SimBookEntry>> {
    const entries = new Map<string, SimBookEntry>();
    for (const chunk of chunks(orderIds, LOOKUP_CHUNK)) {
      for (const entry of await this.book.findBookEntries(chunk)) entries.set(entry.orderId, entry);
    }
    return entries;
  }

  /** The references (CP codes) of these orders on BSE_EQ, by order id; an order without one is left out. */
  private async referencesOf(orderIds: readonly string[]): Promise<Map<string, string>> {
    const known = new Map<string, string>();
    for (const chunk of chunks(orderIds, LOOKUP_CHUNK)) {
      for (const [orderId, reference] of await this.references.known(IBBS_EXCHANGE, chunk))
        known.set(orderId, reference);
    }
    return known;
  }

  // Downloads of the desk's own: allocations and bid books.

  /**
   * The allocation events of BSE_EQ after the cursor, as far as they are complete (SimEventHorizon), each
   * file at most ALLOCATION_ROWS_PER_FILE rows; the cursor (StreamCursorRepository) is advanced after each
   * file is written. A file's sequence is its last event's id: one written before a crash and not yet in
   * the cursor is found by it and not written again.
   */
  private async writeAllocations(): Promise<void> {
    if (this.cursor === null) {
      const stored = await this.cursors.read(this.cursorName);
      this.horizon = new SimEventHorizon(this.store.readDb, this.store.dialect, stored);
      this.cursor = stored;
    }
    const upTo = await this.horizon!.advance();
    let written: number[] | null = null;
    for (;;) {
      const events = await this.book.eventsAfter(IBBS_EXCHANGE, this.cursor, upTo, ALLOCATION_ROWS_PER_FILE);
      if (events.length === 0) {
        // Every event up to the horizon is written (the other exchange's are not the desk's).
        this.cursor = Math.max(this.cursor, upTo);
        return;
      }
      written ??= await this.sequencesOf('allocation');
      const last = events.at(-1)!.id;
      const before = written.filter((seq) => seq > this.cursor! && seq <= last);
      if (before.length > 0) {
        // Written before a crash, the cursor not yet advanced: those events are the link's already.
        const through = Math.max(...before);
        await this.cursors.advance(this.cursorName, through);
        this.cursor = through;
        continue;
      }
      const orderIds = [...new Set(events.map((event) => event.orderId))];
      const [entries, references] = await Promise.all([this.bookEntries(orderIds), this.referencesOf(orderIds)]);
      const floors = this.floorCache();
      const rows: AllocationRow[] = [];
      for (const event of events) {
        const entry = entries.get(event.orderId);
        const bid = entry && (await this.rowOfBid(entry, references.get(event.orderId) ?? null, floors));
        if (bid === undefined || bid === null) {
          this.logger?.error({ event: event.id, orderId: event.orderId }, 'iBBS desk: an allotment cannot be written');
          continue;
        }
        rows.push({
          ...bid,
          allottedQuantity: event.quantity,
          allottedPricePaise: event.quantity > 0 ? event.pricePaise : null,
        });
      }
      if (rows.length > 0) {
        const name = downloadFileName('allocation', this.memberCode, this.now(), last);
        await writeDownloadFile(this.downloadDir, name, encodeDownload('allocation', rows));
        this.logger?.info({ file: name, rows: rows.length }, 'iBBS desk: allocation file written');
      }
      await this.cursors.advance(this.cursorName, last);
      this.cursor = last;
    }
  }

  /**
   * runOnce's bid book: at most once every `bidBookEveryMs`, and only when the book changed since the last
   * one (the book is read once per interval; a change is then shown at the next interval at the latest).
   */
  private async bidBookIfDue(): Promise<void> {
    if (this.lastBidBook !== null && this.now() - this.lastBidBook.at < this.bidBookEveryMs) return;
    await this.bidBook(true);
  }

  /**
   * Writes a bid book now: every bid of BSE_EQ in the simulated book (a deleted one with action D), in
   * the order they were entered; answers its file name, or null when the book holds none.
   */
  writeBidBook(): Promise<string | null> {
    return this.bidBook(false);
  }

  private async bidBook(onlyIfChanged: boolean): Promise<string | null> {
    const at = this.now();
    const rows = await this.bidBookRows();
    const content = encodeDownload('bidBook', rows);
    const hash = createHash('sha256').update(content).digest('hex');
    if (rows.length === 0 || (onlyIfChanged && this.lastBidBook?.hash === hash)) {
      this.lastBidBook = { at, hash: this.lastBidBook?.hash ?? '' };
      return null;
    }
    this.bidBookSequence ??= Math.max(0, ...(await this.sequencesOf('bidBook'))) + 1;
    for (;;) {
      const name = downloadFileName('bidBook', this.memberCode, at, this.bidBookSequence);
      this.bidBookSequence += 1;
      try {
        await writeDownloadFile(this.downloadDir, name, content);
      } catch (error) {
        if (/exists already/.test((error as Error).message)) continue;
        throw error;
      }
      this.lastBidBook = { at, hash };
      this.logger?.info({ file: name, rows: rows.length }, 'iBBS desk: bid book written');
      return name;
    }
  }

  private async bidBookRows(): Promise<BidBookRow[]> {
    const ids = await this.store.readDb
      .selectFrom('sim_exchange_bids')
      .select('order_id')
      .where('exchange', '=', IBBS_EXCHANGE)
      .orderBy('received_at')
      .orderBy('order_id')
      .execute();
    const orderIds = ids.map((row) => row.order_id);
    const [entries, references] = await Promise.all([this.bookEntries(orderIds), this.referencesOf(orderIds)]);
    const floors = this.floorCache();
    const rows: BidBookRow[] = [];
    for (const orderId of orderIds) {
      const entry = entries.get(orderId);
      const bid = entry && (await this.rowOfBid(entry, references.get(orderId) ?? null, floors));
      if (entry === undefined || bid === undefined || bid === null) continue;
      const modifiedAt = entry.updatedAt > entry.receivedAt ? entry.updatedAt : null;
      rows.push({
        ...bid,
        enteredAt: entry.receivedAt,
        modifiedAt,
        action: entry.status === 'CANCELLED' ? 'DELETE' : modifiedAt !== null ? 'MODIFY' : 'NEW',
      });
    }
    return rows;
  }

  /** A floor price per listing, read once per file. */
  private floorCache(): (entry: SimBookEntry) => Promise<number | null> {
    const floors = new Map<string, Promise<number | null>>();
    return (entry) => {
      const key = entry.offerId ?? `${entry.exchange}:${entry.scripToken}`;
      let floor = floors.get(key);
      if (floor === undefined) {
        floor =
          entry.offerId !== null
            ? this.offers.find(entry.offerId).then((found) => found?.offer.floorPricePaise ?? null)
            : this.issues.find(entry.exchange, entry.scripToken).then((found) => found?.floorPricePaise ?? null);
        floors.set(key, floor);
      }
      return floor;
    };
  }

  /**
   * The fields of a bid of the book as a download writes them, or null when a download cannot carry it
   * (no symbol, a category iBBS has no code for). The book keeps an offer's bidder (the UCC the bid
   * carried) and no custodian: the custodian is blank, an issue's bid (no bidder kept) has the UCC `NA`.
   */
  private async rowOfBid(
    entry: SimBookEntry,
    reference: string | null,
    floorOf: (entry: SimBookEntry) => Promise<number | null>,
  ): Promise<(Omit<IbbsRow, 'action' | 'bidId'> & { bidId: string }) | null> {
    const category = (entry.category === 'NON_RETAIL' ? 'NII' : entry.category) as OfferCategory;
    const cutoff = entry.orderType === CUTOFF_ORDER_TYPE;
    try {
      categoryCodeOf(category, cutoff);
    } catch {
      return null;
    }
    const pricePaise = cutoff ? await floorOf(entry) : entry.pricePaise;
    if (entry.symbol === null || pricePaise === null || pricePaise < 1) return null;
    return {
      symbol: entry.symbol,
      category,
      cutoff,
      reference,
      ucc: entry.userId ?? 'NA',
      custodian: null,
      quantity: entry.quantity,
      pricePaise,
      zeroMargin: entry.marginType === 'T',
      bidId: bidIdOf(entry.exchangeOrderId),
    };
  }

  /** The sequences of this member's files of a kind in the download folder, its done/ and its failed/. */
  private async sequencesOf(kind: DownloadKind): Promise<number[]> {
    const names = (
      await Promise.all(
        [this.downloadDir, join(this.downloadDir, 'done'), join(this.downloadDir, 'failed')].map(namesIn),
      )
    ).flat();
    const sequences: number[] = [];
    for (const name of names) {
      const read = readFileName(name);
      if (read !== null && read.kind === kind && read.memberCode === this.memberCode) sequences.push(read.sequence);
    }
    return sequences;
  }
}

/** A row of an upload as the e-OFS wire's order (parseOrder's shape): the sim's book is one for both wires. */
function wireOrderOf(row: IbbsRow, orderId: string, exchangeOrderId: string): WireOrder {
  const operationType = row.action === 'NEW' ? 'E' : row.action === 'MODIFY' ? 'M' : 'C';
  const order = {
    operationType,
    apiEchoBack: referenceOf(orderId),
    ourOrderId: orderId,
    orderId: exchangeOrderId,
    symbol: row.symbol,
  } as const;
  if (operationType === 'C') return { ...order, terms: null };
  return {
    ...order,
    terms: {
      series: seriesOf(row.category),
      // iBBS carries no client type: every bid is a client's.
      clientType: 'CLI',
      clientId: row.ucc,
      participantId: row.custodian,
      marginType: row.zeroMargin ? 0 : 1,
      isMarketOrder: row.cutoff,
      quantity: row.quantity,
      // A cut-off row (RIC, EMP) carries the floor price; the book keeps a cut-off bid at price 0.
      pricePaise: row.cutoff ? 0 : row.pricePaise,
      investorCategory: investorCategoryOf(row.category),
    },
  };
}

/** Whether the book's bid already has the order's terms. */
function sameTerms(entry: SimBookEntry, order: WireOrder): boolean {
  const terms = termsOf(order.terms!);
  return (
    entry.quantity === terms.quantity && entry.orderType === terms.orderType && entry.pricePaise === terms.pricePaise
  );
}
