/** The event-stream parser (the HTML standard's rules), and the order-event iterator against scripted streams. */
import fc from 'fast-check';
import type { ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { OrdergateClient, OrdergateError, type OrderEvent } from '../src/index.js';
import { SseParser, type SseMessage } from '../src/sse.js';
import { envelope, json, stubServer, type StubServer } from './support/stub-server.js';

describe('SseParser', () => {
  it('dispatches on a blank line, joins data lines, keeps the last id, ignores comments and unknown fields', () => {
    const parser = new SseParser();
    const messages = parser.feed(
      ': heartbeat\n\nid: 1\nevent: order_update\ndata: {"a":\ndata: 1}\nfoo: bar\n\ndata:x\n\nid\ndata: y\n\n',
    );
    expect(messages).toEqual([
      { event: 'order_update', data: '{"a":\n1}', lastEventId: '1' },
      { event: 'message', data: 'x', lastEventId: '1' },
      { event: 'message', data: 'y', lastEventId: '' },
    ]);
  });

  it('takes CRLF, LF and CR line ends, a CR split from its LF across chunks, and only one space after the colon', () => {
    const parser = new SseParser('7');
    expect(parser.feed('data:  two spaces\r')).toEqual([]);
    expect(parser.feed('\n\r\ndata: b\r\rid: 8\0\nretry: 1500\ndata: c\n\n')).toEqual([
      { event: 'message', data: ' two spaces', lastEventId: '7' },
      { event: 'message', data: 'b', lastEventId: '7' },
      { event: 'message', data: 'c', lastEventId: '7' },
    ]);
    expect(parser.reconnectionTimeMs).toBe(1500);
  });

  it('an event without data and an unfinished event are not dispatched', () => {
    const parser = new SseParser();
    expect(parser.feed('id: 3\nevent: order_update\n\ndata: half')).toEqual([]);
    expect(parser.feed('\n\n')).toEqual([{ event: 'message', data: 'half', lastEventId: '3' }]);
  });

  it('whatever the chunks a stream arrives in, the events are the same (property)', () => {
    const line = fc.oneof(
      fc.constantFrom(': heartbeat', 'event: order_update', 'event: stream_end', '', 'retry: 10', 'id'),
      fc.integer({ min: 1, max: 1e6 }).map((id) => `id: ${id}`),
      fc.string({ unit: fc.constantFrom('a', '{', '"', ':', ' ', 'é', '1') }).map((text) => `data: ${text}`),
    );
    fc.assert(
      fc.property(
        fc.array(line, { maxLength: 30 }),
        fc.constantFrom('\n', '\r\n', '\r'),
        fc.array(fc.nat(), { maxLength: 10 }),
        (lines, eol, cuts) => {
          const text = lines.map((l) => l + eol).join('') + eol;
          const whole = new SseParser().feed(text);
          const parser = new SseParser();
          const pieces: SseMessage[] = [];
          let at = 0;
          for (const cut of [...cuts.map((c) => c % (text.length + 1))].sort((a, b) => a - b)) {
            pieces.push(...parser.feed(text.slice(at, cut)));
            at = cut;
          }
          pieces.push(...parser.feed(text.slice(at)));
          expect(pieces).toEqual(whole);
        },
      ),
    );
  });
});

const orderEvent = (id: number, status: string): OrderEvent => ({
  event_id: id,
  type: 'order_update',
  order_id: 'o-1',
  status,
  reason: 'why',
  at: '2026-01-01T00:00:00Z',
  order: {} as OrderEvent['order'],
});
const frame = (event: OrderEvent) => `id: ${event.event_id}\nevent: order_update\ndata: ${JSON.stringify(event)}\n\n`;
const streamOf =
  (...chunks: string[]) =>
  (_request: unknown, response: ServerResponse) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const chunk of chunks) response.write(chunk);
    response.end();
  };

describe('OrdergateClient.events', () => {
  let stub: StubServer | undefined;
  afterEach(async () => {
    await stub?.close();
    stub = undefined;
  });

  const collect = async (
    client: OrdergateClient,
    count: number,
    options: Parameters<OrdergateClient['events']>[0] = {},
  ) => {
    const seen: OrderEvent[] = [];
    for await (const event of client.events(options)) {
      seen.push(event);
      if (seen.length === count) break;
    }
    return seen;
  };

  it('reconnects after an end without stream_end and after a stream_end e-503, each time with the last id in Last-Event-ID', async () => {
    stub = await stubServer([
      streamOf(': heartbeat\n\n', frame(orderEvent(5, 'OMSXMITTED')), frame(orderEvent(6, 'EXXMITTED'))),
      streamOf(frame(orderEvent(7, 'PENDING')), `event: stream_end\ndata: ${envelope('e-503')}\n\n`),
      streamOf(frame(orderEvent(8, 'CANCELLED'))),
    ]);
    const client = new OrdergateClient({ baseUrl: stub.url }).withToken('token-1');
    const seen = await collect(client, 4, { lastEventId: 4 });
    expect(seen.map((event) => [event.event_id, event.status])).toEqual([
      [5, 'OMSXMITTED'],
      [6, 'EXXMITTED'],
      [7, 'PENDING'],
      [8, 'CANCELLED'],
    ]);
    expect(stub.requests.map((request) => request.headers['last-event-id'])).toEqual(['4', '6', '7']);
    expect(stub.requests[0]!.headers).toMatchObject({ authorization: 'Bearer token-1', accept: 'text/event-stream' });
  });

  it('without lastEventId the first connection sends none', async () => {
    stub = await stubServer([streamOf(frame(orderEvent(1, 'OMSXMITTED')))]);
    await collect(new OrdergateClient({ baseUrl: stub.url }).withToken('t'), 1);
    expect(stub.requests[0]!.headers['last-event-id']).toBeUndefined();
  });

  it('a stream_end that ends the session ends the iterator with its OrdergateError, after the events before it', async () => {
    stub = await stubServer([
      streamOf(
        frame(orderEvent(1, 'PENDING')),
        `event: stream_end\ndata: ${envelope('e-204', 'revoked', 'req-7')}\n\n`,
      ),
    ]);
    const seen: OrderEvent[] = [];
    const error = await (async () => {
      for await (const event of new OrdergateClient({ baseUrl: stub!.url }).withToken('t').events()) seen.push(event);
    })().catch((e: unknown) => e);
    expect(seen.map((event) => event.event_id)).toEqual([1]);
    expect(error).toBeInstanceOf(OrdergateError);
    expect(error).toMatchObject({ status: 401, code: 'e-204', requestId: 'req-7', message: 'revoked' });
    expect(stub.requests).toHaveLength(1);
  });

  it('a refusal to open the stream is thrown, except a 503, after which it tries again', async () => {
    stub = await stubServer([json(503, envelope('e-503'), { 'retry-after': '0' }), json(401, envelope('e-202'))]);
    const error = await collect(new OrdergateClient({ baseUrl: stub.url }).withToken('t'), 1).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: 'e-202' });
    expect(stub.requests).toHaveLength(2);
  });

  it('aborting the signal ends the iterator quietly, even while it waits for the next event', async () => {
    stub = await stubServer([
      (_request, response) =>
        void response.writeHead(200, { 'content-type': 'text/event-stream' }).write(': heartbeat\n\n'),
    ]);
    const abort = new AbortController();
    setTimeout(() => abort.abort(), 200);
    expect(
      await collect(new OrdergateClient({ baseUrl: stub.url }).withToken('t'), 1, { signal: abort.signal }),
    ).toEqual([]);
  });

  it('connects at once: opened settles when the stream is live, or rejects with the refusal', async () => {
    stub = await stubServer([
      (_request, response) =>
        void response.writeHead(200, { 'content-type': 'text/event-stream' }).write(': heartbeat\n\n'),
    ]);
    const stream = new OrdergateClient({ baseUrl: stub.url }).withToken('t').events();
    await stream.opened;
    expect(stub.requests).toHaveLength(1);
    // close() ends a loop that waits for the next event.
    const loop = (async () => {
      for await (const event of stream) void event;
    })();
    await stream.close();
    await loop;
    await stub.close();
    stub = await stubServer([json(401, envelope('e-201'))]);
    await expect(new OrdergateClient({ baseUrl: stub.url }).events().opened).rejects.toMatchObject({
      status: 401,
      code: 'e-201',
    });
  });
});
