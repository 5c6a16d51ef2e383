/**
 * A bench for the exchange simulator's tests: a database of the run's dialect with the SBIN issue of the OMS
 * fixture (test/oms/fixture.ts) and an offer (test/support/offers.ts), a movable clock, the simulator on a
 * free port, the real e-OFS client (src/oms/links/nse-eofs/client.ts) and plain fetch for the rest.
 */
import { randomUUID } from 'node:crypto';
import { createExchangeSim, type ExchangeSim, type ExchangeSimOptions } from '../../src/exchange-sim/exchange-sim.js';
import { NseEofsClient } from '../../src/oms/links/nse-eofs/client.js';
import { referenceOf, type MemberBid, type NseCredentials } from '../../src/oms/links/nse-eofs/mapping.js';
import { parseOfsImport } from '../../src/schemas/ofs-import.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { HOUR, T0, testIssue } from '../oms/fixture.js';
import { createMigratedTestDatabase } from '../support/databases.js';
import { offerImport } from '../support/offers.js';

export { HOUR, T0 };

export const API_USER: NseCredentials = { memberCode: 'M0001', loginId: 'api-one', password: 'secret-one-pass' };
export const OTHER_USER: NseCredentials = { memberCode: 'M0001', loginId: 'api-two', password: 'secret-two-pass' };

/** The offer ACME-X: T is 2026-12-01 03:45-10:00 UTC, T+1 the next day; base 1,000 shares, 10 % retail, no green shoe, 100 for employees. */
export const OFFER_T = Date.parse('2026-12-01T03:45:00Z');
export const OFFER_T_CLOSE = OFFER_T + 6.25 * HOUR;
export const OFFER_T1 = OFFER_T + 24 * HOUR;
export const OFFER_T1_CLOSE = OFFER_T1 + 6.25 * HOUR;

export class SimBench {
  readonly clock = { now: T0 };
  readonly now = () => this.clock.now;

  private constructor(
    readonly store: Store,
    readonly sim: ExchangeSim,
    private readonly dispose: () => Promise<void>,
  ) {}

  static async open(options: Partial<ExchangeSimOptions> = {}): Promise<SimBench> {
    const { databaseUrl, dispose } = await createMigratedTestDatabase('ordergate_xsim');
    const store = openStore(databaseUrl);
    await migrateToLatest(store);
    await new OfsIssueRepository(store.db).upsert([testIssue()], T0);
    const { offers, issues } = parseOfsImport([
      offerImport(
        {
          offer_id: 'ACME-X',
          symbol: 'ACME',
          base_quantity: 1_000,
          green_shoe_quantity: 0,
          retail_reserve_pct: 10,
          retail_discount: null,
          employee_quantity: 100,
          employee_discount: null,
        },
        OFFER_T,
      ),
    ]);
    await new OfsOfferRepository(store.db).importAll(offers, issues, T0);
    const holder: { bench?: SimBench } = {};
    const sim = await createExchangeSim({
      store,
      users: [API_USER, OTHER_USER],
      now: () => holder.bench!.clock.now,
      runSteps: false,
      heartbeatMs: 60_000,
      streamPollMs: 60_000,
      ...options,
    });
    holder.bench = new SimBench(store, sim, dispose);
    return holder.bench;
  }

  client(exchange: 'NSE_EQ' | 'BSE_EQ' = 'NSE_EQ', credentials: NseCredentials = API_USER): NseEofsClient {
    return new NseEofsClient({ baseUrl: this.sim.baseUrl(exchange), credentials, now: this.now });
  }

  /** A token of the API user, by a plain login. */
  async login(exchange: 'NSE_EQ' | 'BSE_EQ' = 'NSE_EQ', credentials: NseCredentials = API_USER): Promise<string> {
    const answer = await this.call('POST', exchange, '/auth/token', null, credentials);
    if (answer.status !== 200) throw new Error(`login: ${answer.status} ${JSON.stringify(answer.body)}`);
    return (answer.body as { data: { token: string } }).data.token;
  }

  /** A call with a token (null: none) and a JSON body (undefined: none); answers the status, body and headers. */
  async call(
    method: string,
    exchange: string,
    path: string,
    token: string | null,
    body?: unknown,
  ): Promise<{ status: number; body: unknown; headers: Headers }> {
    const response = await fetch(`${this.sim.url}/${exchange}/api${path}`, {
      method,
      headers: {
        ...(body !== undefined && { 'content-type': 'application/json' }),
        ...(token !== null && { authorization: `Bearer ${token}` }),
      },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // Not JSON: the text itself.
    }
    return { status: response.status, body: parsed, headers: response.headers };
  }

  /**
   * The exchange's book of these bids, by the book query of another API user (a login of the client's
   * would end the client's session).
   */
  async book(bids: readonly MemberBid[], exchange: 'NSE_EQ' | 'BSE_EQ' = 'NSE_EQ'): Promise<Record<string, unknown>[]> {
    const token = await this.login(exchange, OTHER_USER);
    const references = bids.map((bid) => referenceOf(bid.orderId)).join(',');
    const answer = await this.call('GET', exchange, `/query/orderBook?apiEchoBack=${references}`, token);
    if (answer.status !== 200) throw new Error(`book: ${answer.status} ${JSON.stringify(answer.body)}`);
    return (answer.body as { data: Record<string, unknown>[] }).data;
  }

  /** The book's row of a bid, straight from its table. */
  async row(orderId: string) {
    return this.store.db.selectFrom('sim_exchange_bids').selectAll().where('order_id', '=', orderId).executeTakeFirst();
  }

  async close(): Promise<void> {
    await this.sim.close();
    await this.store.close();
    await this.dispose();
  }
}

/** A retail bid in SBIN (the fixture's issue): 10 at 101.50, a fresh order id. */
export function memberBid(overrides: Partial<MemberBid> = {}): MemberBid {
  return {
    orderId: randomUUID(),
    exchangeOrderId: null,
    symbol: 'SBIN',
    series: 'RS',
    ucc: 'UCC0001',
    clientType: 'CLI',
    custodian: null,
    zeroMargin: false,
    cutoff: false,
    quantity: 10,
    pricePaise: 10_150,
    investorCategory: null,
    ...overrides,
  };
}

/** The lines of a message stream, as they come. */
export class StreamReader {
  private buffer = '';
  readonly lines: Record<string, unknown>[] = [];
  private waiters: (() => void)[] = [];
  ended = false;
  error: unknown = null;

  private constructor(
    readonly status: number,
    private readonly controller: AbortController,
  ) {}

  static async open(url: string, token: string): Promise<StreamReader> {
    const controller = new AbortController();
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, signal: controller.signal });
    const reader = new StreamReader(response.status, controller);
    void reader.read(response);
    return reader;
  }

  private async read(response: Response): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
        this.buffer += decoder.decode(chunk, { stream: true });
        let newline: number;
        while ((newline = this.buffer.indexOf('\n')) >= 0) {
          this.lines.push(JSON.parse(this.buffer.slice(0, newline)) as Record<string, unknown>);
          this.buffer = this.buffer.slice(newline + 1);
        }
        this.notify();
      }
    } catch (error) {
      this.error = error;
    }
    this.ended = true;
    this.notify();
  }

  private notify(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  /** Waits for the first line after index `from` that `match` takes (or the end); answers it. */
  async next(match: (line: Record<string, unknown>) => boolean, from = 0): Promise<Record<string, unknown>> {
    for (;;) {
      const found = this.lines.slice(from).find(match);
      if (found !== undefined) return found;
      if (this.ended) throw new Error(`the stream ended; lines: ${JSON.stringify(this.lines)}`);
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  /** Waits for the stream to end. */
  async end(): Promise<void> {
    while (!this.ended) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }

  close(): void {
    this.controller.abort();
  }
}
