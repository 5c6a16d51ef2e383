/**
 * The exchange link to BSE's iBBS (docs/exchanges.md, "BSE"): the OMS's port (../../exchange.ts) spoken in
 * bulk files. iBBS answers later than the call, so the link answers each bid it writes **unanswered** and
 * keeps what the exchange's answer files say as its own book, which `findBids` answers from:
 *
 * - `placeBids` writes the batch as upload files (at most IBBS_MAX_ROWS rows each) into the outbox. A bid the
 *   file cannot carry (a width exceeded, a cut-off bid of a category iBBS has no cut-off code for) is refused
 *   alone; the others are written.
 * - The inbox's success and rejection files are read in name order, each applied once and moved to `done/`
 *   (or set aside to `failed/` with its reason when no line of it can be read; the others go on). An answer
 *   row counts only as the answer to the row it matches: the one row of its reference awaiting an answer,
 *   with the same action and terms. Any other (a download arriving twice, late, out of order, for a bid
 *   ordergate did not send or for another member's client) changes nothing and is logged as a stray.
 * - A reference has at most one row awaiting its answer: a change is not written while one is awaited, and
 *   a call repeated while it is (the OMS tries a change again after its back-off) is answered from the
 *   answer once read, never written twice.
 * - Allocation files are the exchange's allotments: each row an event for the OMS, the file moved to
 *   `done/` once the OMS has acknowledged all of its events.
 * - The latest bid-book download is the exchange's book for reconciliation (`readBook`).
 *
 * What the link has written and read survives a restart as files do: every upload is first staged in the
 * outbox (`<name>.tmp`), then copied whole into the link's record folder, and only then published (renamed)
 * into the outbox. At start the link reads its record and the inbox's `done/` back in order, so that a bid
 * uploaded and unanswered is known as awaited (never uploaded twice), an answered one is in the book, and a
 * staged upload the crash left unpublished is published then (its record says it was meant to go).
 */
import { mkdir, readdir, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { BidTerms } from '../../../domain/ofs/rules.js';
import type { ExchangeReferenceRepository } from '../../../store/orders/exchange-references.js';
import type {
  ChangeAnswer,
  ChangeResult,
  ExchangeAdapter,
  ExchangeBid,
  ExchangeBook,
  ExchangeEvent,
  ExchangeOrder,
  HeldBid,
  LinkHealth,
  PlaceResult,
  Unanswered,
} from '../../exchange.js';
import {
  discardStaged,
  Inbox,
  isInFolder,
  isStaged,
  publishUpload,
  stageUpload,
  TMP_SUFFIX,
  writeUploadFile,
} from './files.js';
import {
  compareFileNames,
  IBBS_LINE_END,
  IBBS_MAX_ROWS,
  parseDownload,
  parseUploadFile,
  readFileName,
  toUploadRow,
  uploadFileName,
  type AllocationRow,
  type BidBookRow,
  type IbbsAction,
  type IbbsBid,
  type IbbsRow,
  type RejectionRow,
  type SuccessRow,
} from './mapping.js';
import { IST_OFFSET_MS } from '../../../domain/ofs/rules.js';

/** The first back-off of a bid written and not yet answered; it grows with the wait (answerBackoffMs). */
export const FIRST_ANSWER_WAIT_MS = 2_000;
/** The longest back-off of a bid awaiting its answer file. */
export const MAX_ANSWER_WAIT_MS = 60_000;
/** Between two reads of the inbox while started. */
export const DEFAULT_INBOX_POLL_MS = 500;
/** Events answered by one poll; the rest come with the next. */
const EVENTS_PER_POLL = 500;

/** Why a bid cannot be written for the exchange: the client has no UCC on the order. */
const NO_MEMBER =
  'ordergate holds no UCC for this bid’s client (placed before member data was set); the exchange needs one';

export interface BseIbbsLinkOptions {
  /** The exchange segment this link serves (ordergate's `exchange`: BSE_EQ). */
  exchange: string;
  /** The trading member's code at BSE: in the files' names; a download naming another member is set aside. */
  memberCode: string;
  /** Where upload files go, for iBBS (or whatever carries them there) to take. */
  outboxDir: string;
  /** Where the exchange's downloads arrive; applied ones move to `done/`, unreadable ones to `failed/`. */
  inboxDir: string;
  /** The link's own record of what it uploaded (a copy of each upload file); never shared. */
  recordDir: string;
  references: Pick<ExchangeReferenceRepository, 'referencesOf' | 'known' | 'ordersOf'>;
  /** The floor price of the offer a bid is in (a cut-off row carries it); null: none known. */
  floorOf: (bid: ExchangeBid) => Promise<number | null>;
  /**
   * Which day of its offer an allocation file dated `at` (epoch ms) settles for each of these orders: T or
   * T+1; null: not an offer's. Asked once per file.
   */
  daysOf: (orderIds: readonly string[], at: number) => Promise<ReadonlyMap<string, 'T' | 'T+1' | null>>;
  now: () => number;
  logger?: Logger;
  /** Between two reads of the inbox while started (ms). */
  pollMs?: number;
  /** The first back-off of a bid awaiting its answer (ms); it grows to MAX_ANSWER_WAIT_MS with the wait. */
  firstAnswerWaitMs?: number;
}

/** A row the link uploaded, as its record holds it. */
interface SentRow {
  file: string;
  /** When it was written (the file name's time at a restart). */
  at: number;
  action: IbbsAction;
  quantity: number;
  /** The row's price: a cut-off row's is the floor. */
  pricePaise: number;
  cutoff: boolean;
  bidId: string | null;
}

/** What the link knows of one reference. */
interface ReferenceState {
  /** The row written and not yet answered; at most one. */
  awaiting: SentRow | null;
  /** The bid as the exchange's answers left it; null until a new row's success. */
  held: HeldBid | null;
  /** The exchange's rejection of the new row. */
  refused: string | null;
  /** The answer to the last change (modify, delete), until a repeated call has taken it. */
  lastChange: { row: SentRow; answer: ChangeAnswer; taken: boolean } | null;
  /** An allocation file allotted part of the bid on T (a final row allotting nothing more leaves it allotted). */
  partAllotted: boolean;
}

/** An allocation file being delivered: its events not yet acknowledged. */
interface AllocationFile {
  name: string;
  pending: Set<string>;
}

const rowTermsEqual = (a: Pick<SentRow, 'action' | 'quantity' | 'pricePaise' | 'cutoff'>, b: typeof a) =>
  a.action === b.action && a.quantity === b.quantity && a.pricePaise === b.pricePaise && a.cutoff === b.cutoff;

/** The time a file's name says, as epoch ms; null for a name not of the files' shape. */
function timeOfName(name: string): number | null {
  const stamp = readFileName(name)?.stamp;
  if (stamp === undefined) return null;
  const [y, mo, d, h, mi, s] = [0, 4, 6, 8, 10, 12].map((at, i) => Number(stamp.slice(at, at + (i === 0 ? 4 : 2))));
  return Date.UTC(y!, mo! - 1, d!, h!, mi!, s!) - IST_OFFSET_MS;
}

export class BseIbbsLink implements ExchangeAdapter {
  private readonly refs = new Map<string, ReferenceState>();
  private readonly inbox: Inbox;
  private readonly uploadedDir: string;
  private loading: Promise<void> | null = null;
  private sequence = 0;
  private lastAnswerAt: number | null = null;
  /** Why the last upload could not be written, and why the inbox could not be read; null: fine. */
  private writeProblem: string | null = null;
  private readProblem: string | null = null;
  /** Allocation events not yet acknowledged, by event id, oldest file first. */
  private readonly events = new Map<string, ExchangeEvent>();
  private readonly allocationFiles = new Map<string, AllocationFile>();
  /** Downloads read with some lines unreadable: the lines, for the reason they are set aside with. */
  private readonly unreadableLines = new Map<string, string>();
  /** The latest bid-book download read, and its time. */
  private bidBook: { asOf: number; rows: BidBookRow[] } | null = null;
  private reading: Promise<void> | null = null;
  private running: AbortController | null = null;
  private polling: Promise<void> | null = null;
  /** Rows of downloads that answered nothing the link awaited (for the operator's eyes; the newest 100). */
  readonly strays: { file: string; reason: string }[] = [];

  constructor(private readonly options: BseIbbsLinkOptions) {
    this.inbox = new Inbox(options.inboxDir);
    this.uploadedDir = join(options.recordDir, 'uploaded');
  }

  get exchange(): string {
    return this.options.exchange;
  }

  private state(reference: string): ReferenceState {
    let state = this.refs.get(reference);
    if (state === undefined) {
      state = { awaiting: null, held: null, refused: null, lastChange: null, partAllotted: false };
      this.refs.set(reference, state);
    }
    return state;
  }

  // Start: the record and the applied answers read back.

  /** Reads the record and the inbox's done/ once (every call waits for the one read). */
  private load(): Promise<void> {
    this.loading ??= this.readBack().catch((error: unknown) => {
      this.loading = null;
      throw error;
    });
    return this.loading;
  }

  private async readBack(): Promise<void> {
    // The outbox and the inbox may be another system's mounts: a problem with them is the link's state
    // (a write or a read fails and says so), not a failure to start.
    await mkdir(this.uploadedDir, { recursive: true });
    await mkdir(this.options.inboxDir, { recursive: true }).catch(() => undefined);
    const record = await new Inbox(this.uploadedDir).list();
    // Applied downloads: done/, and failed/'s (some lines unreadable, the rest applied; those of no
    // readable line or of another member are skipped as they were).
    const applied = [
      ...(await listFiles(this.inbox.doneDir)).map((name) => ({ name, dir: this.inbox.doneDir })),
      ...(await listFiles(this.inbox.failedDir))
        .filter((name) => readFileName(baseName(name))?.memberCode === this.options.memberCode)
        .map((name) => ({ name, dir: this.inbox.failedDir })),
    ];
    // Uploads and their answers in the order they happened: an answer file bears its upload's time or a later
    // one, and at one time and sequence OFSBID sorts before REJECT and SUCCESS.
    const files = [...record.map((name) => ({ name, dir: null })), ...applied];
    files.sort((a, b) => compareDoneNames(a.name, b.name));
    for (const file of files) {
      if (file.dir === null) {
        const seq = readFileName(file.name)?.sequence;
        if (seq !== undefined) this.sequence = Math.max(this.sequence, seq);
        const text = await new Inbox(this.uploadedDir).read(file.name);
        this.recordSent(file.name, timeOfName(file.name) ?? this.options.now(), parseUploadFile(text).rows);
        await this.finishPublishing(file.name);
      } else {
        await this.applyDownload(file.name, await readFile(join(file.dir, file.name), 'utf8'), true);
      }
    }
  }

  /** An upload the record has: published now if a crash left it staged in the outbox. */
  private async finishPublishing(name: string): Promise<void> {
    const { outboxDir, logger } = this.options;
    if (await isStaged(outboxDir, name)) {
      if (await isInFolder(outboxDir, name)) await discardStaged(outboxDir, name);
      else {
        await publishUpload(outboxDir, name);
        logger?.warn({ exchange: this.exchange, file: name }, 'iBBS upload staged before a restart published now');
      }
    }
  }

  private recordSent(file: string, at: number, rows: readonly IbbsRow[]): void {
    for (const row of rows) {
      if (row.reference === null) continue;
      this.state(row.reference).awaiting = {
        file,
        at,
        action: row.action,
        quantity: row.quantity,
        pricePaise: row.pricePaise,
        cutoff: row.cutoff,
        bidId: row.bidId,
      };
    }
  }

  // Writing.

  async placeBids(bids: readonly ExchangeBid[]): Promise<PlaceResult[]> {
    await this.load();
    const results: PlaceResult[] = new Array<PlaceResult>(bids.length);
    const references = await this.options.references.referencesOf(
      this.exchange,
      bids.map((bid) => bid.orderId),
    );
    const rows: { index: number; reference: string; row: string; sent: Omit<SentRow, 'file' | 'at'> }[] = [];
    // A batch's cut-off bids in one listing read its floor once.
    const floors = new Map<string, Promise<number | null>>();
    const floorOf = (bid: ExchangeBid) => {
      const key = `${bid.offer?.offerId ?? ''}|${bid.exchange}|${bid.scripToken}`;
      if (!floors.has(key)) floors.set(key, this.options.floorOf(bid));
      return floors.get(key)!;
    };
    for (const [index, bid] of bids.entries()) {
      const reference = references.get(bid.orderId)!;
      const known = this.refs.get(reference);
      // Sent before (a repeat after a restart the OMS did not see): the book answers, nothing is written.
      if (known !== undefined && (known.awaiting !== null || known.held !== null || known.refused !== null)) {
        results[index] = this.placeAnswerOf(known);
        continue;
      }
      const built = await this.rowOf(bid, bid, reference, 'NEW', null, floorOf);
      if (typeof built === 'string') results[index] = { accepted: false, reason: built };
      else rows.push({ index, reference, ...built });
    }
    for (let i = 0; i < rows.length; i += IBBS_MAX_ROWS) {
      const chunk = rows.slice(i, i + IBBS_MAX_ROWS);
      const outcome = await this.upload(chunk);
      for (const { index } of chunk) results[index] = { accepted: null, ...outcome };
    }
    return results;
  }

  private placeAnswerOf(state: ReferenceState): PlaceResult {
    if (state.refused !== null) return { accepted: false, reason: state.refused };
    if (state.held !== null) return { accepted: true, exchangeOrderId: state.held.exchangeOrderId };
    return { accepted: null, ...this.awaitedOf(state.awaiting!) };
  }

  /** The bid's upload row at `terms`, or why it cannot be written. */
  private async rowOf(
    bid: ExchangeBid,
    terms: BidTerms,
    reference: string,
    action: IbbsAction,
    bidId: string | null,
    floorOf: (bid: ExchangeBid) => Promise<number | null> = this.options.floorOf,
  ): Promise<{ row: string; sent: Omit<SentRow, 'file' | 'at'> } | string> {
    if (bid.member === null) return NO_MEMBER;
    const cutoff = terms.orderType === 'RL-MKT';
    const ibbs: IbbsBid = {
      symbol: bid.symbol,
      // Decision (as the NSE mapping's investorCategoryOf): a bid of the one-listing model's NON_RETAIL is NII.
      category: bid.offer?.category ?? (bid.category === 'NON_RETAIL' ? 'NII' : bid.category),
      cutoff,
      reference,
      ucc: bid.member.ucc,
      custodian: bid.member.custodianCode,
      quantity: terms.quantity,
      pricePaise: terms.pricePaise,
      zeroMargin: bid.offer?.marginType === 'T',
      bidId,
      action,
    };
    const floor = cutoff ? await floorOf(bid) : 0;
    if (floor === null)
      return `iBBS needs the offer’s floor price for a cut-off bid, and ordergate has none for ${bid.symbol}`;
    try {
      const row = toUploadRow(ibbs, floor);
      return {
        row,
        sent: { action, quantity: terms.quantity, pricePaise: cutoff ? floor : terms.pricePaise, cutoff, bidId },
      };
    } catch (error) {
      return `iBBS cannot carry this bid: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /**
   * One upload file of `chunk`: staged in the outbox, recorded, marked awaited, then published. Answers the
   * bids' wait, or, when the file could not be written (nothing published), not sent.
   */
  private async upload(
    chunk: readonly { reference: string; row: string; sent: Omit<SentRow, 'file' | 'at'> }[],
  ): Promise<Unanswered> {
    const { outboxDir, memberCode, now, logger } = this.options;
    const at = now();
    this.sequence += 1;
    const name = uploadFileName(memberCode, at, this.sequence);
    const content = chunk.map(({ row }) => row + IBBS_LINE_END).join('');
    const notSent = (error: unknown): Unanswered => {
      this.writeProblem = error instanceof Error ? error.message : String(error);
      logger?.error({ exchange: this.exchange, file: name, problem: this.writeProblem }, 'iBBS upload not written');
      return { outcome: 'not-sent', why: this.writeProblem, retryAfterMs: MAX_ANSWER_WAIT_MS / 4 };
    };
    try {
      await mkdir(outboxDir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
        throw new Error(`the upload folder ${outboxDir} cannot be written (${error.code ?? String(error)})`);
      });
      await stageUpload(outboxDir, name, content);
    } catch (error) {
      return notSent(error);
    }
    try {
      await writeUploadFile(this.uploadedDir, name, content);
    } catch (error) {
      await discardStaged(outboxDir, name);
      return notSent(error);
    }
    // Awaited before it is published: an answer read the instant after finds what it answers.
    const states = chunk.map(({ reference, sent }) => {
      const state = this.state(reference);
      state.awaiting = { ...sent, file: name, at };
      return state;
    });
    try {
      await publishUpload(outboxDir, name);
    } catch (error) {
      // Never published: the record is withdrawn, and the bids are not awaited.
      await unlink(join(this.uploadedDir, name)).catch(() => undefined);
      await discardStaged(outboxDir, name);
      for (const state of states) state.awaiting = null;
      return notSent(error);
    }
    this.writeProblem = null;
    logger?.info({ exchange: this.exchange, file: name, rows: chunk.length }, 'iBBS upload written');
    return this.awaitedOf(states[0]!.awaiting!);
  }

  /** A row awaiting its answer, as the OMS is told: its file, and a back-off that grows with the wait. */
  private awaitedOf(row: SentRow): Unanswered {
    const first = this.options.firstAnswerWaitMs ?? FIRST_ANSWER_WAIT_MS;
    const waited = Math.max(0, this.options.now() - row.at);
    return {
      outcome: 'unknown',
      why: `sent in upload file ${row.file}; waiting for the exchange's answer file`,
      retryAfterMs: Math.min(MAX_ANSWER_WAIT_MS, Math.max(first, Math.round(waited / 2))),
    };
  }

  modify(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.change(bid, terms, 'MODIFY');
  }

  cancel(bid: ExchangeBid): Promise<ChangeResult> {
    return this.change(bid, bid, 'DELETE');
  }

  /**
   * Decision: iBBS has no carry-forward action ([secondary]: the upload's actions are N, M and D); a bid is
   * carried to T+1 as a modification of its bid id at its T+1 terms.
   */
  carryForward(bid: ExchangeBid, terms: BidTerms): Promise<ChangeResult> {
    return this.change(bid, terms, 'MODIFY');
  }

  private async change(bid: ExchangeBid, terms: BidTerms, action: IbbsAction): Promise<ChangeResult> {
    await this.load();
    const reference = (await this.options.references.known(this.exchange, [bid.orderId])).get(bid.orderId);
    // A bid the link has no record of (its record lost, or another node's before a failover) is changed by
    // the bid id the order keeps from the exchange's success file.
    const state = reference === undefined ? undefined : this.state(reference);
    const bidId = state?.held?.exchangeOrderId ?? bid.exchangeOrderId;
    if (reference === undefined || state === undefined || bidId === null)
      return { done: false, reason: 'The exchange holds no bid of this order (no success file named it)' };
    const built = await this.rowOf(bid, terms, reference, action, bidId);
    if (typeof built === 'string') return { done: false, reason: built };
    if (state.awaiting !== null) {
      if (rowTermsEqual(state.awaiting, built.sent)) return { done: null, ...this.awaitedOf(state.awaiting) };
      return {
        done: null,
        outcome: 'not-sent',
        why: `the answer to upload file ${state.awaiting.file} is awaited first`,
        retryAfterMs: this.awaitedOf(state.awaiting).retryAfterMs,
      };
    }
    const last = state.lastChange;
    if (last !== null && !last.taken && rowTermsEqual(last.row, built.sent)) {
      last.taken = true;
      return last.answer;
    }
    return { done: null, ...(await this.upload([{ reference, ...built }])) };
  }

  // Reading.

  async findBids(orderIds: readonly string[]): Promise<Map<string, ExchangeOrder>> {
    await this.load();
    const found = new Map<string, ExchangeOrder>();
    for (const [orderId, reference] of await this.options.references.known(this.exchange, orderIds)) {
      const state = this.refs.get(reference);
      if (state === undefined) continue;
      if (state.refused !== null) found.set(orderId, { status: 'REFUSED', reason: state.refused });
      else if (state.held !== null) found.set(orderId, { ...state.held });
      else if (state.awaiting !== null) {
        const booked = this.bookedInstead(reference, state);
        found.set(orderId, booked ?? { status: 'AWAITED', unanswered: this.awaitedOf(state.awaiting) });
      }
    }
    return found;
  }

  /**
   * A new bid whose answer file never came (lost in the transfer, or truncated) that a bid-book download
   * written after its upload shows: the exchange has it, with that bid id. Its answer row, should it come
   * later, is a stray. A bid the book does not show stays awaited: the book may have been written before
   * iBBS took the upload, and sending it again could place it twice.
   */
  private bookedInstead(reference: string, state: ReferenceState): HeldBid | undefined {
    const awaited = state.awaiting;
    if (awaited === null || awaited.action !== 'NEW' || this.bidBook === null) return undefined;
    if (this.bidBook.asOf <= awaited.at) return undefined;
    const row = this.bidBook.rows.find((r) => r.reference === reference && r.action !== 'DELETE');
    if (row === undefined) return undefined;
    state.awaiting = null;
    state.held = {
      exchangeOrderId: row.bidId,
      status: 'LIVE',
      orderType: row.cutoff ? 'RL-MKT' : 'RL',
      pricePaise: row.cutoff ? 0 : row.pricePaise,
      quantity: row.quantity,
    };
    this.stray(awaited.file, `${reference} NEW: no answer file read; the bid book shows bid ${row.bidId}`);
    return { ...state.held };
  }

  /** Reads the inbox now: every complete download, oldest first (one read at a time). */
  runOnce(): Promise<void> {
    this.reading ??= this.readInbox().finally(() => (this.reading = null));
    return this.reading;
  }

  private async readInbox(): Promise<void> {
    try {
      await this.load();
      let failing: string | null = null;
      for (const name of await this.inbox.list()) {
        // One file that cannot be taken now (unreadable, the database out) holds up none behind it: it is
        // tried again at the next read.
        await this.takeDownload(name).catch((error: unknown) => {
          failing = `${name} could not be taken: ${error instanceof Error ? error.message : String(error)}`;
          this.options.logger?.warn({ exchange: this.exchange, problem: failing }, 'iBBS download not taken');
        });
      }
      this.readProblem = failing;
    } catch (error) {
      this.readProblem = `the inbox cannot be read: ${error instanceof Error ? error.message : String(error)}`;
      this.options.logger?.warn({ exchange: this.exchange, problem: this.readProblem }, 'iBBS inbox read failed');
    }
  }

  /** A new download: applied and moved to done/ (an allocation file once its events are acknowledged), or set aside. */
  private async takeDownload(name: string): Promise<void> {
    const taken = this.allocationFiles.get(name);
    if (taken !== undefined) {
      // Read already: moved away once the OMS has taken its events (again now, if that failed before).
      if (taken.pending.size === 0) await this.finish(name);
      return;
    }
    const read = readFileName(name);
    if (read === null || read.kind === 'upload') {
      await this.setAside(
        name,
        'not a download of iBBS (its name is not SUCCESS_, REJECT_, BIDBOOK_ or ALLOC_<member>_<time>_<sequence>.csv)',
      );
      return;
    }
    if (read.memberCode !== this.options.memberCode) {
      await this.setAside(name, `a download for member ${read.memberCode}, not ${this.options.memberCode}`);
      return;
    }
    const text = await this.inbox.read(name);
    const applied = await this.applyDownload(name, text, false);
    if (applied === 'unreadable') return;
    this.lastAnswerAt = this.options.now();
    if (read.kind !== 'allocation' || this.allocationFiles.get(name)?.pending.size === 0) await this.finish(name);
  }

  /**
   * A download applied: to done/, or, when some of its lines could not be read, to failed/ with them (its
   * readable rows applied; the operator gets the rest from the exchange). Both are read back at a restart.
   */
  private async finish(name: string): Promise<void> {
    const unreadable = this.unreadableLines.get(name);
    if (unreadable === undefined) await this.markDone(name);
    else
      await this.setAside(
        name,
        `applied its readable rows; these lines could not be read, and what they say is not applied:\n${unreadable}`,
      );
    this.unreadableLines.delete(name);
    this.allocationFiles.delete(name);
  }

  /**
   * A download's rows applied to the book (or, for an allocation file read live, made events). Answers
   * 'unreadable' when no line could be read (the file set aside, when live).
   */
  private async applyDownload(name: string, text: string, replay: boolean): Promise<'applied' | 'unreadable'> {
    const kind = readFileName(baseName(name))?.kind;
    if (kind === undefined || kind === 'upload') return 'unreadable';
    const parsed = parseDownload(kind, text);
    if (parsed.rows.length === 0) {
      if (!replay) await this.setAside(name, parsed.problems.map((p) => `line ${p.line}: ${p.reason}`).join('\n'));
      return 'unreadable';
    }
    for (const problem of parsed.problems)
      this.stray(name, `line ${problem.line} unreadable (${problem.reason}): ${problem.text}`);
    if (!replay && parsed.problems.length > 0)
      this.unreadableLines.set(
        name,
        parsed.problems.map((problem) => `line ${problem.line}: ${problem.reason}: ${problem.text}`).join('\n'),
      );
    if (kind === 'success') for (const row of parsed.rows as SuccessRow[]) this.applyAnswer(name, row, null);
    else if (kind === 'rejection')
      for (const row of parsed.rows as RejectionRow[]) this.applyAnswer(name, row, row.error);
    else if (kind === 'bidBook') {
      const asOf = timeOfName(baseName(name)) ?? this.options.now();
      if (this.bidBook === null || asOf >= this.bidBook.asOf)
        this.bidBook = { asOf, rows: parsed.rows as BidBookRow[] };
    } else await this.takeAllocation(name, parsed.rows as AllocationRow[], replay);
    return 'applied';
  }

  /** One answer row: applied when it answers the row its reference awaits; else a stray. */
  private applyAnswer(file: string, row: SuccessRow | RejectionRow, error: string | null): void {
    const state = row.reference === null ? undefined : this.refs.get(row.reference);
    const awaited = state?.awaiting;
    const answers =
      awaited !== undefined &&
      awaited !== null &&
      rowTermsEqual(awaited, row) &&
      (awaited.action === 'NEW' || awaited.bidId === row.bidId);
    if (!answers || state === undefined) {
      this.stray(file, `${row.reference ?? '(no reference)'} ${row.action}: answers no row awaiting its answer`);
      return;
    }
    state.awaiting = null;
    // A cut-off bid's terms carry no price (the row's is the floor), as the OMS's and NSE's do.
    const terms = {
      orderType: awaited.cutoff ? ('RL-MKT' as const) : ('RL' as const),
      pricePaise: awaited.cutoff ? 0 : awaited.pricePaise,
      quantity: awaited.quantity,
    };
    if (awaited.action === 'NEW') {
      if (error !== null) state.refused = error;
      else state.held = { exchangeOrderId: row.bidId!, status: 'LIVE', ...terms };
      return;
    }
    const answer: ChangeAnswer = error === null ? { done: true } : { done: false, reason: error };
    state.lastChange = { row: awaited, answer, taken: false };
    if (error !== null || state.held === null) return;
    state.held = awaited.action === 'DELETE' ? { ...state.held, status: 'CANCELLED' } : { ...state.held, ...terms };
  }

  private stray(file: string, reason: string): void {
    this.options.logger?.warn({ exchange: this.exchange, file, reason }, 'iBBS download row set aside');
    this.strays.push({ file, reason });
    if (this.strays.length > 100) this.strays.shift();
  }

  private async setAside(name: string, reason: string): Promise<void> {
    this.stray(name, reason);
    await this.inbox.setAside(name, reason);
  }

  private async markDone(name: string): Promise<void> {
    await this.inbox.markDone(name);
  }

  /**
   * An allocation file: each row's allotment noted in the link's book (the bid-book download has no
   * allotted state, and reconciliation reads both), and, read live, made an event for the OMS. A row
   * naming no order of ours is a stray.
   */
  private async takeAllocation(name: string, rows: readonly AllocationRow[], replay: boolean): Promise<void> {
    const at = timeOfName(baseName(name)) ?? this.options.now();
    const references = rows.flatMap((row) => (row.reference === null ? [] : [row.reference]));
    const orders = await this.options.references.ordersOf(this.exchange, references);
    const file: AllocationFile = { name, pending: new Set() };
    const days = await this.options.daysOf([...orders.values()], at);
    for (const [i, row] of rows.entries()) {
      const orderId = row.reference === null ? undefined : orders.get(row.reference);
      if (orderId === undefined) {
        if (!replay)
          this.stray(
            name,
            `row ${i + 1}: ${row.reference ?? '(no reference)'} names no bid of ordergate's (UCC ${row.ucc})`,
          );
        continue;
      }
      const event = eventOf(`${name}#${i + 1}`, orderId, row, days.get(orderId) ?? null, name);
      const state = this.refs.get(row.reference!);
      const held = state?.held;
      if (held != null && held.exchangeOrderId === row.bidId) {
        if (event.kind === 'PART_ALLOTTED') state!.partAllotted = true;
        // Allotted nothing more at the last close after a part on T: allotted, as the OMS makes the order.
        if (event.kind === 'ALLOTTED' || event.kind === 'NOT_ALLOTTED')
          held.status = event.kind === 'NOT_ALLOTTED' && state!.partAllotted ? 'ALLOTTED' : event.kind;
      }
      if (replay) continue;
      file.pending.add(event.eventId);
      this.events.set(event.eventId, event);
    }
    if (!replay) this.allocationFiles.set(name, file);
  }

  async pollEvents(skip?: Pick<ReadonlySet<string>, 'has'>): Promise<ExchangeEvent[]> {
    const events: ExchangeEvent[] = [];
    for (const event of this.events.values()) {
      if (events.length === EVENTS_PER_POLL) break;
      if (skip === undefined || !skip.has(event.eventId)) events.push(event);
    }
    return events;
  }

  async acknowledge(eventIds: readonly string[]): Promise<void> {
    const finished = new Set<string>();
    for (const id of eventIds) {
      if (!this.events.delete(id)) continue;
      const name = id.slice(0, id.lastIndexOf('#'));
      const file = this.allocationFiles.get(name);
      file?.pending.delete(id);
      if (file !== undefined && file.pending.size === 0) finished.add(name);
    }
    // Every event is taken first; a file that cannot be moved now is moved at the next read of the inbox.
    for (const name of finished) {
      await this.finish(name).catch((error: unknown) =>
        this.options.logger?.warn({ err: error, exchange: this.exchange, file: name }, 'iBBS file not moved yet'),
      );
    }
  }

  async readBook(exchange: string, symbol: string): Promise<ExchangeBook | null> {
    await this.load();
    if (exchange !== this.exchange || this.bidBook === null) return null;
    const rows = this.bidBook.rows.filter((row) => row.symbol === symbol);
    const orders = await this.options.references.ordersOf(
      this.exchange,
      rows.flatMap((row) => (row.reference === null ? [] : [row.reference])),
    );
    return {
      asOf: this.bidBook.asOf,
      entries: rows.map((row) => ({
        exchange,
        symbol,
        orderId: (row.reference !== null && orders.get(row.reference)) || null,
        reference: row.reference,
        exchangeOrderId: row.bidId,
        // The bid book has no allotted state: an allotment the allocation files told is the exchange's too.
        status: row.action === 'DELETE' ? 'CANCELLED' : (this.heldOf(row)?.status ?? 'LIVE'),
        orderType: row.cutoff ? 'RL-MKT' : 'RL',
        pricePaise: row.cutoff ? 0 : row.pricePaise,
        quantity: row.quantity,
        ucc: row.ucc,
      })),
    };
  }

  /** The link's book entry of a bid-book row: by its reference, when the bid ids agree. */
  private heldOf(row: BidBookRow): HeldBid | undefined {
    const held = row.reference === null ? null : this.refs.get(row.reference)?.held;
    return held != null && held.exchangeOrderId === row.bidId ? held : undefined;
  }

  // Running.

  /**
   * Reads the inbox every pollMs until stop(). Started again (a node taking the session back), the link
   * first forgets what it knew and reads its record and done/ again: another node may have written and read
   * files meanwhile.
   */
  start(): void {
    if (this.running !== null) return;
    if (this.loading !== null) {
      this.loading = null;
      this.refs.clear();
      this.events.clear();
      this.allocationFiles.clear();
      this.bidBook = null;
    }
    const running = new AbortController();
    this.running = running;
    const pollMs = this.options.pollMs ?? DEFAULT_INBOX_POLL_MS;
    this.polling = (async () => {
      while (!running.signal.aborted) {
        await this.runOnce();
        await delay(pollMs, undefined, { signal: running.signal }).catch(() => undefined);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running?.abort();
    this.running = null;
    await this.polling;
    this.polling = null;
    await this.reading;
  }

  health(): LinkHealth[] {
    return [
      {
        exchange: this.exchange,
        connected: this.writeProblem === null && this.readProblem === null,
        lastAnswerAt: this.lastAnswerAt,
        problem: [this.writeProblem, this.readProblem].filter((problem) => problem !== null).join('; ') || null,
      },
    ];
  }
}

/** The OMS's event of an allocation row: the day tells a partial T allotment (the bid lives on) from a final one. */
function eventOf(
  eventId: string,
  orderId: string,
  row: AllocationRow,
  day: 'T' | 'T+1' | null,
  file: string,
): ExchangeEvent {
  const allotted = row.allottedQuantity;
  const price = row.allottedPricePaise;
  const said = `BSE allotted ${allotted} of ${row.quantity}${price === null ? '' : ` at Rs ${(price / 100).toFixed(2)}`} (allocation file ${file})`;
  if (day === 'T' && allotted < row.quantity) {
    return {
      eventId,
      orderId,
      kind: allotted > 0 ? 'PART_ALLOTTED' : 'NOTE',
      quantity: allotted,
      pricePaise: allotted > 0 ? price : null,
      reason: `${said}; the unallotted quantity may be carried forward to T+1`,
      day,
    };
  }
  return {
    eventId,
    orderId,
    kind: allotted > 0 ? 'ALLOTTED' : 'NOT_ALLOTTED',
    quantity: allotted,
    pricePaise: allotted > 0 ? price : null,
    reason: allotted > 0 ? said : `Not allotted by BSE (allocation file ${file})`,
    day,
  };
}

/**
 * A name in done/ without the `.2`, `.3`, ... that a second file of one name got there (files.ts), when
 * the rest is a name of the files' shape.
 */
function baseName(name: string): string {
  const base = name.replace(/\.\d+$/, '');
  return base !== name && readFileName(base) !== null ? base : name;
}

/** Oldest first by the names' time and sequence (a second file of one name after the first). */
function compareDoneNames(a: string, b: string): number {
  const byName = compareFileNames(baseName(a), baseName(b));
  if (byName !== 0) return byName;
  const copy = (name: string) => (baseName(name) === name ? 1 : Number(name.slice(name.lastIndexOf('.') + 1)));
  return copy(a) - copy(b);
}

/** The complete files of a folder of the files' names, oldest first; none when it does not exist. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  return entries
    .filter((entry) => entry.isFile() && !entry.name.endsWith(TMP_SUFFIX) && !entry.name.startsWith('.'))
    .map((entry) => entry.name)
    .filter((name) => readFileName(baseName(name)) !== null)
    .sort(compareDoneNames);
}
