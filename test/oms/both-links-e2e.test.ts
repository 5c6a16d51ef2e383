/**
 * One offer listed on NSE and BSE, its bids through both links as `serve` runs them (EXCHANGE_LINK=sim,
 * issue 50): the NSE bid over the e-OFS wire, the BSE bid as an iBBS upload file answered by the
 * simulator's desk; at the T close each allotment comes from its exchange (NSE's message stream, BSE's
 * allocation file) and settles the order. The demo offer's T day (src/cli/demo-offer.ts): demo-nii 6,000 @
 * 101.00 on NSE (capped to 2,500, allotted 2,500), demo-mf 6,250 @ 100.50 on BSE (allotted in full).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { demoOfferBids, demoOfferImport, DEMO_OFFER_DAY_SECONDS } from '../../src/cli/demo-offer.js';
import { loadConfig } from '../../src/config.js';
import { parseDownload, parseUploadFile } from '../../src/oms/links/bse-ibbs/mapping.js';
import type { OmsWorker } from '../../src/oms/worker.js';
import { FundsService } from '../../src/services/funds.js';
import { UserRepository } from '../../src/store/access/users.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { compareWithExchange } from '../../src/cli/ofs-exchange.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { ExchangeTermsRepository } from '../../src/store/ofs/exchange-terms.js';
import type { Reconciler } from '../../src/oms/reconciler.js';
import { createOmsWorker, createReconciler, openExchangeLinks, type ExchangeLinks } from '../../src/wiring.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';

const PLACE_ORDER = '/transactional/v1/orders/regular';
const NOW = Date.parse('2026-12-01T04:00:20Z');

describe('an offer on both exchanges, through both links', () => {
  const offer = demoOfferImport(NOW, DEMO_OFFER_DAY_SECONDS);
  const bids = demoOfferBids(offer);
  let server: TestServer;
  let links: ExchangeLinks;
  let oms: OmsWorker;
  let reconciler: Reconciler;
  let ops: TestUser;
  let dir: string;
  const users = {} as Record<'demo-nii' | 'demo-mf', TestUser>;
  const orders = {} as Record<'nii' | 'mf', string>;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ordergate-both-links-'));
    server = await startTestServer({ now: NOW });
    await server.admin.importOfs([offer]);
    users['demo-nii'] = await server.createUser('demo-nii', { category: 'NII' });
    users['demo-mf'] = await server.createUser('demo-mf', { category: 'MF', marginType: 'H' });
    const funds = new FundsService(
      server.store,
      new FundsRepository(server.store.db, server.store.dialect),
      new UserRepository(server.store.db, server.store.dialect),
      () => server.clock.now,
    );
    for (const name of Object.keys(users)) await funds.deposit(name, '1000000');
    ops = await server.createUser('ops', { category: 'RETAIL' });
    await new UserRepository(server.store.db, server.store.dialect).setOperator('ops', NOW);
    const logger = pino({ level: 'silent' });
    const config = loadConfig({ EXCHANGE_LINK: 'sim', EXCHANGE_BSE_RECORD_DIR: dir }).exchange;
    links = await openExchangeLinks(server.store, config, logger, () => server.clock.now);
    oms = createOmsWorker(server.store, { logger, now: () => server.clock.now, exchange: links.exchange!, pollMs: 20 });
    oms.start();
    reconciler = createReconciler(server.store, {
      logger,
      holder: 'both-links',
      exchange: links.exchange!,
      now: () => server.clock.now,
    });
  });
  afterAll(async () => {
    await reconciler?.stop();
    await oms?.stop();
    await links?.close();
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Waits for `done`, the clock stepping 250 ms a look (a bid's back-off runs on it), at most 20 s. */
  async function until(done: () => Promise<boolean>): Promise<void> {
    for (let i = 0; i < 400; i += 1) {
      if (await done()) return;
      server.clock.now += 250;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error('timed out');
  }
  const orderOf = async (name: keyof typeof users, orderId: string) => {
    const res = await server.call('GET', '/transactional/v1/orders?limit=100', { token: users[name].token });
    return (res.body.data as { order_id: string; status: string; traded_quantity: number }[]).find(
      (o) => o.order_id === orderId,
    )!;
  };
  const historyOf = async (orderId: string) =>
    (
      await server.store.db
        .selectFrom('order_history')
        .select('reason')
        .where('order_id', '=', orderId)
        .orderBy('id')
        .execute()
    ).map((row) => row.reason);
  const files = (...path: string[]) => (existsSync(join(dir, ...path)) ? readdirSync(join(dir, ...path)).sort() : []);

  it('T: the NSE bid goes over e-OFS, the BSE bid as an upload file; each PENDING with its exchange’s number', async () => {
    for (const [key, name] of [
      ['nii', 'demo-nii'],
      ['mf', 'demo-mf'],
    ] as const) {
      const res = await server.call('POST', PLACE_ORDER, {
        body: bids[key],
        token: users[name].token,
        apiKey: users[name].apiKey,
      });
      expect(res.status, res.text).toBe(200);
      orders[key] = res.body.data.orderId as string;
    }
    await until(async () => (await orderOf('demo-mf', orders.mf)).status === 'PENDING');
    await until(async () => (await orderOf('demo-nii', orders.nii)).status === 'PENDING');

    // The BSE bid: one upload (taken by the desk), one success file (applied by the link), BSE's bid id.
    const uploads = files('outbox', 'done');
    expect(uploads).toEqual([expect.stringMatching(/^OFSBID_SIM01_\d{14}_\d{4,}\.csv$/)]);
    const [row] = parseUploadFile(readFileSync(join(dir, 'outbox', 'done', uploads[0]!), 'utf8')).rows;
    expect(row).toMatchObject({
      symbol: offer.symbol,
      category: 'MF',
      quantity: 6250,
      pricePaise: 10_050,
      action: 'NEW',
    });
    const successes = files('inbox', 'done').filter((name) => name.startsWith('SUCCESS_'));
    expect(successes).toHaveLength(1);
    const [answer] = parseDownload('success', readFileSync(join(dir, 'inbox', 'done', successes[0]!), 'utf8')).rows;
    const mf = await orderOf('demo-mf', orders.mf);
    expect(mf).toMatchObject({ exchange: 'BSE_EQ', exchange_order_no: answer!.bidId });
    expect((await historyOf(orders.mf)).join('\n')).toMatch(
      /Waiting for the exchange's answer \(sent in upload file OFSBID_/,
    );
    // The NSE bid never touched a file.
    expect(readFileSync(join(dir, 'record', 'uploaded', uploads[0]!), 'utf8').split('\r\n')).toHaveLength(2);
  });

  it('T close: each exchange allots its own bid, BSE by its allocation file, NSE by its message stream', async () => {
    server.clock.now = Date.parse(offer.t_day.closes_at) + 10_000;
    await until(async () => (await orderOf('demo-mf', orders.mf)).status === 'EXECUTED');
    await until(async () => (await orderOf('demo-nii', orders.nii)).traded_quantity === 2500);
    expect(await orderOf('demo-mf', orders.mf)).toMatchObject({ traded_quantity: 6250, traded_price: '100.50' });
    expect(await orderOf('demo-nii', orders.nii)).toMatchObject({
      status: 'PENDING',
      traded_quantity: 2500,
      traded_price: '101.00',
    });
    const allocation = files('inbox', 'done').filter((name) => name.startsWith('ALLOC_'));
    expect(allocation.length).toBeGreaterThan(0);
    expect((await historyOf(orders.mf)).join('\n')).toMatch(
      new RegExp(`BSE allotted 6250 of 6250 at Rs 100\\.50 \\(allocation file ALLOC_SIM01_`),
    );
    // Nothing was uploaded again, nothing set aside.
    expect(files('outbox', 'done')).toHaveLength(1);
    expect(files('inbox', 'failed')).toEqual([]);
  });

  it("reconciles both listings with the exchanges' books: NSE's by query, BSE's from its bid-book download", async () => {
    await links.simulator!.ibbs!.writeBidBook();
    await until(async () => files('inbox', 'done').some((name) => name.startsWith('BIDBOOK_')));
    const asked = await server.call('POST', `/operator/v1/ofs/offers/${offer.offer_id}/reconciliations`, {
      token: ops.token,
    });
    expect(asked.status, asked.text).toBe(200);
    expect(await reconciler.runOnce()).toBe(2);
    const res = await server.call('GET', `/operator/v1/ofs/offers/${offer.offer_id}/reconciliations`, {
      token: ops.token,
    });
    const reports = (res.body.data.reconciliations as Record<string, unknown>[]).sort((a, b) =>
      String(a.exchange).localeCompare(String(b.exchange)),
    );
    expect(reports.map((r) => [r.exchange, r.state, r.ours, r.book, r.matched, r.differences])).toEqual([
      ['BSE_EQ', 'DONE', 1, 1, 1, []],
      ['NSE_EQ', 'DONE', 1, 1, 1, []],
    ]);
  });

  it("keeps NSE's listings as the link read them, and they match the imported offer", async () => {
    const stored = (await new OfsOfferRepository(server.store.db).find(offer.offer_id))!.offer;
    const [bse, nse] = await compareWithExchange(stored, new ExchangeTermsRepository(server.store.db));
    expect(nse).toMatchObject({ exchange: 'NSE_EQ', readAt: expect.any(Number), differences: [] });
    // BSE has no listing query: its terms are the operator's import alone.
    expect(bse).toMatchObject({ exchange: 'BSE_EQ', readAt: null, differences: [] });
  });
});
