/**
 * The exchange simulator's fault hooks, for the fault tests of issue 49: each break comes from a hook at a
 * chosen instant, never from a sleep. Before a call is applied: another answer (500, 429 with Retry-After),
 * a cut connection, or a hold until the test lets it go (a slow exchange). After it is applied: a cut
 * connection, the bid in the book and its answer lost. And every session ended at once.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { FaultCall } from '../../src/exchange-sim/exchange-sim.js';
import { referenceOf } from '../../src/oms/links/nse-eofs/mapping.js';
import { memberBid, SimBench } from './support.js';

let bench: SimBench;

beforeAll(async () => {
  bench = await SimBench.open();
});
afterEach(() => {
  bench.sim.faults = {};
});
afterAll(() => bench?.close());

describe('fault hooks', () => {
  it('answers a call with the status a hook gives (500), without applying it: the client finds the answer unknown', async () => {
    const calls: FaultCall[] = [];
    bench.sim.faults = {
      beforeApply: (call) => {
        calls.push(call);
        return { status: 500 };
      },
    };
    const bid = memberBid();
    expect(await bench.client().submit(bid, 'E')).toEqual({ kind: 'unknown', why: 'the exchange answered 500' });
    expect(calls).toEqual([
      {
        exchange: 'NSE_EQ',
        method: 'POST',
        path: '/order',
        body: expect.objectContaining({ apiEchoBack: referenceOf(bid.orderId) }),
        loginId: 'api-one',
      },
    ]);
    expect(await bench.book([bid])).toEqual([]);
  });

  it('answers 429 with its Retry-After: the client did not send it and waits as told', async () => {
    bench.sim.faults = { beforeApply: () => ({ status: 429, headers: { 'retry-after': '3' } }) };
    const bid = memberBid();
    expect(await bench.client().submitBatch([bid], 'E')).toEqual([
      { kind: 'not-sent', why: 'the exchange limits the rate (429)', retryAfterMs: 3_000 },
    ]);
    expect(await bench.book([bid])).toEqual([]);
  });

  it('cuts the connection before applying a call: unknown to the client, not in the book', async () => {
    bench.sim.faults = { beforeApply: () => 'destroy' };
    const bid = memberBid();
    expect(await bench.client().submit(bid, 'E')).toMatchObject({ kind: 'unknown' });
    expect(await bench.book([bid])).toEqual([]);
  });

  it('holds a call until the test lets it go (a slow exchange), then applies it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    bench.sim.faults = {
      beforeApply: async () => {
        held();
        await gate;
        return undefined;
      },
    };
    const bid = memberBid();
    const outcome = bench.client().submit(bid, 'E');
    await holding;
    expect(await bench.book([bid])).toEqual([]);
    release();
    expect(await outcome).toMatchObject({ kind: 'accepted' });
    expect(await bench.book([bid])).toMatchObject([{ orderStatus: 'OPEN' }]);
  });

  it('cuts the connection after a batch is applied: the bids are in the book, their answers lost; sent again, the same ids', async () => {
    const applied: unknown[] = [];
    bench.sim.faults = {
      afterApply: (call) => {
        applied.push(call.answer);
        return 'destroy';
      },
    };
    const bids = [memberBid(), memberBid({ ucc: 'UCC0002' }), memberBid({ pricePaise: 9_000 })];
    const client = bench.client();
    const lost = await client.submitBatch(bids, 'E');
    expect(lost.map((outcome) => outcome.kind)).toEqual(['unknown', 'unknown', 'unknown']);
    expect(applied).toEqual([{ status: 200, body: { code: 200, data: expect.any(Array) } }]);
    const book = await bench.book(bids);
    expect(book.map((entry) => entry.apiEchoBack).sort()).toEqual(
      [referenceOf(bids[0]!.orderId), referenceOf(bids[1]!.orderId)].sort(),
    );
    bench.sim.faults = {};
    const again = await client.submitBatch(bids, 'E');
    expect(again.map((outcome) => outcome.kind)).toEqual(['accepted', 'accepted', 'rejected']);
    for (const [i, entry] of book.entries()) {
      const j = bids.findIndex((bid) => referenceOf(bid.orderId) === entry.apiEchoBack);
      expect(again[j]).toEqual({ kind: 'accepted', exchangeOrderId: book[i]!.orderId });
    }
    expect(await bench.row(bids[0]!.orderId)).toMatchObject({ transmissions: 2 });
  });

  it('cuts the connection after a change is applied: the bid is cancelled, its answer lost', async () => {
    const client = bench.client();
    const bid = memberBid();
    const placed = (await client.submit(bid, 'E')) as { exchangeOrderId: string };
    bench.sim.faults = { afterApply: () => 'destroy' };
    expect(await client.submit({ ...bid, exchangeOrderId: placed.exchangeOrderId }, 'C')).toMatchObject({
      kind: 'unknown',
    });
    expect(await bench.book([bid])).toMatchObject([{ orderStatus: 'CANCELLED' }]);
  });

  it('ends every session at once (expireTokens): a call answers 401, and the client logs in again and is answered', async () => {
    const client = bench.client();
    await client.login();
    const token = await bench.login('NSE_EQ', { memberCode: 'M0001', loginId: 'api-two', password: 'secret-two-pass' });
    bench.sim.expireTokens();
    expect((await bench.call('GET', 'NSE_EQ', '/query/activeSecurities', token)).status).toBe(401);
    expect(await client.submit(memberBid(), 'E')).toMatchObject({ kind: 'accepted' });
  });
});
