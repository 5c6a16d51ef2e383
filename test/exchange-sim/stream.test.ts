/**
 * The exchange simulator's message stream (mapping.ts's NseStreamMessage): newline-delimited JSON kept
 * open, replaying one exchange's allocation events after `?from=<seq>`, then pushing those the simulated
 * exchange's step writes once the injected clock passes the close, with HEARTBEAT lines. The stream marks
 * nothing delivered. No sleep: each wait is for a pushed line.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { referenceOf } from '../../src/oms/links/nse-eofs/mapping.js';
import { HOUR, memberBid, OFFER_T, OFFER_T_CLOSE, SimBench, StreamReader, T0 } from './support.js';

let bench: SimBench;
const streamUrl = (exchange: string, from?: number) =>
  `${bench.sim.url}/${exchange}/api/messaging/message-stream${from === undefined ? '' : `?from=${from}`}`;
const isOrder = (line: Record<string, unknown>) => line.type === 'ORDER';
const isHeartbeat = (line: Record<string, unknown>) => line.type === 'HEARTBEAT';

beforeAll(async () => {
  bench = await SimBench.open({ heartbeatMs: 200 });
});
afterAll(() => bench?.close());

describe('the message stream', () => {
  const retail = memberBid({ quantity: 10, pricePaise: 10_150 });
  const institution = memberBid({ series: 'IS', ucc: 'INST01', quantity: 100, pricePaise: 10_000 });
  const exchangeIds: Record<string, string> = {};

  it('pushes the allotments the step makes once the clock passes the close, each as an ORDER line', async () => {
    const client = bench.client();
    for (const bid of [retail, institution]) {
      const outcome = await client.submit(bid, 'E');
      if (outcome.kind !== 'accepted') throw new Error(JSON.stringify(outcome));
      exchangeIds[bid.orderId] = outcome.exchangeOrderId;
    }
    const token = await bench.login('NSE_EQ');
    const stream = await StreamReader.open(streamUrl('NSE_EQ', 0), token);
    try {
      expect(stream.status).toBe(200);
      // Nothing to replay: a heartbeat at once says how far the stream has gone.
      expect(await stream.next(isHeartbeat)).toEqual({ type: 'HEARTBEAT', seq: 0 });
      expect(stream.lines.filter(isOrder)).toEqual([]);

      // Both windows close; the exchange's step allots the issue (1,000 offered: every bid in full).
      bench.clock.now = T0 + 2 * HOUR;
      await bench.sim.step();
      const first = await stream.next(isOrder);
      const second = await stream.next(isOrder, stream.lines.indexOf(first) + 1);
      const byReference = new Map([first, second].map((line) => [line.apiEchoBack, line]));
      expect(byReference.get(referenceOf(retail.orderId))).toEqual({
        type: 'ORDER',
        seq: expect.any(Number),
        event: 'ALLOTTED',
        orderId: exchangeIds[retail.orderId],
        apiEchoBack: referenceOf(retail.orderId),
        allottedQuantity: 10,
        allottedPrice: 101.5,
        day: null,
        text: expect.any(String),
      });
      expect(byReference.get(referenceOf(institution.orderId))).toMatchObject({
        event: 'ALLOTTED',
        orderId: exchangeIds[institution.orderId],
        allottedQuantity: 100,
        allottedPrice: 100,
      });
      expect(Number(second.seq)).toBeGreaterThan(Number(first.seq));
      // Heartbeats go on, every heartbeatMs, with the last sequence number sent.
      const index = stream.lines.indexOf(second);
      expect(await stream.next(isHeartbeat, index + 1)).toEqual({ type: 'HEARTBEAT', seq: second.seq });
    } finally {
      stream.close();
    }
    // The stream marks nothing delivered: the in-process OMS's reading of the events is its own.
    const events = await bench.store.db.selectFrom('sim_exchange_events').select('delivered_at').execute();
    expect(events.map((event) => event.delivered_at)).toEqual([null, null]);
  });

  it('replays from a sequence number: only the events after it, then a heartbeat at the last', async () => {
    const token = await bench.login('NSE_EQ');
    const all = await StreamReader.open(streamUrl('NSE_EQ'), token);
    let seqs: number[];
    try {
      await all.next(isHeartbeat);
      seqs = all.lines.filter(isOrder).map((line) => Number(line.seq));
      expect(seqs).toHaveLength(2);
    } finally {
      all.close();
    }
    const after = await StreamReader.open(streamUrl('NSE_EQ', seqs[0]), token);
    try {
      const heartbeat = await after.next(isHeartbeat);
      expect(after.lines.filter(isOrder).map((line) => line.seq)).toEqual([seqs[1]]);
      expect(heartbeat).toEqual({ type: 'HEARTBEAT', seq: seqs[1] });
    } finally {
      after.close();
    }
  });

  it("keeps each exchange's events to its own stream", async () => {
    const stream = await StreamReader.open(streamUrl('BSE_EQ', 0), await bench.login('BSE_EQ'));
    try {
      const heartbeat = await stream.next(isHeartbeat);
      expect(stream.lines.filter(isOrder)).toEqual([]);
      // It has gone past the NSE events all the same: a reader that comes back from here misses none of its own.
      expect(Number(heartbeat.seq)).toBeGreaterThanOrEqual(2);
    } finally {
      stream.close();
    }
  });

  it("pushes an offer's T allocation (part allotted, the bid live for T+1) on the listing's exchange", async () => {
    bench.clock.now = OFFER_T + HOUR;
    const bse = bench.client('BSE_EQ');
    const mf = memberBid({ symbol: 'ACME', series: 'IS', ucc: 'MF0001', investorCategory: 'MF', quantity: 1_000 });
    const placed = await bse.submit(mf, 'E');
    expect(placed.kind).toBe('accepted');
    const stream = await StreamReader.open(streamUrl('BSE_EQ'), await bench.login('BSE_EQ'));
    try {
      await stream.next(isHeartbeat);
      bench.clock.now = OFFER_T_CLOSE;
      await bench.sim.step();
      expect(await stream.next(isOrder)).toMatchObject({
        event: 'PART_ALLOTTED',
        apiEchoBack: referenceOf(mf.orderId),
        orderId: (placed as { exchangeOrderId: string }).exchangeOrderId,
        allottedQuantity: 900,
        allottedPrice: 101.5,
        day: 'T',
        text: expect.stringMatching(/carried forward to T\+1/),
      });
    } finally {
      stream.close();
    }
  });

  it('needs a live token, and is cut by dropStreams()', async () => {
    const refused = await fetch(streamUrl('NSE_EQ'));
    expect(refused.status).toBe(401);
    const stream = await StreamReader.open(streamUrl('NSE_EQ'), await bench.login('NSE_EQ'));
    await stream.next(isHeartbeat);
    expect(bench.sim.streams).toBe(1);
    bench.sim.dropStreams();
    await stream.end();
    expect(stream.error).not.toBeNull();
    expect(bench.sim.streams).toBe(0);
  });

  it('ends the open streams when the simulator closes (the last test: the bench is closed)', async () => {
    const stream = await StreamReader.open(streamUrl('NSE_EQ'), await bench.login('NSE_EQ'));
    await stream.next(isHeartbeat);
    await bench.sim.close();
    await stream.end();
    expect(stream.error).toBeNull();
    expect(bench.sim.streams).toBe(0);
  });
});
