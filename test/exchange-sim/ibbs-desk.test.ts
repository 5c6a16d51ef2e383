/**
 * The exchange simulator's iBBS desk (src/exchange-sim/ibbs-desk.ts): upload files written as the bse-ibbs
 * link writes them (encodeUploadFile, writeUploadFile, references from exchange_references), the desk run
 * pass by pass on the test's clock, and its downloads read back with parseDownload as the link reads them
 * (and moved to the download folder's done/, as the link does). New bids, a bad row refused alone, modify
 * and delete by bid id, the crash window between applying an upload and moving it, uploads set aside, the
 * bid book's cadence, allocation files across a restart and a crash, a failed pass and a failed file.
 */
import { randomUUID } from 'node:crypto';
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
import { Writable } from 'node:stream';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bidIdOf, IbbsDesk } from '../../src/exchange-sim/ibbs-desk.js';
import { SimWire, type WireOrder } from '../../src/exchange-sim/wire.js';
import { writeDownloadFile, writeUploadFile } from '../../src/oms/links/bse-ibbs/files.js';
import {
  encodeUploadFile,
  parseDownload,
  readFileName,
  uploadFileName,
  type DownloadKind,
  type DownloadRows,
  type IbbsBid,
} from '../../src/oms/links/bse-ibbs/mapping.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { SimExchangeRepository } from '../../src/store/ofs/sim-exchange.js';
import { ExchangeReferenceRepository } from '../../src/store/orders/exchange-references.js';
import { StreamCursorRepository } from '../../src/store/orders/exchange-sessions.js';
import { HOUR, OFFER_T, OFFER_T_CLOSE, SimBench } from './support.js';

const MEMBER = 'M0001';
const FLOOR = 10_000;
let bench: SimBench;
let root: string;
let uploadDir: string;
let downloadDir: string;
let sequence = 0;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'ordergate-ibbs-desk-'));
  uploadDir = join(root, 'outbox');
  downloadDir = join(root, 'inbox');
  mkdirSync(uploadDir);
  mkdirSync(downloadDir);
  bench = await SimBench.open({ ibbs: { memberCode: MEMBER, uploadDir, downloadDir, bidBookEveryMs: 60_000 } });
  bench.clock.now = OFFER_T + HOUR;
});
afterAll(async () => {
  await bench?.close();
  rmSync(root, { recursive: true, force: true });
});

const references = () => new ExchangeReferenceRepository(bench.store.db);

/** A bid of ordergate in ACME on BSE (T: non-retail), with its short reference, as the link hands it to the mapping. */
async function bid(overrides: Partial<IbbsBid> = {}): Promise<IbbsBid & { orderId: string }> {
  const orderId = randomUUID();
  const reference = (await references().referencesOf('BSE_EQ', [orderId])).get(orderId)!;
  return {
    orderId,
    symbol: 'ACME',
    category: 'NII',
    cutoff: false,
    reference,
    ucc: 'NII001',
    custodian: null,
    quantity: 10,
    pricePaise: 10_100,
    zeroMargin: false,
    bidId: null,
    action: 'NEW',
    ...overrides,
  };
}

/** Writes an upload file as the link does; answers its name. */
async function upload(bids: readonly IbbsBid[], member = MEMBER): Promise<string> {
  const name = uploadFileName(member, bench.clock.now, ++sequence);
  await writeUploadFile(
    uploadDir,
    name,
    encodeUploadFile(bids, () => FLOOR),
  );
  return name;
}

/** Writes an upload file's raw text (lines the link would never write). */
function rawUpload(text: string, name = uploadFileName(MEMBER, bench.clock.now, ++sequence)): string {
  writeFileSync(join(uploadDir, name), text);
  return name;
}

const desk = () => bench.sim.ibbs!;

/** The downloads of the inbox, read and moved to done/ as the link does; by name. */
function take(): Map<string, string> {
  const files = new Map<string, string>();
  mkdirSync(join(downloadDir, 'done'), { recursive: true });
  for (const name of readdirSync(downloadDir)) {
    if (name === 'done' || name === 'failed') continue;
    files.set(name, readFileSync(join(downloadDir, name), 'utf8'));
    renameSync(join(downloadDir, name), join(downloadDir, 'done', name));
  }
  return files;
}

/** The downloads of a kind among `files`, parsed; every line must read. */
function rowsOf<K extends DownloadKind>(files: Map<string, string>, kind: K): Map<string, DownloadRows[K][]> {
  const out = new Map<string, DownloadRows[K][]>();
  for (const [name, text] of files) {
    if (readFileName(name)?.kind !== kind) continue;
    const parsed = parseDownload(kind, text);
    expect(parsed.problems).toEqual([]);
    out.set(name, parsed.rows);
  }
  return out;
}

/** The answer names of an upload: its own stamp and sequence. */
const answerName = (upload: string, prefix: 'SUCCESS' | 'REJECT') => upload.replace(/^OFSBID_/, `${prefix}_`);

const row = (orderId: string) => bench.row(orderId);

describe('uploads', () => {
  it('answers a file of new bids with one SUCCESS file of its stamp and sequence, the bids in the book', async () => {
    const nii = await bid();
    const mf = await bid({ category: 'MF', ucc: 'MF0001', custodian: 'CUST01', zeroMargin: true, quantity: 500 });
    const oths = await bid({ category: 'OTHS', ucc: 'OTH001', quantity: 20, pricePaise: 10_200 });
    const name = await upload([nii, mf, oths]);
    await desk().runOnce();

    const files = take();
    const answers = [...files.keys()].filter((file) => !file.startsWith('BIDBOOK_'));
    expect(answers).toEqual([answerName(name, 'SUCCESS')]);
    const rows = rowsOf(files, 'success').get(answerName(name, 'SUCCESS'))!;
    expect(rows.map((r) => r.reference)).toEqual([nii.reference, mf.reference, oths.reference]);
    for (const [i, placed] of [nii, mf, oths].entries()) {
      const book = (await row(placed.orderId))!;
      expect(book).toMatchObject({ exchange: 'BSE_EQ', scrip_token: 800001, offer_id: 'ACME-X', transmissions: 1 });
      const { orderId: _o, ...fields } = placed;
      // The upload's ten fields, with the bid id the exchange gave: a number (BID_ID_PATTERN), from its order id.
      expect(rows[i]).toEqual({ ...fields, bidId: bidIdOf(book.exchange_order_id) });
      expect(rows[i]!.bidId).toMatch(/^[1-9][0-9]{18}$/);
    }
    expect(await row(mf.orderId)).toMatchObject({ category: 'MF', margin_type: 'T', user_id: 'MF0001' });
    expect(await row(oths.orderId)).toMatchObject({ category: 'OTHS', margin_type: 'H', price_paise: 10_200 });
    expect(readdirSync(join(uploadDir, 'done'))).toContain(name);
    expect(readdirSync(uploadDir)).not.toContain(name);
  });

  it('refuses a bad row alone in REJECT (unknown CP code, price off the tick, a width) while the others succeed', async () => {
    const good = await bid();
    const offTick = await bid({ pricePaise: 10_103 });
    const unknown = { ...(await bid()), reference: 'OGZZZZZZZZ' };
    const wideUcc = await bid({ ucc: 'U'.repeat(12) });
    const retailOnT = await bid({ category: 'RETAIL', ucc: 'RET001' });
    const name = await upload([good, offTick, unknown, wideUcc, retailOnT]);
    await desk().runOnce();

    const files = take();
    expect(
      rowsOf(files, 'success')
        .get(answerName(name, 'SUCCESS'))!
        .map((r) => r.reference),
    ).toEqual([good.reference, wideUcc.reference]);
    const rejected = rowsOf(files, 'rejection').get(answerName(name, 'REJECT'))!;
    expect(rejected.map((r) => [r.reference, r.bidId, r.error])).toEqual([
      [offTick.reference, null, expect.stringMatching(/tick/i)],
      ['OGZZZZZZZZ', null, 'Unknown client/CP code OGZZZZZZZZ'],
      [retailOnT.reference, null, expect.stringMatching(/T\+1/)],
    ]);
    expect(await row(good.orderId)).toBeDefined();
    expect(await row(offTick.orderId)).toBeUndefined();
    expect(await row(retailOnT.orderId)).toBeUndefined();
    expect(readdirSync(join(uploadDir, 'done'))).toContain(name);
  });

  it('modifies and deletes by bid id; a wrong bid id or a bid not in the book is refused', async () => {
    const a = await bid({ quantity: 30 });
    const b = await bid({ quantity: 40 });
    const placed = rowsOf(take(), 'success');
    expect(placed.size).toBe(0);
    await upload([a, b]);
    await desk().runOnce();
    const [rows] = [...rowsOf(take(), 'success').values()];
    const bidA = rows!.find((r) => r.reference === a.reference)!.bidId;
    const bidB = rows!.find((r) => r.reference === b.reference)!.bidId;

    const never = await bid();
    const changes = await upload([
      { ...a, action: 'MODIFY', bidId: bidA, quantity: 35, pricePaise: 10_150 },
      { ...b, action: 'DELETE', bidId: bidB },
      { ...never, action: 'MODIFY', bidId: '123' },
    ]);
    bench.clock.now += 1_000;
    await desk().runOnce();
    const files = take();
    expect(
      rowsOf(files, 'success')
        .get(answerName(changes, 'SUCCESS'))!
        .map((r) => [r.reference, r.action, r.bidId]),
    ).toEqual([
      [a.reference, 'MODIFY', bidA],
      [b.reference, 'DELETE', bidB],
    ]);
    expect(
      rowsOf(files, 'rejection')
        .get(answerName(changes, 'REJECT'))!
        .map((r) => r.error),
    ).toEqual(['The exchange has no bid for this client/CP code']);
    expect(await row(a.orderId)).toMatchObject({ quantity: 35, price_paise: 10_150, status: 'LIVE' });
    expect(await row(b.orderId)).toMatchObject({ status: 'CANCELLED' });

    // A bid id that is not the bid's: refused, the bid unchanged.
    const wrong = await upload([{ ...a, action: 'MODIFY', bidId: bidB, quantity: 50, pricePaise: 10_150 }]);
    await desk().runOnce();
    expect(
      rowsOf(take(), 'rejection')
        .get(answerName(wrong, 'REJECT'))!
        .map((r) => r.error),
    ).toEqual([`Bid id ${bidB} is not the bid of client/CP code ${a.reference} (${bidA})`]);
    expect(await row(a.orderId)).toMatchObject({ quantity: 35 });
  });

  it('applies nothing twice when it reads again an upload it applied but had not moved (the crash window)', async () => {
    const a = await bid({ quantity: 60 });
    const b = await bid({ quantity: 70 });
    const first = await upload([a, b]);
    await desk().runOnce();
    const answered = rowsOf(take(), 'success').get(answerName(first, 'SUCCESS'))!;
    const bidA = answered[0]!.bidId;
    const bidB = answered[1]!.bidId;
    const second = await upload([
      { ...a, action: 'MODIFY', bidId: bidA, quantity: 65 },
      { ...b, action: 'DELETE', bidId: bidB },
    ]);
    bench.clock.now += 1_000;
    await desk().runOnce();
    const secondAnswer = take().get(answerName(second, 'SUCCESS'))!;
    const before = { a: await row(a.orderId), b: await row(b.orderId) };
    expect(before.a).toMatchObject({ quantity: 65, transmissions: 1 });
    expect(before.b).toMatchObject({ status: 'CANCELLED' });

    // Crash after the answers were written (the link has read them: they are in its done/), before the moves:
    // both uploads are read again. Nothing is placed or changed again, and no answer is written twice.
    const putBack = (name: string) => renameSync(join(uploadDir, 'done', name), join(uploadDir, name));
    putBack(first);
    putBack(second);
    bench.clock.now += 1_000;
    await desk().runOnce();
    expect([...take().keys()].filter((file) => !file.startsWith('BIDBOOK_'))).toEqual([]);
    expect(await row(a.orderId)).toEqual(before.a);
    expect(await row(b.orderId)).toEqual(before.b);
    expect(readdirSync(join(uploadDir, 'done'))).toEqual(expect.arrayContaining([first, second]));
    expect(readdirSync(uploadDir)).not.toEqual(expect.arrayContaining([first]));

    // Crash before the answers were written: read again, answered again with the same bid ids; still once in the book.
    rmSync(join(downloadDir, 'done', answerName(first, 'SUCCESS')));
    rmSync(join(downloadDir, 'done', answerName(second, 'SUCCESS')));
    putBack(first);
    putBack(second);
    bench.clock.now += 1_000;
    await desk().runOnce();
    const again = take();
    expect(rowsOf(again, 'success').get(answerName(first, 'SUCCESS'))).toEqual(answered);
    expect(again.get(answerName(second, 'SUCCESS'))).toBe(secondAnswer);
    expect(await row(a.orderId)).toEqual(before.a);
    expect(await row(b.orderId)).toEqual(before.b);
  });

  it('sets aside an upload not ours, or of lines it cannot read after answering its readable rows; the others are answered', async () => {
    const good = await bid();
    const other = await bid();
    const readable = await bid();
    rawUpload('hello\r\n', 'README.txt');
    writeFileSync(join(uploadDir, 'OFSBID_M0001_20261201100000_0099.csv.tmp'), 'half written');
    const otherMember = await upload([other], 'M0002');
    const mixed = rawUpload(
      encodeUploadFile([readable], () => FLOOR) + `ACME,XX,${(await bid()).reference},NII001,,10,101.00,2,0,N\r\n`,
    );
    const unreadable = rawUpload('not,a,bid\r\n');
    const fine = await upload([good]);
    await desk().runOnce();

    const files = take();
    const success = rowsOf(files, 'success');
    expect(success.get(answerName(fine, 'SUCCESS'))!.map((r) => r.reference)).toEqual([good.reference]);
    expect(success.get(answerName(mixed, 'SUCCESS'))!.map((r) => r.reference)).toEqual([readable.reference]);
    expect(files.has(answerName(unreadable, 'SUCCESS'))).toBe(false);
    expect(files.has(answerName(otherMember, 'SUCCESS'))).toBe(false);
    expect(await row(other.orderId)).toBeUndefined();

    const reason = (name: string) => readFileSync(join(uploadDir, 'failed', `${name}.reason.txt`), 'utf8');
    expect(reason('README.txt')).toMatch(/not an iBBS upload file name/);
    expect(reason(otherMember)).toMatch(/an upload of member M0002; this desk takes member M0001's/);
    expect(reason(mixed)).toMatch(/^1 rows answered; lines not read:\nline 2: unknown category "XX"/);
    expect(reason(unreadable)).toMatch(/line 1: 3 fields where a upload row has 10/);
    expect(readdirSync(join(uploadDir, 'done'))).toContain(fine);
    // A file still being written is not read.
    expect(readdirSync(uploadDir)).toContain('OFSBID_M0001_20261201100000_0099.csv.tmp');
    rmSync(join(uploadDir, 'OFSBID_M0001_20261201100000_0099.csv.tmp'));
  });
});

describe('bid book', () => {
  it('writes every BSE bid of the book (deleted ones with D), and again from runOnce only when changed and due', async () => {
    const name = await desk().writeBidBook();
    expect(name).toMatch(/^BIDBOOK_M0001_\d{14}_\d{4}\.csv$/);
    const files = take();
    const book = rowsOf(files, 'bidBook').get(name!)!;
    const live = await bench.store.db
      .selectFrom('sim_exchange_bids')
      .selectAll()
      .where('exchange', '=', 'BSE_EQ')
      .execute();
    expect(book).toHaveLength(live.length);
    for (const entry of live) {
      const bookRow = book.find((r) => r.bidId === bidIdOf(entry.exchange_order_id))!;
      expect(bookRow).toMatchObject({ quantity: Number(entry.quantity), enteredAt: Number(entry.received_at) });
      if (entry.status === 'CANCELLED') expect(bookRow.action).toBe('DELETE');
      if (Number(entry.updated_at) > Number(entry.received_at))
        expect(bookRow.modifiedAt).toBe(Number(entry.updated_at));
    }
    expect(book.some((r) => r.action === 'DELETE')).toBe(true);
    expect(book.some((r) => r.action === 'MODIFY')).toBe(true);

    // runOnce: nothing new within the interval, nor after it while the book is unchanged.
    await desk().runOnce();
    bench.clock.now += 60_000;
    await desk().runOnce();
    expect(rowsOf(take(), 'bidBook').size).toBe(0);
    // A new bid: shown at the next interval, not before.
    const fresh = await bid();
    await upload([fresh]);
    bench.clock.now += 1_000;
    await desk().runOnce();
    expect(rowsOf(take(), 'bidBook').size).toBe(0);
    bench.clock.now += 60_000;
    await desk().runOnce();
    const [later] = [...rowsOf(take(), 'bidBook').values()];
    expect(later).toHaveLength(book.length + 1);
    expect(later!.at(-1)).toMatchObject({ reference: fresh.reference, action: 'NEW', modifiedAt: null });
  });
});

describe('a pass that fails, a file that fails', () => {
  /** A desk of its own over the bench's exchange, with a wire that throws for bids of `quantity`. */
  function ownDesk(
    options: { uploadDir?: string; failQuantity?: { value: number | null } } = {},
    logger?: pino.Logger,
  ) {
    const wire = new SimWire(
      bench.sim.exchange,
      new SimExchangeRepository(bench.store.readDb, bench.store.dialect),
      new OfsIssueRepository(bench.store.readDb),
      new OfsOfferRepository(bench.store.readDb),
      bench.now,
    );
    const place = wire.place.bind(wire);
    wire.place = async (exchange: string, orders: readonly WireOrder[]) => {
      if (orders.some((order) => order.terms?.quantity === options.failQuantity?.value))
        throw new Error('injected: the database went away');
      return place(exchange, orders);
    };
    return new IbbsDesk(
      wire,
      bench.store,
      { memberCode: MEMBER, uploadDir: options.uploadDir ?? uploadDir, downloadDir, pollMs: 1 },
      bench.now,
      logger,
    );
  }

  it('keeps a file whose handling failed for the next pass, and answers the others', async () => {
    const failQuantity = { value: 13 as number | null };
    const own = ownDesk({ failQuantity });
    const failing = await upload([await bid({ quantity: 13 })]);
    const fine = await upload([await bid({ quantity: 14 })]);
    await own.runOnce();
    let files = take();
    expect(files.has(answerName(fine, 'SUCCESS'))).toBe(true);
    expect(files.has(answerName(failing, 'SUCCESS'))).toBe(false);
    expect(readdirSync(uploadDir)).toContain(failing);
    failQuantity.value = null;
    await own.runOnce();
    files = take();
    expect(
      rowsOf(files, 'success')
        .get(answerName(failing, 'SUCCESS'))!
        .map((r) => r.quantity),
    ).toEqual([13]);
  });

  it('logs a failed pass and goes on with the next until stop()', async () => {
    const broken = join(root, 'not-a-folder');
    writeFileSync(broken, 'a file where the upload folder should be');
    const failed: string[] = [];
    let wake: () => void = () => undefined;
    const twice = new Promise<void>((resolve) => (wake = resolve));
    const sink = new Writable({
      write(chunk, _encoding, done) {
        const line = JSON.parse(String(chunk)) as { msg: string; err?: { message: string } };
        if (line.msg.includes('pass failed')) failed.push(line.err?.message ?? '');
        if (failed.length === 2) wake();
        done();
      },
    });
    const own = ownDesk({ uploadDir: join(broken, 'outbox') }, pino({ level: 'error' }, sink));
    own.start();
    await twice;
    await own.stop();
    expect(failed[0]).toMatch(/ENOTDIR|EEXIST/);
  });

  it('names the download folder when a download cannot be written', async () => {
    const missing = join(root, 'no-such-folder');
    await expect(writeDownloadFile(missing, 'SUCCESS_M0001_20261201100000_0001.csv', 'x')).rejects.toThrow(
      `the download folder ${missing} cannot be written (ENOENT)`,
    );
  });
});

describe('allocation files', () => {
  it("writes the BSE allotments once, with the allotted quantity and price, across a restart and a crash before the cursor's write", async () => {
    // Demand above the non-retail portion (900), so that T is allotted at its close (a short T waits for the operator).
    const large = await bid({ quantity: 1_000, pricePaise: 10_050, ucc: 'BIG001' });
    await upload([large]);
    await desk().runOnce();
    take();
    bench.clock.now = OFFER_T_CLOSE + 1;
    await bench.sim.step();
    await desk().runOnce();
    const files = take();
    const allocations = rowsOf(files, 'allocation');
    expect(allocations.size).toBe(1);
    const [[name, rows]] = [...allocations] as [[string, DownloadRows['allocation'][]]];
    const events = await bench.store.db
      .selectFrom('sim_exchange_events as e')
      .innerJoin('sim_exchange_bids as b', 'b.order_id', 'e.order_id')
      .select([
        'e.id',
        'e.quantity',
        'e.price_paise',
        'b.exchange_order_id',
        'b.quantity as bid_quantity',
        'b.order_id',
      ])
      .where('b.exchange', '=', 'BSE_EQ')
      .orderBy('e.id')
      .execute();
    expect(events.length).toBeGreaterThan(0);
    // The file's sequence is its last event's id.
    expect(readFileName(name)!.sequence).toBe(Number(events.at(-1)!.id));
    const known = await references().known(
      'BSE_EQ',
      events.map((event) => event.order_id),
    );
    expect(rows.map((r) => [r.bidId, r.reference, r.quantity, r.allottedQuantity, r.allottedPricePaise])).toEqual(
      events.map((event) => [
        bidIdOf(event.exchange_order_id),
        known.get(event.order_id),
        Number(event.bid_quantity),
        Number(event.quantity),
        Number(event.quantity) > 0 ? Number(event.price_paise) : null,
      ]),
    );
    expect(rows.some((r) => r.allottedQuantity > 0)).toBe(true);
    const { cursorName } = desk();
    expect(await new StreamCursorRepository(bench.store.db).read(cursorName)).toBe(Number(events.at(-1)!.id));

    // A desk restarted on the same store and folders: nothing written twice.
    const restarted = () =>
      new IbbsDesk(
        new SimWire(
          bench.sim.exchange,
          new SimExchangeRepository(bench.store.readDb, bench.store.dialect),
          new OfsIssueRepository(bench.store.readDb),
          new OfsOfferRepository(bench.store.readDb),
          bench.now,
        ),
        bench.store,
        { memberCode: MEMBER, uploadDir, downloadDir },
        bench.now,
      );
    await restarted().runOnce();
    expect(rowsOf(take(), 'allocation').size).toBe(0);

    // A crash after the file was written and before the cursor moved: the file (in the link's done/) is
    // recognised by its sequence, and not written again.
    await bench.store.db
      .updateTable('exchange_stream_cursors')
      .set({ seq: 0 })
      .where('name', '=', cursorName)
      .execute();
    await restarted().runOnce();
    expect(rowsOf(take(), 'allocation').size).toBe(0);
    expect(await new StreamCursorRepository(bench.store.db).read(cursorName)).toBe(Number(events.at(-1)!.id));
    expect(existsSync(join(downloadDir, 'done', name))).toBe(true);

    // A desk over a new download folder (a node started again with folders of its own): every allotment is
    // written again, for a link that has not seen them (it applies each once).
    const freshDir = mkdtempSync(join(tmpdir(), 'ordergate-ibbs-fresh-'));
    try {
      const fresh = new IbbsDesk(
        new SimWire(
          bench.sim.exchange,
          new SimExchangeRepository(bench.store.readDb, bench.store.dialect),
          new OfsIssueRepository(bench.store.readDb),
          new OfsOfferRepository(bench.store.readDb),
          bench.now,
        ),
        bench.store,
        { memberCode: MEMBER, uploadDir, downloadDir: freshDir },
        bench.now,
      );
      expect(fresh.cursorName).not.toBe(cursorName);
      await fresh.runOnce();
      const again = readdirSync(freshDir).filter((file) => file.startsWith('ALLOC_'));
      expect(again).toHaveLength(1);
      expect(parseDownload('allocation', readFileSync(join(freshDir, again[0]!), 'utf8')).rows).toHaveLength(
        events.length,
      );
    } finally {
      rmSync(freshDir, { recursive: true, force: true });
    }
  });
});
