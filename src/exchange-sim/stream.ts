/**
 * The message stream of the exchange simulator (mapping.ts's NseStreamMessage; Decision there): one JSON
 * object a line over a chunked answer kept open. It replays the allocation events of the exchange's bids
 * after `?from=<seq>` (seq: the event's id in sim_exchange_events), then sends each new one as the
 * simulated exchange's step writes it (read on an interval, or at once when told: `wake`), and a HEARTBEAT
 * line every `heartbeatMs` with how far it has gone. It reads only as far as the events are complete
 * (SimEventHorizon), so that an event that commits late with a smaller id is never passed. It marks
 * nothing delivered: the reader keeps its own cursor and asks again from it.
 */
import type { ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import type { NseStreamMessage } from '../oms/links/nse-eofs/mapping.js';
import { referenceOf } from '../oms/links/nse-eofs/mapping.js';
import type { Database } from '../store/schema/tables.js';
import type { DialectName } from '../store/sql/database.js';
import { SimEventHorizon, type SimExchangeRepository, type SimStreamEvent } from '../store/ofs/sim-exchange.js';
import type { Kysely } from 'kysely';

/** Events read per query. */
const EVENTS_PER_READ = 500;

export interface StreamTiming {
  /** Between two HEARTBEAT lines. */
  heartbeatMs: number;
  /** Between two reads of the events table when nothing wakes the stream. */
  pollMs: number;
}

/** An event of the book as an ORDER line of the stream. */
export function orderMessageOf(event: SimStreamEvent): NseStreamMessage {
  return {
    type: 'ORDER',
    seq: event.id,
    event: event.kind,
    orderId: event.exchangeOrderId,
    apiEchoBack: referenceOf(event.orderId),
    allottedQuantity: event.quantity,
    allottedPrice: event.pricePaise === null ? null : event.pricePaise / 100,
    day: event.day,
    text: event.reason,
  };
}

class OpenStream {
  private cursor: number;
  private readonly horizon: SimEventHorizon;
  private pumping: Promise<void> | null = null;
  private again = false;
  private closed = false;
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(
    private readonly response: ServerResponse,
    private readonly exchange: string,
    from: number,
    private readonly book: SimExchangeRepository,
    db: Kysely<Database>,
    dialect: DialectName,
    private readonly timing: StreamTiming,
    private readonly logger: Logger | undefined,
    private readonly onClose: (stream: OpenStream) => void,
  ) {
    this.cursor = from;
    this.horizon = new SimEventHorizon(db, dialect, from);
  }

  start(): void {
    this.response.writeHead(200, {
      'content-type': 'application/x-ndjson; charset=utf-8',
      'cache-control': 'no-store',
    });
    this.response.flushHeaders();
    this.response.on('close', () => this.close());
    this.timers.push(setInterval(() => this.heartbeat(), this.timing.heartbeatMs));
    this.timers.push(setInterval(() => void this.wake(), this.timing.pollMs));
    // The replay, then a first heartbeat: the reader knows at once how far the stream has gone.
    void this.wake().then(() => this.heartbeat());
  }

  /** Reads what has come since the last read and sends it; a call during a read makes one more read after it. */
  wake(): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.pumping !== null) {
      this.again = true;
      return this.pumping;
    }
    this.pumping = (async () => {
      try {
        do {
          this.again = false;
          await this.pump();
        } while (this.again && !this.closed);
      } catch (error) {
        // The database was out: the next poll tries again; the stream stays open.
        this.logger?.warn({ err: error, exchange: this.exchange }, 'message stream: reading the events failed');
      } finally {
        this.pumping = null;
      }
    })();
    return this.pumping;
  }

  private async pump(): Promise<void> {
    const upTo = await this.horizon.advance();
    for (;;) {
      if (this.closed) return;
      const events = await this.book.eventsAfter(this.exchange, this.cursor, upTo, EVENTS_PER_READ);
      for (const event of events) this.send(orderMessageOf(event));
      if (events.length < EVENTS_PER_READ) {
        // Every event up to the horizon is sent (those of the other exchange are not this stream's).
        this.cursor = Math.max(this.cursor, upTo);
        return;
      }
      this.cursor = events.at(-1)!.id;
      // Until the reader drains what it has, or leaves (a connection closed while full never drains).
      if (this.response.writableNeedDrain)
        await new Promise<void>((resolve) => {
          const done = () => {
            this.response.off('drain', done);
            this.response.off('close', done);
            resolve();
          };
          this.response.once('drain', done);
          this.response.once('close', done);
        });
    }
  }

  private heartbeat(): void {
    // A reader that does not read gets no more lines until it drains what it has.
    if (this.closed || this.response.writableNeedDrain) return;
    this.send({ type: 'HEARTBEAT', seq: this.cursor });
  }

  private send(message: NseStreamMessage): void {
    if (this.closed) return;
    this.response.write(`${JSON.stringify(message)}\n`);
    if (message.type === 'ORDER') this.cursor = Math.max(this.cursor, message.seq);
  }

  /** Ends the answer (a clean end of the stream). */
  end(): void {
    if (this.closed) return;
    this.response.end();
    this.close();
  }

  /** Cuts the connection, as a network fault or a crash would. */
  destroy(): void {
    this.response.socket?.destroy();
    this.response.destroy();
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const timer of this.timers) clearInterval(timer);
    this.onClose(this);
  }
}

/** The open message streams of one simulator. */
export class MessageStreams {
  private readonly open = new Set<OpenStream>();

  constructor(
    private readonly book: SimExchangeRepository,
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly timing: StreamTiming,
    private readonly logger?: Logger,
  ) {}

  /** Streams the exchange's events after `from` on `response` until it closes. */
  serve(response: ServerResponse, exchange: string, from: number): void {
    const stream = new OpenStream(
      response,
      exchange,
      from,
      this.book,
      this.db,
      this.dialect,
      this.timing,
      this.logger,
      (closed) => this.open.delete(closed),
    );
    this.open.add(stream);
    stream.start();
  }

  get count(): number {
    return this.open.size;
  }

  /** Every stream reads now (the step has written events). */
  async wake(): Promise<void> {
    await Promise.all([...this.open].map((stream) => stream.wake()));
  }

  /** Cuts every stream's connection (the fault hook `dropStreams`). */
  dropAll(): void {
    for (const stream of [...this.open]) stream.destroy();
  }

  /** Ends every stream (the simulator closes). */
  endAll(): void {
    for (const stream of [...this.open]) stream.end();
  }
}
