/**
 * GET /transactional/v1/ofs/offers with many offers (issue 47 row 7): paged as the order book pages (`offset`
 * the page from 1, `limit` 1 to 200, default 50, `metadata.total_records`), the current offers by default
 * (not finished, or finished less than 7 days ago), every offer with `state=all`, one state with its name;
 * a bad query value answers 400 e-110, never 500. Before, the call answered every offer ever imported.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';
import { offerImport } from '../support/offers.js';

const OFFERS = '/transactional/v1/ofs/offers';
const HOUR = 60 * 60 * 1000;
const DAY = 24 * HOUR;
/** The test's clock: 11:30 India time on a Tuesday. */
const NOW = Date.parse('2026-12-08T06:00:00Z');

/** What the fixture makes of an offer, and whether it is current at NOW. */
interface Made {
  offerId: string;
  tOpensAt: number;
  state: string;
  current: boolean;
}

describe('the offers list, paged and filtered', () => {
  let server: TestServer;
  let alice: TestUser;
  const made: Made[] = [];

  beforeAll(async () => {
    server = await startTestServer({ now: NOW });
    alice = await server.createUser('alice');
    const imports: Record<string, unknown>[] = [];
    const progress: { offerId: string; set: Record<string, number> }[] = [];
    let n = 0;
    /** An offer whose T opens at `tOpensAt`, moved on by `set` (allocations, cancellation). */
    const add = (
      tOpensAt: number,
      state: string,
      current: boolean,
      set: (t: { t1Close: number }) => Record<string, number> = () => ({}),
    ) => {
      n += 1;
      const offerId = `LIST-${String(n).padStart(3, '0')}`;
      imports.push(
        offerImport(
          {
            offer_id: offerId,
            symbol: `LST${n}`,
            listings: [
              {
                exchange: 'NSE_EQ',
                scrip_token: 710_000 + n,
                series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
              },
              { exchange: 'BSE_EQ', scrip_token: 810_000 + n, series: { RETAIL: 'A', NON_RETAIL: 'A' } },
            ],
            // A drill offer: its days need not be trading days.
            settlement_delay_seconds: 60,
          },
          tOpensAt,
        ),
      );
      const t1Close = tOpensAt + DAY + 6.25 * HOUR;
      progress.push({ offerId, set: set({ t1Close }) });
      made.push({ offerId, tOpensAt, state, current });
    };
    // 240 offers allocated long ago, one every other day back from 10 days ago: not current.
    for (let i = 0; i < 240; i++) {
      add(NOW - (10 + 2 * i) * DAY, 'ALLOCATED', false, ({ t1Close }) => ({
        t_allocated_at: t1Close - DAY,
        t1_allocated_at: t1Close + HOUR,
      }));
    }
    // 70 offers announced, a few each day ahead: current.
    for (let i = 0; i < 70; i++) add(NOW + (1 + Math.floor(i / 3)) * DAY, 'ANNOUNCED', true);
    // One in each running state.
    add(NOW - HOUR, 'T_OPEN', true);
    add(NOW - 20 * HOUR, 'T_ALLOCATED', true, () => ({ t_allocated_at: NOW - 12 * HOUR }));
    add(NOW - DAY - HOUR, 'T1_OPEN', true, () => ({ t_allocated_at: NOW - DAY + 8 * HOUR }));
    // Finished lately: allocated 3 days ago; cancelled an hour ago; T+1 closed 20 days ago but allocated only 2 days ago.
    add(NOW - 4 * DAY, 'ALLOCATED', true, ({ t1Close }) => ({
      t_allocated_at: t1Close - DAY,
      t1_allocated_at: t1Close + HOUR,
    }));
    add(NOW + 5 * DAY, 'CANCELLED', true, () => ({ cancelled_at: NOW - HOUR }));
    add(NOW - 21 * DAY, 'ALLOCATED', true, ({ t1Close }) => ({
      t_allocated_at: t1Close - DAY,
      t1_allocated_at: NOW - 2 * DAY,
    }));
    // Finished long ago: cancelled 30 days ago; T+1 closed and allocated a little more than 7 days ago.
    add(NOW - 31 * DAY, 'CANCELLED', false, () => ({ cancelled_at: NOW - 30 * DAY }));
    add(NOW - 8 * DAY - 7.5 * HOUR, 'ALLOCATED', false, ({ t1Close }) => ({
      t_allocated_at: t1Close - DAY,
      t1_allocated_at: NOW - 7 * DAY - 1,
    }));

    for (let i = 0; i < imports.length; i += 100) await server.admin.importOfs(imports.slice(i, i + 100));
    for (const { offerId, set } of progress) {
      if (Object.keys(set).length > 0)
        await server.store.db.updateTable('ofs_offers').set(set).where('offer_id', '=', offerId).execute();
    }
    // T day latest first, then by id.
    made.sort((a, b) => b.tOpensAt - a.tOpensAt || (a.offerId < b.offerId ? -1 : a.offerId > b.offerId ? 1 : 0));
  });
  afterAll(() => server.close());

  const list = async (query = '') => {
    const res = await server.call('GET', `${OFFERS}${query}`, { token: alice.token });
    expect(res.status, res.text).toBe(200);
    return res.body;
  };
  const ids = (body: { data: { offers: { offer_id: string }[] } }) => body.data.offers.map((offer) => offer.offer_id);
  const current = () => made.filter((m) => m.current);

  it('answers the first 50 current offers by default, T day latest first, with the count of all current ones', async () => {
    const body = await list();
    expect(Object.keys(body).sort()).toEqual(['code', 'data', 'message', 'metadata', 'status']);
    expect(body).toMatchObject({ status: 'success', code: 's-101', message: 'OFS offers fetched successfully' });
    expect(body.data.server_time).toBe(new Date(NOW).toISOString());
    expect(body.metadata).toEqual({ total_records: current().length, offset: 1, limit: 50 });
    expect(current().length).toBeGreaterThan(50);
    expect(ids(body)).toEqual(
      current()
        .slice(0, 50)
        .map((m) => m.offerId),
    );
    // Each offer as the single-offer read answers it.
    const first = body.data.offers[0];
    const one = await server.call('GET', `${OFFERS}/${first.offer_id}`, { token: alice.token });
    expect(one.body.data.offer).toEqual(first);
  });

  it('pages through every current offer exactly once, in order', async () => {
    const seen: string[] = [];
    for (let offset = 1; ; offset++) {
      const body = await list(`?limit=17&offset=${offset}`);
      expect(body.metadata).toEqual({ total_records: current().length, offset, limit: 17 });
      if (body.data.offers.length === 0) break;
      expect(body.data.offers.length).toBeLessThanOrEqual(17);
      seen.push(...ids(body));
    }
    expect(seen).toEqual(current().map((m) => m.offerId));
    // The finished ones it shows: lately allocated or cancelled, or allocated lately after an old T+1.
    const shown = new Map(
      (await list('?limit=200')).data.offers.map((o: { offer_id: string; state: string }) => [o.offer_id, o.state]),
    );
    expect([...shown.values()].filter((state) => state === 'ALLOCATED' || state === 'CANCELLED')).toHaveLength(3);
    for (const m of made) expect(shown.get(m.offerId), m.offerId).toBe(m.current ? m.state : undefined);
  });

  it('answers every offer with state=all, finished ones included, 200 at most a page', async () => {
    const first = await list('?state=all&limit=200');
    expect(first.metadata).toEqual({ total_records: made.length, offset: 1, limit: 200 });
    const second = await list('?state=all&limit=200&offset=2');
    expect([...ids(first), ...ids(second)]).toEqual(made.map((m) => m.offerId));
    expect((await list('?state=all&limit=200&offset=3')).data.offers).toEqual([]);
    expect(new Set([...first.data.offers, ...second.data.offers].map((o: { state: string }) => o.state))).toEqual(
      new Set(['ANNOUNCED', 'T_OPEN', 'T_ALLOCATED', 'T1_OPEN', 'ALLOCATED', 'CANCELLED']),
    );
    expect((await list('?state=all')).metadata).toEqual({ total_records: made.length, offset: 1, limit: 50 });
  });

  it.each(['ANNOUNCED', 'T_OPEN', 'T_ALLOCATED', 'T1_OPEN', 'ALLOCATED', 'CANCELLED'])(
    'answers the offers in state %s by the clock',
    async (state) => {
      const body = await list(`?state=${state}&limit=200&offset=2`);
      const expected = made.filter((m) => m.state === state);
      expect(body.metadata.total_records).toBe(expected.length);
      const all = [...ids(await list(`?state=${state}&limit=200`)), ...ids(body)];
      expect(all).toEqual(expected.map((m) => m.offerId));
    },
  );

  it.each([
    ['limit', '?limit=0'],
    ['limit', '?limit=201'],
    ['limit', '?limit=1000'],
    ['limit', '?limit=050'],
    ['limit', '?limit=ten'],
    ['limit', '?limit='],
    ['offset', '?offset=0'],
    ['offset', '?offset=-1'],
    ['offset', '?offset=01'],
    ['offset', '?offset=1.5'],
    ['offset', '?offset=9999999999'],
    ['offset', '?offset=1&offset=2'],
    ['state', '?state=FINISHED'],
    ['state', '?state=current&state=all'],
    ['state', '?state=announced'],
    ['state', '?state='],
    ['page', '?page=2'],
  ])('refuses a bad query (%s, %s) with 400 e-110 naming the parameter', async (field, query) => {
    const res = await server.call('GET', `${OFFERS}${query}`, { token: alice.token });
    expect(res.status, res.text).toBe(400);
    expect(res.body.code).toBe(Errors.INVALID_QUERY.code);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('answers an empty page past the last one, with the count', async () => {
    const body = await list('?offset=1000');
    expect(body.data.offers).toEqual([]);
    expect(body.metadata).toEqual({ total_records: current().length, offset: 1000, limit: 50 });
  });
});
