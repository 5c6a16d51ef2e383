/**
 * BSE's iBBS bulk files as ordergate speaks them: the upload row's fields, codes and widths, the download
 * files' columns, and the files' names; pure functions, and nothing else. The bse-ibbs link writes its
 * bids with encodeUploadFile into the outbox folder (files.ts), and reads the exchange's answers from the
 * inbox with kindOfFileName and parseDownload; the simulator writes the same downloads with encodeDownload.
 * Pinning the link against BSE's current OFS notice and file layouts is an edit of this file alone. Each
 * fact is marked as ../shared/spec/exchange-links.md marks it:
 *
 * - [official] an exchange's or SEBI's own public page or notice;
 * - [secondary] third-party notes citing BSE's OFS guidelines and notice 20150122-30, not checked against
 *   them (every field of the upload row is such);
 * - Decision: not public; the most plausible shape, ours until BSE's document says otherwise.
 */
import { EXCHANGE_SYMBOL_PATTERN } from '../../../domain/ofs/display-text.js';
import type { OfferCategory } from '../../../domain/ofs/offer/offer.js';
import { IST_OFFSET_MS } from '../../../domain/ofs/rules.js';

/** [secondary] Rows in one upload file, at most. */
export const IBBS_MAX_ROWS = 100;

/** [secondary] The upload row's widths: characters of the text fields, digits of the numbers. */
export const IBBS_WIDTHS = {
  symbol: 10,
  cpCode: 16,
  ucc: 12,
  custodian: 12,
  quantityDigits: 11,
  /**
   * [secondary] "price (6,2)". Decision: six digits before the point and two after (at most 999999.99
   * rupees); read as a decimal of six digits in all (at most 9999.99) it would refuse offers in shares that
   * trade above Rs 9,999.
   */
  priceDigits: 6,
  priceDecimals: 2,
} as const;

/** [secondary] The category codes; `RIC` retail at cut-off (carrying the floor price); `EMP` employees. */
export const IBBS_CATEGORIES = ['MF', 'IC', 'OTHS', 'NII', 'RI', 'RIC', 'EMP'] as const;
export type IbbsCategoryCode = (typeof IBBS_CATEGORIES)[number];

/** [secondary] The margin flag: 1 = 0 %, 2 = 100 % (the reverse of NSE's marginType, 1 = 100 %, 0 = 0 %). */
export const IBBS_MARGIN = { ZERO: '1', FULL: '2' } as const;

/** [secondary] The action of a row: N new, M modify, D delete; ours in words. */
export const IBBS_ACTIONS = { NEW: 'N', MODIFY: 'M', DELETE: 'D' } as const;
export type IbbsAction = keyof typeof IBBS_ACTIONS;

/** [secondary] The bid id of a new bid. */
export const NEW_BID_ID = '0';

/**
 * Decision: the rows we write are comma-separated ([secondary] comma or pipe are both taken) and each ends
 * in CRLF, the last too: BSE's members upload from Windows desktops, a CRLF file reads right everywhere,
 * and our reader takes LF as well.
 */
export const IBBS_SEPARATOR = ',';
export const IBBS_LINE_END = '\r\n';

/**
 * Decision: ordergate's reference rides in the client/CP code field ([secondary] 16 characters, optional
 * to BSE): 1 to 16 of [0-9A-Z], made by the link (which keeps a table from reference to order), checked here.
 */
export const REFERENCE_PATTERN = /^[0-9A-Z]{1,16}$/;
/** Decision: UCCs and custodian codes are capital letters and digits (as src/domain/access/member-data.ts). */
const CODE_PATTERN = /^[0-9A-Z]+$/;
/** Decision: the exchange's bid id is a number other than 0, kept as text (its width is not public). */
const BID_ID_PATTERN = /^[1-9][0-9]{0,19}$/;
const SYMBOL_PATTERN = new RegExp(EXCHANGE_SYMBOL_PATTERN);

const MAX_QUANTITY = 10 ** IBBS_WIDTHS.quantityDigits - 1;
const MAX_PRICE_PAISE = 10 ** (IBBS_WIDTHS.priceDigits + IBBS_WIDTHS.priceDecimals) - 1;

/** A bid as the link hands it to the mapping: our names and units. */
export type IbbsBid = Omit<IbbsRow, 'reference'> & {
  /** ordergate's reference (REFERENCE_PATTERN), sent in the client/CP code field. */
  reference: string;
};

/**
 * The category code of a bid. Decision: iBBS has a cut-off code for retail only (RIC); an employee bid is
 * always a cut-off bid (src/domain/ofs/offer/allocation.ts), so EMP carries the floor price as RIC does, and
 * a priced employee bid or a cut-off bid of another category is refused.
 */
export function categoryCodeOf(category: OfferCategory, cutoff: boolean): IbbsCategoryCode {
  if (category === 'RETAIL') return cutoff ? 'RIC' : 'RI';
  if (category === 'EMPLOYEE') {
    if (!cutoff) throw new Error('an EMPLOYEE bid is a cut-off bid: iBBS has no priced employee bid (EMP)');
    return 'EMP';
  }
  if (cutoff) throw new Error(`a ${category} bid cannot be a cut-off bid: iBBS has a cut-off code for retail only`);
  return category;
}

/** Our category of a code, and whether it is a cut-off bid; null: no code of iBBS. */
export function categoryOfCode(code: string): { category: OfferCategory; cutoff: boolean } | null {
  if (code === 'RI' || code === 'RIC') return { category: 'RETAIL', cutoff: code === 'RIC' };
  if (code === 'EMP') return { category: 'EMPLOYEE', cutoff: true };
  if (code === 'NII' || code === 'MF' || code === 'IC' || code === 'OTHS') return { category: code, cutoff: false };
  return null;
}

/** Paise as iBBS writes a price: rupees with two decimals. */
export function formatIbbsPrice(paise: number): string {
  return `${Math.floor(paise / 100)}.${String(paise % 100).padStart(2, '0')}`;
}

/** `value` checked against a field of the row: its width and its characters, or an Error naming the field. */
function textField(name: string, value: string, width: number, pattern: RegExp): string {
  if (value.length > width) {
    throw new Error(`${name} "${value}" is ${value.length} characters: iBBS carries at most ${width}`);
  }
  if (!pattern.test(value)) throw new Error(`${name} "${value}" is not one iBBS carries (${String(pattern)})`);
  return value;
}

function quantityField(quantity: number): string {
  if (!Number.isSafeInteger(quantity) || quantity < 1 || quantity > MAX_QUANTITY) {
    throw new Error(
      `quantity ${quantity} is not a whole number from 1 to ${MAX_QUANTITY}: iBBS carries ${IBBS_WIDTHS.quantityDigits} digits`,
    );
  }
  return String(quantity);
}

function priceField(name: string, paise: number): string {
  if (!Number.isSafeInteger(paise) || paise < 1 || paise > MAX_PRICE_PAISE) {
    throw new Error(
      `${name} ${paise / 100} is not a price from 0.01 to ${formatIbbsPrice(MAX_PRICE_PAISE)} rupees: iBBS carries (${IBBS_WIDTHS.priceDigits},${IBBS_WIDTHS.priceDecimals})`,
    );
  }
  return formatIbbsPrice(paise);
}

function bidIdField(bid: IbbsBid): string {
  if (bid.action === 'NEW') {
    if (bid.bidId !== null) throw new Error(`a new bid carries no bid id (it has ${bid.bidId})`);
    return NEW_BID_ID;
  }
  if (bid.bidId === null) throw new Error(`a ${bid.action} row needs the exchange's bid id`);
  return textField('bid id', bid.bidId, 20, BID_ID_PATTERN);
}

/**
 * The bid's upload row (no line end), its ten fields in order. A field the row cannot carry is an Error
 * naming it: a bid is never written truncated. A cut-off bid carries `floorPricePaise`.
 */
export function toUploadRow(bid: IbbsBid, floorPricePaise: number): string {
  const price = bid.cutoff ? priceField('floor price', floorPricePaise) : priceField('price', bid.pricePaise);
  return [
    textField('symbol', bid.symbol, IBBS_WIDTHS.symbol, SYMBOL_PATTERN),
    categoryCodeOf(bid.category, bid.cutoff),
    textField('reference', bid.reference, IBBS_WIDTHS.cpCode, REFERENCE_PATTERN),
    textField('ucc', bid.ucc, IBBS_WIDTHS.ucc, CODE_PATTERN),
    bid.custodian === null ? '' : textField('custodian', bid.custodian, IBBS_WIDTHS.custodian, CODE_PATTERN),
    quantityField(bid.quantity),
    price,
    bid.zeroMargin ? IBBS_MARGIN.ZERO : IBBS_MARGIN.FULL,
    bidIdField(bid),
    IBBS_ACTIONS[bid.action],
  ].join(IBBS_SEPARATOR);
}

/**
 * An upload file: 1 to IBBS_MAX_ROWS rows, no header, each row ending in CRLF. `floorOf` gives an offer's
 * floor price by symbol (read for cut-off bids). Decision: two rows of one reference are refused, since the
 * exchange's answers are matched to bids by reference.
 */
export function encodeUploadFile(bids: readonly IbbsBid[], floorOf: (symbol: string) => number): string {
  if (bids.length === 0) throw new Error('an upload file holds at least one bid');
  if (bids.length > IBBS_MAX_ROWS) {
    throw new Error(`an upload file holds at most ${IBBS_MAX_ROWS} bids, not ${bids.length}`);
  }
  const references = new Set(bids.map((bid) => bid.reference));
  if (references.size < bids.length) throw new Error('an upload file holds one row per reference');
  return bids.map((bid) => toUploadRow(bid, bid.cutoff ? floorOf(bid.symbol) : 0) + IBBS_LINE_END).join('');
}

// Downloads.

/** A row of the upload's ten fields, as a download gives them back: our names and units. */
export interface IbbsRow {
  symbol: string;
  category: OfferCategory;
  cutoff: boolean;
  /** The client/CP code; null when blank (a bid entered on iBBS's screens, not by ordergate). */
  reference: string | null;
  ucc: string;
  custodian: string | null;
  quantity: number;
  /** The row's price; a cut-off bid's is the floor price. */
  pricePaise: number;
  zeroMargin: boolean;
  /** The exchange's bid id; null where the file has 0. */
  bidId: string | null;
  action: IbbsAction;
}

/** Decision: a success row is the upload's ten fields, with the bid id the exchange gave. */
export interface SuccessRow extends IbbsRow {
  bidId: string;
}

/** Decision: a rejection row is the ten fields and BSE's error text (the rest of the line: it may hold separators). */
export interface RejectionRow extends IbbsRow {
  error: string;
}

/**
 * Decision: a bid-book row: symbol, category, CP code, UCC, custodian, quantity, price, bid id, entry time,
 * modified time (blank: never modified), margin, action (the last one: D, a deleted bid). Times in
 * IBBS_TIME_FORMAT, read as epoch milliseconds.
 */
export interface BidBookRow extends IbbsRow {
  bidId: string;
  enteredAt: number;
  modifiedAt: number | null;
}

/**
 * Decision: an allocation row: symbol, category, CP code, UCC, custodian, quantity, price, bid id, allotted
 * quantity, allotted price (0 or blank when nothing is allotted: null), margin.
 */
export interface AllocationRow extends Omit<IbbsRow, 'action'> {
  bidId: string;
  allottedQuantity: number;
  allottedPricePaise: number | null;
}

export interface DownloadRows {
  success: SuccessRow;
  rejection: RejectionRow;
  bidBook: BidBookRow;
  allocation: AllocationRow;
}
export type DownloadKind = keyof DownloadRows;
export const DOWNLOAD_KINDS: readonly DownloadKind[] = ['success', 'rejection', 'bidBook', 'allocation'];

/** A line that could not be read: its number (from 1; 0 for the whole file), its text, why. */
export interface DownloadProblem {
  line: number;
  text: string;
  reason: string;
}

export interface ParsedDownload<Row> {
  rows: Row[];
  problems: DownloadProblem[];
}

/** Decision: the times of the downloads, India time (as BSE's files and screens give it). */
export const IBBS_TIME_FORMAT = 'DD/MM/YYYY HH:MM:SS';

/** An instant as IBBS_TIME_FORMAT writes it. */
export function formatIbbsTime(epochMs: number): string {
  const ist = new Date(epochMs + IST_OFFSET_MS).toISOString();
  return `${ist.slice(8, 10)}/${ist.slice(5, 7)}/${ist.slice(0, 4)} ${ist.slice(11, 19)}`;
}

/** A line's field that is not what its column holds. */
class BadField extends Error {}

/** Each field's reader: the field's text (trimmed) to our value, or a BadField. */
function readTime(name: string, text: string): number {
  const m = /^(\d{2})\/(\d{2})\/(\d{4}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
  const [d, mo, y, h, mi, s] = (m ?? []).slice(1).map(Number) as number[];
  const local = m === null ? NaN : Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
  if (Number.isNaN(local) || formatIbbsTime(local - IST_OFFSET_MS) !== text) {
    throw new BadField(`the ${name} "${text}" is not a time (${IBBS_TIME_FORMAT})`);
  }
  return local - IST_OFFSET_MS;
}

function readWhole(name: string, text: string): number {
  const value = Number(text);
  if (!/^\d{1,15}$/.test(text) || !Number.isSafeInteger(value)) {
    throw new BadField(`the ${name} "${text}" is not a whole number`);
  }
  return value;
}

function readPrice(name: string, text: string): number {
  if (/^\d+\.\d{3,}$/.test(text)) throw new BadField(`the ${name} "${text}" has more than two decimals`);
  const m = /^(\d{1,13})(?:\.(\d{1,2}))?$/.exec(text);
  if (m === null) throw new BadField(`the ${name} "${text}" is not a number of rupees`);
  return Number(m[1]) * 100 + Number((m[2] ?? '').padEnd(2, '0'));
}

function aboveZero(name: string, value: number): number {
  if (value < 1) throw new BadField(`the ${name} is 0`);
  return value;
}

function readMargin(text: string): boolean {
  if (text !== IBBS_MARGIN.ZERO && text !== IBBS_MARGIN.FULL) {
    throw new BadField(`unknown margin "${text}" (1: 0 %, 2: 100 %)`);
  }
  return text === IBBS_MARGIN.ZERO;
}

function readAction(text: string): IbbsAction {
  const action = (Object.keys(IBBS_ACTIONS) as IbbsAction[]).find((key) => IBBS_ACTIONS[key] === text);
  if (action === undefined) throw new BadField(`unknown action "${text}" (N, M or D)`);
  return action;
}

function readBidId(text: string): string | null {
  if (text === NEW_BID_ID) return null;
  if (!BID_ID_PATTERN.test(text)) throw new BadField(`the bid id "${text}" is not a number`);
  return text;
}

function exchangeBidId(text: string): string {
  const bidId = readBidId(text);
  if (bidId === null) throw new BadField("the row carries no bid id of the exchange's (0)");
  return bidId;
}

function readRequired(name: string, text: string): string {
  if (text === '') throw new BadField(`no ${name}`);
  return text;
}

/** The fields the rows of every kind share, from the first seven columns (symbol to price). */
function readBid(f: string[]): Omit<IbbsRow, 'zeroMargin' | 'bidId' | 'action'> {
  const code = categoryOfCode(f[1]!);
  if (code === null) throw new BadField(`unknown category "${f[1]}" (${IBBS_CATEGORIES.join(', ')})`);
  return {
    symbol: readRequired('symbol', f[0]!),
    ...code,
    reference: f[2] === '' ? null : f[2]!,
    ucc: readRequired('UCC', f[3]!),
    custodian: f[4] === '' ? null : f[4]!,
    quantity: aboveZero('quantity', readWhole('quantity', f[5]!)),
    pricePaise: aboveZero('price', readPrice('price', f[6]!)),
  };
}

function readTen(f: string[]): IbbsRow {
  return { ...readBid(f), zeroMargin: readMargin(f[7]!), bidId: readBidId(f[8]!), action: readAction(f[9]!) };
}

function readAllocation(f: string[]): AllocationRow {
  const allottedQuantity = readWhole('allotted quantity', f[8]!);
  const allottedPricePaise = f[9] === '' ? 0 : readPrice('allotted price', f[9]!);
  const row = { ...readBid(f), bidId: exchangeBidId(f[7]!), zeroMargin: readMargin(f[10]!) };
  if (allottedQuantity > row.quantity) {
    throw new BadField(`the allotted quantity ${allottedQuantity} is more than the bid's ${row.quantity}`);
  }
  if (allottedQuantity > 0 && allottedPricePaise === 0) throw new BadField('shares allotted at no price');
  return { ...row, allottedQuantity, allottedPricePaise: allottedPricePaise === 0 ? null : allottedPricePaise };
}

/** Each kind's columns: how many (a rejection's last takes the rest of the line), and how a row is read. */
const LAYOUTS: { [K in DownloadKind]: { columns: number; read: (fields: string[]) => DownloadRows[K] } } = {
  success: { columns: 10, read: (f) => ({ ...readTen(f), bidId: exchangeBidId(f[8]!) }) },
  rejection: { columns: 11, read: (f) => ({ ...readTen(f), error: f[10]! }) },
  bidBook: {
    columns: 12,
    read: (f) => ({
      ...readBid(f),
      bidId: exchangeBidId(f[7]!),
      enteredAt: readTime('entry time', f[8]!),
      modifiedAt: f[9] === '' ? null : readTime('modified time', f[9]!),
      zeroMargin: readMargin(f[10]!),
      action: readAction(f[11]!),
    }),
  },
  allocation: { columns: 11, read: readAllocation },
};

/**
 * A line's fields, trimmed. Its separator is the first comma or pipe in it (the symbol holds neither);
 * with `restInLast`, the last column takes the rest of the line, separators and all.
 */
function fieldsOf(line: string, columns: number, restInLast: boolean): string[] {
  const separator = /[,|]/.exec(line)?.[0] ?? IBBS_SEPARATOR;
  const parts = line.split(separator);
  const fields =
    restInLast && parts.length > columns
      ? [...parts.slice(0, columns - 1), parts.slice(columns - 1).join(separator)]
      : parts;
  return fields.map((field) => field.trim());
}

/**
 * A download file read line by line: each line into our names and units, or set aside as a problem while
 * the others go on. Comma or pipe separated; CRLF or LF; a UTF-8 BOM and blank lines skipped. A file with
 * no row it could read also answers a problem of line 0. Never throws on what the file holds.
 */
export function parseDownload<K extends DownloadKind>(kind: K, text: string): ParsedDownload<DownloadRows[K]> {
  const layout = LAYOUTS[kind] as { columns: number; read: (fields: string[]) => DownloadRows[K] };
  return parseLines(kind, layout.columns, kind === 'rejection', layout.read, text);
}

/**
 * An upload file as iBBS reads it (the simulator): each line's ten fields into our names and units, or a
 * problem, as parseDownload does. A new row's bid id (0) is null.
 */
export function parseUploadFile(text: string): ParsedDownload<IbbsRow> {
  return parseLines('upload', 10, false, readTen, text);
}

function parseLines<Row>(
  kind: string,
  columns: number,
  restInLast: boolean,
  read: (fields: string[]) => Row,
  text: string,
): ParsedDownload<Row> {
  const layout = { columns, read };
  const rows: Row[] = [];
  const problems: DownloadProblem[] = [];
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  lines.forEach((line, index) => {
    if (line.trim() === '') return;
    const fields = fieldsOf(line, layout.columns, restInLast);
    if (fields.length !== layout.columns) {
      problems.push({
        line: index + 1,
        text: line,
        reason: `${fields.length} fields where a ${kind} row has ${layout.columns}`,
      });
      return;
    }
    try {
      rows.push(layout.read(fields));
    } catch (error) {
      if (!(error instanceof BadField)) throw error;
      problems.push({ line: index + 1, text: line, reason: error.message });
    }
  });
  if (rows.length === 0) {
    const reason = problems.length === 0 ? 'the file holds no rows' : 'no line of the file could be read';
    problems.push({ line: 0, text: '', reason });
  }
  return { rows, problems };
}

/** The ten fields of a row, as a download writes them (no checks: the simulator's rows are ours). */
function tenFields(row: Omit<IbbsRow, 'action'>): string[] {
  return [
    row.symbol,
    categoryCodeOf(row.category, row.cutoff),
    row.reference ?? '',
    row.ucc,
    row.custodian ?? '',
    String(row.quantity),
    formatIbbsPrice(row.pricePaise),
    row.zeroMargin ? IBBS_MARGIN.ZERO : IBBS_MARGIN.FULL,
    row.bidId ?? NEW_BID_ID,
  ];
}

const WRITERS: { [K in DownloadKind]: (row: DownloadRows[K]) => string[] } = {
  success: (row) => [...tenFields(row), IBBS_ACTIONS[row.action]],
  rejection: (row) => [...tenFields(row), IBBS_ACTIONS[row.action], row.error],
  bidBook: (row) => [
    ...tenFields(row).slice(0, 7),
    row.bidId,
    formatIbbsTime(row.enteredAt),
    row.modifiedAt === null ? '' : formatIbbsTime(row.modifiedAt),
    row.zeroMargin ? IBBS_MARGIN.ZERO : IBBS_MARGIN.FULL,
    IBBS_ACTIONS[row.action],
  ],
  allocation: (row) => [
    ...tenFields(row).slice(0, 7),
    row.bidId,
    String(row.allottedQuantity),
    row.allottedPricePaise === null ? '0.00' : formatIbbsPrice(row.allottedPricePaise),
    row.zeroMargin ? IBBS_MARGIN.ZERO : IBBS_MARGIN.FULL,
  ],
};

/** A download file as the exchange (the simulator) writes it: no header, comma-separated, CRLF. */
export function encodeDownload<K extends DownloadKind>(kind: K, rows: readonly DownloadRows[K][]): string {
  const write = WRITERS[kind] as (row: DownloadRows[K]) => string[];
  return rows.map((row) => write(row).join(IBBS_SEPARATOR) + IBBS_LINE_END).join('');
}

// File names.

/**
 * Decision: BSE's names are not public. Every file is `<PREFIX>_<member code>_<YYYYMMDDHHMMSS>_<sequence>.csv`,
 * India time, the sequence at least four digits: a person finds a day's files by member and time. Uploads are
 * OFSBID; downloads SUCCESS, REJECT, BIDBOOK and ALLOC (the simulator answers an upload with the upload's time
 * and sequence). `.txt` is read as `.csv` ([secondary] iBBS takes both).
 */
export const UPLOAD_PREFIX = 'OFSBID';
export const DOWNLOAD_PREFIXES: { readonly [K in DownloadKind]: string } = {
  success: 'SUCCESS',
  rejection: 'REJECT',
  bidBook: 'BIDBOOK',
  allocation: 'ALLOC',
};

const FILE_NAME = /^([A-Z]+)_([0-9A-Z]{1,12})_(\d{14})_(\d{4,9})\.(?:csv|txt|CSV|TXT)$/;

export interface IbbsFileName {
  kind: DownloadKind | 'upload';
  memberCode: string;
  /** YYYYMMDDHHMMSS, India time. */
  stamp: string;
  sequence: number;
}

function fileName(prefix: string, memberCode: string, epochMs: number, sequence: number): string {
  if (!/^[0-9A-Z]{1,12}$/.test(memberCode)) throw new Error(`member code "${memberCode}" is not 1 to 12 of [0-9A-Z]`);
  if (!Number.isSafeInteger(sequence) || sequence < 0 || sequence > 999_999_999) {
    throw new Error(`sequence ${sequence} is not a whole number from 0 to 999999999`);
  }
  const stamp = new Date(epochMs + IST_OFFSET_MS).toISOString().replace(/\D/g, '').slice(0, 14);
  return `${prefix}_${memberCode}_${stamp}_${String(sequence).padStart(4, '0')}.csv`;
}

export function uploadFileName(memberCode: string, epochMs: number, sequence: number): string {
  return fileName(UPLOAD_PREFIX, memberCode, epochMs, sequence);
}

export function downloadFileName(kind: DownloadKind, memberCode: string, epochMs: number, sequence: number): string {
  return fileName(DOWNLOAD_PREFIXES[kind], memberCode, epochMs, sequence);
}

/** What a file's name says, or null for a name not of this shape. */
export function readFileName(name: string): IbbsFileName | null {
  const m = FILE_NAME.exec(name);
  if (m === null) return null;
  const kind = m[1] === UPLOAD_PREFIX ? 'upload' : DOWNLOAD_KINDS.find((k) => DOWNLOAD_PREFIXES[k] === m[1]);
  if (kind === undefined) return null;
  return { kind, memberCode: m[2]!, stamp: m[3]!, sequence: Number(m[4]) };
}

/** The kind of download a file's name says, or null (an upload, or no name of ours). */
export function kindOfFileName(name: string): DownloadKind | null {
  const kind = readFileName(name)?.kind;
  return kind === undefined || kind === 'upload' ? null : kind;
}

/** Oldest first: by the names' time and sequence, whatever their kind; names of no such shape last, by name. */
export function compareFileNames(a: string, b: string): number {
  const key = (name: string) => {
    const read = readFileName(name);
    return read === null ? '~' : `${read.stamp}${String(read.sequence).padStart(9, '0')}`;
  };
  const ka = key(a);
  const kb = key(b);
  if (ka !== kb) return ka < kb ? -1 : 1;
  return a < b ? -1 : a > b ? 1 : 0;
}
