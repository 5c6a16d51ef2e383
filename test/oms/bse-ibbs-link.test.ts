/**
 * The BSE link (src/oms/links/bse-ibbs/link.ts) under the OMS worker, with a hand-made iBBS in the test
 * (it reads the outbox and writes the answers it is told to): bids become one upload file, each waits
 * EXXMITTED until its answer file is read, then settles with the exchange's bid id or its rejection; a bid
 * the file cannot carry is refused alone; changes go by bid id and are written once however often the OMS
 * asks; allocation files become allotments. The faults of issue 50 item 5: a download twice, late, out of
 * order, truncated, for an unknown bid or another member; an outbox that cannot be written; the link
 * restarted between writing a file and its answer, and between staging and publishing it. Nothing is lost,
 * nothing applied or uploaded twice.
 */
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BseIbbsLink, type BseIbbsLinkOptions } from '../../src/oms/links/bse-ibbs/link.js';
import {
  downloadFileName,
  encodeDownload,
  parseUploadFile,
  readFileName,
  type AllocationRow,
  type IbbsRow,
} from '../../src/oms/links/bse-ibbs/mapping.js';
import { writeUploadFile } from '../../src/oms/links/bse-ibbs/files.js';
import { ExchangeReferenceRepository } from '../../src/store/orders/exchange-references.js';
import { ObservedExchange, OmsBench } from './fixture.js';

const MEMBER = 'M1234';
const FIRST_WAIT_MS = 2_000;

let bench: OmsBench;
let dir: string;
beforeEach(async () => {
  bench = await OmsBench.open();
  dir = mkdtempSync(join(tmpdir(), 'ordergate-bse-link-'));
});
afterEach(async () => {
  await bench.close();
  rmSync(dir, { recursive: true, force: true });
});

const outbox = () => join(dir, 'outbox');
const inbox = () => join(dir, 'inbox');

function link(overrides: Partial<BseIbbsLinkOptions> = {}): BseIbbsLink {
  return new BseIbbsLink({
    exchange: 'BSE_EQ',
    memberCode: MEMBER,
    outboxDir: outbox(),
    inboxDir: inbox(),
    recordDir: join(dir, 'record'),
    references: new ExchangeReferenceRepository(bench.store.db),
    floorOf: async () => 10_000,
    daysOf: async (orderIds) => new Map(orderIds.map((orderId) => [orderId, null])),
    now: bench.now,
    firstAnswerWaitMs: FIRST_WAIT_MS,
    ...overrides,
  });
}

/** The upload files published in the outbox (not those iBBS has taken), oldest first. */
const uploads = () =>
  existsSync(outbox())
    ? readdirSync(outbox())
        .filter((name) => readFileName(name)?.kind === 'upload')
        .sort()
    : [];

/**
 * A hand-made iBBS: takes every upload in the outbox (moved to outbox/taken/), and answers each row as
 * `decide` says (a bid id, or an error text), in SUCCESS and REJECT files of the upload's time and sequence.
 * Answers the rows it took.
 */
let nextBidId = 7001;
async function iBbs(decide: (row: IbbsRow) => string | { error: string } = () => String(nextBidId++)) {
  const taken: IbbsRow[] = [];
  mkdirSync(join(outbox(), 'taken'), { recursive: true });
  for (const name of uploads()) {
    const rows = parseUploadFile(readFileSync(join(outbox(), name), 'utf8')).rows;
    renameSync(join(outbox(), name), join(outbox(), 'taken', name));
    const read = readFileName(name)!;
    const at =
      Date.UTC(
        Number(read.stamp.slice(0, 4)),
        Number(read.stamp.slice(4, 6)) - 1,
        Number(read.stamp.slice(6, 8)),
        Number(read.stamp.slice(8, 10)),
        Number(read.stamp.slice(10, 12)),
        Number(read.stamp.slice(12, 14)),
      ) -
      5.5 * 3_600_000;
    const ok = [];
    const refused = [];
    for (const row of rows) {
      taken.push(row);
      const answer = decide(row);
      if (typeof answer === 'string') ok.push({ ...row, bidId: row.bidId ?? answer });
      else refused.push({ ...row, error: answer.error });
    }
    mkdirSync(inbox(), { recursive: true });
    if (ok.length > 0)
      await writeUploadFile(
        inbox(),
        downloadFileName('success', MEMBER, at, read.sequence),
        encodeDownload('success', ok),
      );
    if (refused.length > 0)
      await writeUploadFile(
        inbox(),
        downloadFileName('rejection', MEMBER, at, read.sequence),
        encodeDownload('rejection', refused),
      );
  }
  return taken;
}

/** Drops a download into the inbox as the exchange would (whole), at the bench's time. */
let downloadSequence = 9000;
async function drop(kind: Parameters<typeof downloadFileName>[0], content: string, member = MEMBER): Promise<string> {
  const name = downloadFileName(kind, member, bench.now(), downloadSequence++);
  mkdirSync(inbox(), { recursive: true });
  await writeUploadFile(inbox(), name, content);
  return name;
}

const done = () => (existsSync(join(inbox(), 'done')) ? readdirSync(join(inbox(), 'done')).sort() : []);
const failed = () => (existsSync(join(inbox(), 'failed')) ? readdirSync(join(inbox(), 'failed')).sort() : []);

describe('the BSE link under the OMS', () => {
  it('writes a batch as one upload file, waits EXXMITTED for the answer files, then settles each bid once', async () => {
    const a = await bench.placeOrder({ quantity: 10 });
    const b = await bench.placeOrder({ quantity: 11 });
    const tooBig = await bench.placeOrder({ quantity: 100_000_000_000 });
    const bse = link();
    const exchange = new ObservedExchange(bse);
    const worker = bench.worker({ exchange });
    await worker.runOnce();

    expect(uploads()).toHaveLength(1);
    expect(parseUploadFile(readFileSync(join(outbox(), uploads()[0]!), 'utf8')).rows).toHaveLength(2);
    expect(await bench.status(a)).toBe('EXXMITTED');
    expect((await bench.history(a)).at(-1)!.reason).toMatch(
      new RegExp(`^Waiting for the exchange's answer \\(sent in upload file ${uploads()[0]!}`),
    );
    // The bid the file cannot carry is refused alone, with why.
    expect(await bench.order(tooBig)).toMatchObject({
      status: 'ORDERERROR',
      error_reason: expect.stringMatching(/^iBBS cannot carry this bid: quantity 100000000000/),
    });

    await iBbs((row) => (row.quantity === 11 ? { error: 'UCC not registered for OFS' } : '7001'));
    await bse.runOnce();
    expect(done()).toHaveLength(2);

    // Before the back-off nothing is read; after it the book answers, and nothing is uploaded again.
    bench.clock.now += FIRST_WAIT_MS - 1;
    expect(await worker.runOnce()).toBe(0);
    bench.clock.now += 2;
    expect(await worker.runOnce()).toBe(2);
    expect(await bench.order(a)).toMatchObject({ status: 'PENDING', exchange_order_id: '7001' });
    expect(await bench.order(b)).toMatchObject({ status: 'ORDERERROR', error_reason: 'UCC not registered for OFS' });
    expect(exchange.count('place', a)).toBe(1);
    expect(uploads()).toHaveLength(0);
    expect(readdirSync(join(outbox(), 'taken'))).toHaveLength(1);
    expect(await bench.openOutbox()).toBe(0);
  });

  it('restarted between writing a file and its answer, knows the bid is awaited and never uploads it again', async () => {
    const orderId = await bench.placeOrder();
    const worker = bench.worker({ exchange: link() });
    await worker.runOnce();
    expect(uploads()).toHaveLength(1);

    // A new link over the same folders (the node restarted): the bid is awaited, not absent.
    const restarted = link();
    const again = bench.worker({ exchange: restarted });
    bench.clock.now += FIRST_WAIT_MS + 1;
    await again.runOnce();
    expect(uploads()).toHaveLength(1);
    expect(await bench.status(orderId)).toBe('EXXMITTED');

    await iBbs();
    await restarted.runOnce();
    bench.clock.now += 60_001;
    await again.runOnce();
    expect(await bench.status(orderId)).toBe('PENDING');
    expect(readdirSync(join(outbox(), 'taken'))).toHaveLength(1);
  });

  it('publishes at start an upload a crash left staged after its record, and forgets one staged without', async () => {
    const orderId = await bench.placeOrder();
    await bench.worker({ exchange: link() }).runOnce();
    const [name] = uploads();
    // As a crash between recording the file and renaming it into the outbox leaves it.
    renameSync(join(outbox(), name!), join(outbox(), `${name!}.tmp`));
    // And one staged with no record (a crash before the record): never meant to go.
    writeFileSync(join(outbox(), 'OFSBID_M1234_20261123103000_0099.csv.tmp'), 'junk');

    const restarted = link();
    await restarted.runOnce();
    expect(uploads()).toEqual([name]);
    expect(existsSync(join(outbox(), `${name!}.tmp`))).toBe(false);
    await iBbs();
    await restarted.runOnce();
    bench.clock.now += FIRST_WAIT_MS + 1;
    await bench.worker({ exchange: restarted }).runOnce();
    expect(await bench.status(orderId)).toBe('PENDING');
  });

  it('answers not sent when the outbox cannot be written, and writes the bid once when it can', async () => {
    const orderId = await bench.placeOrder();
    mkdirSync(dir, { recursive: true });
    writeFileSync(outbox(), 'a file where the outbox folder should be');
    const bse = link();
    const worker = bench.worker({ exchange: bse });
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('EXXMITTED');
    expect((await bench.history(orderId)).at(-1)!.reason).toMatch(
      /^Not yet taken by the exchange \(.*the upload folder .*outbox cannot be written \(E(NOTDIR|EXIST)\)/,
    );
    expect(bse.health()[0]).toMatchObject({ connected: false, problem: expect.stringMatching(/cannot be written/) });

    rmSync(outbox());
    mkdirSync(outbox());
    bench.clock.now += 60_000;
    await worker.runOnce();
    expect(uploads()).toHaveLength(1);
    expect(readdirSync(join(dir, 'record', 'uploaded'))).toEqual(uploads());
    expect(bse.health()[0]!.connected).toBe(true);
  });

  it('sends a modification and a deletion by bid id, each written once however often the OMS asks', async () => {
    const orderId = await bench.placeOrder({ quantity: 10, pricePaise: 10_150 });
    const bse = link();
    const worker = bench.worker({ exchange: bse });
    await worker.runOnce();
    await iBbs(() => '8123');
    await bse.runOnce();
    bench.clock.now += FIRST_WAIT_MS + 1;
    await worker.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', exchange_order_id: '8123' });

    await bench.requestModification(orderId, { quantity: 15, pricePaise: 10_200 });
    await worker.runOnce();
    expect(uploads()).toHaveLength(1);
    // The OMS asks again after its back-off while the answer is awaited: nothing more is written.
    bench.clock.now += 60_000;
    await worker.runOnce();
    expect(uploads()).toHaveLength(1);
    // The new bid's success file again, late: it answers nothing awaited (not the modification).
    const firstSuccess = done().find((name) => name.startsWith('SUCCESS_'))!;
    await drop('success', readFileSync(join(inbox(), 'done', firstSuccess), 'utf8'));
    await bse.runOnce();
    expect((await bse.findBids([orderId])).get(orderId)).toMatchObject({ status: 'LIVE', quantity: 10 });
    const modified = await iBbs();
    expect(modified).toEqual([
      expect.objectContaining({ action: 'MODIFY', bidId: '8123', quantity: 15, pricePaise: 10_200 }),
    ]);
    await bse.runOnce();
    bench.clock.now += 60_000;
    await worker.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', quantity: 15, price_paise: 10_200 });

    await bench.requestCancellation(orderId);
    await worker.runOnce();
    const deleted = await iBbs();
    expect(deleted).toEqual([expect.objectContaining({ action: 'DELETE', bidId: '8123' })]);
    await bse.runOnce();
    bench.clock.now += 60_000;
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('CANCELLED');
    expect(await bench.openOutbox()).toBe(0);
  });

  it('refuses a modification as BSE’s rejection file says, the bid keeping its terms', async () => {
    const orderId = await bench.placeOrder({ quantity: 10, pricePaise: 10_150 });
    const bse = link();
    const worker = bench.worker({ exchange: bse });
    await worker.runOnce();
    await iBbs(() => '8124');
    await bse.runOnce();
    bench.clock.now += FIRST_WAIT_MS + 1;
    await worker.runOnce();
    await bench.requestModification(orderId, { quantity: 15, pricePaise: 10_200 });
    await worker.runOnce();
    await iBbs(() => ({ error: 'Modification not allowed: window closed' }));
    await bse.runOnce();
    bench.clock.now += 60_000;
    await worker.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', quantity: 10, price_paise: 10_150 });
    expect((await bench.history(orderId)).map((entry) => entry.reason).join('\n')).toMatch(
      /Modification not allowed: window closed/,
    );
  });

  it('settles allotments from an allocation file, and moves it to done/ once the OMS has taken them', async () => {
    const allotted = await bench.placeOrder({ quantity: 10 });
    const notAllotted = await bench.placeOrder({ quantity: 20 });
    const bse = link();
    const worker = bench.worker({ exchange: bse });
    await worker.runOnce();
    const rows = await iBbs();
    await bse.runOnce();
    bench.clock.now += FIRST_WAIT_MS + 1;
    await worker.runOnce();
    const [first, second] = rows.map((row, i) => ({ ...row, bidId: String(7001 + i) }));
    const allocation: AllocationRow[] = [
      { ...first!, allottedQuantity: 10, allottedPricePaise: 10_100 },
      { ...second!, allottedQuantity: 0, allottedPricePaise: null },
    ];
    const name = await drop('allocation', encodeDownload('allocation', allocation));
    await bse.runOnce();
    // Read, not yet taken by the OMS: it stays in the inbox (a restart now reads it again).
    expect(readdirSync(inbox())).toContain(name);
    await worker.runOnce();
    expect(await bench.order(allotted)).toMatchObject({ status: 'EXECUTED', traded_quantity: 10 });
    expect(await bench.status(notAllotted)).toBe('CANCELLED');
    expect(done()).toContain(name);

    // The same file again (the exchange sent it twice): nothing changes.
    await drop('allocation', encodeDownload('allocation', allocation));
    const restarted = link();
    await restarted.runOnce();
    await bench.worker({ exchange: restarted }).runOnce();
    expect(await bench.order(allotted)).toMatchObject({ status: 'EXECUTED', traded_quantity: 10 });
    const trades = await bench.store.db.selectFrom('trades').select('order_id').execute();
    expect(trades.filter((trade) => trade.order_id === allotted)).toHaveLength(1);

    // A file with a line that cannot be read: its readable rows are applied, then it is set aside with the line.
    const partly = await drop('allocation', `${encodeDownload('allocation', allocation)}ACME,NII,OG9,U1,,x\r\n`);
    await restarted.runOnce();
    await bench.worker({ exchange: restarted }).runOnce();
    expect(failed()).toContain(partly);
    expect(readFileSync(join(inbox(), 'failed', `${partly}.reason.txt`), 'utf8')).toMatch(/line 3: 6 fields/);
  });

  it('sets aside downloads twice, late, out of order, truncated, for an unknown bid or another member, and applies the rest', async () => {
    const orderId = await bench.placeOrder({ quantity: 10 });
    const other = await bench.placeOrder({ quantity: 12 });
    const bse = link();
    const worker = bench.worker({ exchange: bse });
    await worker.runOnce();
    const [row, otherRow] = await iBbs(() => '7100');
    const success = readdirSync(inbox()).find((name) => name.startsWith('SUCCESS_'))!;
    const content = readFileSync(join(inbox(), success), 'utf8');
    // The answer for the second bid is cut off half-way (a transfer that stopped): only the first is read.
    writeFileSync(join(inbox(), success), content.slice(0, content.indexOf('\r\n') + 12));
    // For another member's client; a file of no readable line; a success for a reference never sent.
    await drop('success', content, 'OTHER9');
    await drop('success', 'garbage\r\nmore garbage\r\n');
    await drop('success', encodeDownload('success', [{ ...row!, reference: 'OGZZZZ', bidId: '7999' }]));
    await bse.runOnce();

    // Set aside: another member's, one of no readable line, and the truncated one (its readable row applied).
    expect(failed().filter((name) => !name.endsWith('.reason.txt'))).toHaveLength(3);
    expect(failed().some((name) => name.startsWith('SUCCESS_OTHER9_'))).toBe(true);
    expect(readFileSync(join(inbox(), 'failed', `${success}.reason.txt`), 'utf8')).toMatch(
      /^applied its readable rows; these lines could not be read, and what they say is not applied:\nline 2: /,
    );
    bench.clock.now += FIRST_WAIT_MS + 1;
    await worker.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', exchange_order_id: '7100' });
    expect(await bench.status(other)).toBe('EXXMITTED');
    expect(bse.strays.map((stray) => stray.reason).join('\n')).toMatch(/OGZZZZ NEW: answers no row awaiting/);

    // The whole file again (the exchange re-sent it), late: the first row answers nothing now (a stray), the
    // second is the awaited answer.
    await drop('success', content);
    await bse.runOnce();
    bench.clock.now += 60_000;
    await worker.runOnce();
    expect(await bench.order(other)).toMatchObject({ status: 'PENDING', exchange_order_id: '7100' });
    expect(otherRow!.quantity).toBe(12);
    // Out of order: the first success again after all: nothing changes, nothing is sent.
    await drop('success', content);
    await bse.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', exchange_order_id: '7100' });
    expect(readdirSync(join(outbox(), 'taken'))).toHaveLength(1);

    // A restart reads done/ back (copies named .2, .3 among them) to the same book.
    const restarted = link();
    const found = await restarted.findBids([orderId, other]);
    expect([...found.values()].map((bid) => bid.status)).toEqual(['LIVE', 'LIVE']);
  });

  it('changes a bid it has no record of (record lost, or another node’s) by the bid id the order keeps', async () => {
    const orderId = await bench.placeOrder({ quantity: 10 });
    const first = link();
    const worker = bench.worker({ exchange: first });
    await worker.runOnce();
    await iBbs(() => '8200');
    await first.runOnce();
    bench.clock.now += FIRST_WAIT_MS + 1;
    await worker.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', exchange_order_id: '8200' });

    // Another node, its own record folder: it knows nothing of the bid.
    const other = link({ recordDir: join(dir, 'other-record') });
    const otherWorker = bench.worker({ exchange: other });
    await bench.requestCancellation(orderId);
    await otherWorker.runOnce();
    expect(await iBbs()).toEqual([expect.objectContaining({ action: 'DELETE', bidId: '8200' })]);
    await other.runOnce();
    bench.clock.now += 60_000;
    await otherWorker.runOnce();
    expect(await bench.status(orderId)).toBe('CANCELLED');
  });

  it('settles a bid whose answer file never came when a later bid book shows it, and never uploads it again', async () => {
    const orderId = await bench.placeOrder({ quantity: 10 });
    const bse = link();
    const worker = bench.worker({ exchange: bse });
    await worker.runOnce();
    const [row] = await iBbs();
    // The answer files were lost in the transfer.
    for (const name of readdirSync(inbox())) if (name.endsWith('.csv')) rmSync(join(inbox(), name));
    bench.clock.now += 60_000;
    await bse.runOnce();
    await worker.runOnce();
    expect(await bench.status(orderId)).toBe('EXXMITTED');
    await drop(
      'bidBook',
      encodeDownload('bidBook', [{ ...row!, bidId: '8300', enteredAt: bench.now() - 1_000, modifiedAt: null }]),
    );
    await bse.runOnce();
    bench.clock.now += 60_000;
    await worker.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', exchange_order_id: '8300' });
    expect(readdirSync(join(outbox(), 'taken'))).toHaveLength(1);
    expect(uploads()).toHaveLength(0);
  });

  it('gives reconciliation the bid book with the allotments: a part on T and nothing on T+1 is allotted', async () => {
    const orderId = await bench.placeOrder({ quantity: 10 });
    // T+1's allocation files are those written after `t1From` (the wiring's: after T+1 closes).
    let t1From = Number.MAX_SAFE_INTEGER;
    const daysOf = async (orderIds: readonly string[], at: number) =>
      new Map(orderIds.map((orderId) => [orderId, at < t1From ? ('T' as const) : ('T+1' as const)]));
    const bse = link({ daysOf });
    const worker = bench.worker({ exchange: bse });
    await worker.runOnce();
    const [row] = await iBbs(() => '8400');
    await bse.runOnce();
    bench.clock.now += FIRST_WAIT_MS + 1;
    await worker.runOnce();
    const booked = { ...row!, bidId: '8400' };
    await drop(
      'allocation',
      encodeDownload('allocation', [{ ...booked, allottedQuantity: 4, allottedPricePaise: 10_100 }]),
    );
    await bse.runOnce();
    await worker.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'PENDING', traded_quantity: 4 });
    t1From = bench.now() + 1_000;
    bench.clock.now += 2_000;
    await drop(
      'allocation',
      encodeDownload('allocation', [{ ...booked, allottedQuantity: 0, allottedPricePaise: null }]),
    );
    await drop('bidBook', encodeDownload('bidBook', [{ ...booked, enteredAt: bench.now(), modifiedAt: null }]));
    await bse.runOnce();
    await worker.runOnce();
    expect(await bench.order(orderId)).toMatchObject({ status: 'EXECUTED', traded_quantity: 4 });
    const book = await bse.readBook('BSE_EQ', 'SBIN');
    expect(book!.entries).toEqual([
      expect.objectContaining({ orderId, exchangeOrderId: '8400', status: 'ALLOTTED', quantity: 10 }),
    ]);
    // Read back after a restart, the same.
    const restarted = link({ daysOf });
    expect((await restarted.readBook('BSE_EQ', 'SBIN'))!.entries[0]).toMatchObject({ status: 'ALLOTTED' });
  });
});
