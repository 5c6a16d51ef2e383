/**
 * The offer's indicative figures on the event stream are exact past 2^53 (issue 47 row 3), through the real
 * route, store and framing on the run's database: an offer bid for 11,000,000,000,000,031 shares in all
 * (the probe's sum, which a double rounds to ...032) has its `indicative_price` event say so to the last
 * digit. The frame is read as the raw text the server wrote: a JSON.parse would round it, which is the
 * client's to avoid.
 *
 * The stream is served by a second node over the test server's store, on the test clock. Its indicative
 * feed polls on the test's word (pollOnce), not on a timer: the test knows when the feed has taken its
 * starting point, and when it has read what the OMS published.
 */
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/app-type.js';
import { closeHttp } from '../../src/server.js';
import { IndicativeFeed } from '../../src/services/indicative-feed.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { createOmsWorker, createServices } from '../../src/wiring.js';
import { offerImport } from '../support/offers.js';
import { startTestServer, validBid, type TestServer, type TestUser } from '../support/server.js';
import { openEventStream, type EventStream } from '../support/sse.js';

const MAX = '999999999999999';
/** Day T of the offer opens at 09:15 India time. */
const T = Date.parse('2026-12-01T03:45:00Z');
const HOUR = 60 * 60 * 1000;
const SCRIP = {
  exchange: 'NSE_EQ',
  scrip_token: 700999,
  symbol: 'HUGEO',
  series: 'IS',
  expiry_date: '',
  strike_price: '',
  option_type: '',
};

describe("the offer's indicative figures on the event stream", () => {
  let server: TestServer;
  let node: { app: App; url: string };
  let feed: IndicativeFeed;
  let nora: TestUser;
  let stream: EventStream | undefined;
  /** Resolved once the feed has read where it starts (the latest published figures, none yet). */
  let started: Promise<void>;

  beforeAll(async () => {
    server = await startTestServer({ now: T + 10 * 60 * 1000 });
    await server.admin.importOfs([
      offerImport(
        {
          offer_id: 'HUGE-OFS',
          symbol: 'HUGEO',
          listings: [
            { exchange: 'NSE_EQ', scrip_token: 700999, series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: null } },
          ],
          base_quantity: Number(MAX),
          green_shoe_quantity: 0,
          employee_quantity: 0,
        },
        T,
      ),
    ]);
    nora = await server.createUser('nora', { category: 'NON_RETAIL' });

    const offers = new OfsOfferRepository(server.store.db);
    let markStarted!: () => void;
    started = new Promise<void>((resolve) => (markStarted = resolve));
    // The timer polls once, at once, to take the starting point; the next would be in an hour.
    feed = new IndicativeFeed(
      {
        indicativeSince: (at, limit) => offers.indicativeSince(at, limit),
        latestIndicativeAt: async () => {
          const latest = await offers.latestIndicativeAt();
          markStarted();
          return latest;
        },
      },
      HOUR,
    );
    const services = createServices(server.store, { tokenTtlSeconds: 24 * 60 * 60, now: () => server.clock.now });
    const app = buildApp({ ...services, indicativeFeed: feed }, { logger: false });
    node = { app, url: await app.listen({ host: '127.0.0.1', port: 0 }) };
  });
  afterAll(async () => {
    stream?.close();
    if (node) await closeHttp(node.app, { warn: () => undefined });
    await server?.close();
  });

  it('sends 11 bids of 999,999,999,999,999 shares and one of 42 as 11000000000000031, every digit in the frame', async () => {
    stream = await openEventStream(node.url, nora.token);
    const open = stream;
    await open.until(() => open.frames.some((f) => f.id !== undefined), 'the opening id');
    await started;

    const bid = async (quantity: string) => {
      const res = await server.call('POST', '/transactional/v1/orders/regular', {
        body: validBid({ scrip_info: SCRIP, quantity, price: 101 }),
        token: nora.token,
        apiKey: nora.apiKey,
      });
      expect(res.status, res.text).toBe(200);
    };
    for (let i = 0; i < 11; i++) await bid(MAX);
    await bid('42');
    // The exchange takes the bids, then publishes the indicative figures.
    const oms = createOmsWorker(server.store, { logger: pino({ level: 'silent' }), now: () => server.clock.now });
    await oms.runOnce();
    await oms.runOnce();
    // The feed reads what was published and writes each to the stream as it reads it.
    const published = await feed.pollOnce();
    expect(published).toBeGreaterThan(0);
    const indicativeFrames = () => open.frames.filter((f) => f.event === 'indicative_price');
    await open.until(() => indicativeFrames().length === published, 'the published indicative figures');
    const frames = indicativeFrames();
    const last = frames[frames.length - 1]!;
    expect(last.id).toBeUndefined();
    expect(last.data).toMatch(
      /^\{"offer_id":"HUGE-OFS","at":"[^"]+","price":101,"quantity":11000000000000031,"margin_100":\{"price":101,"quantity":11000000000000031\},"margin_0":\{"price":null,"quantity":0\}\}$/,
    );
    for (const frame of frames) expect(frame.data).not.toContain('11000000000000032');
  });
});
