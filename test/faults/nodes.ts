/**
 * Real ordergate processes for the fault tests: `dist/main.js` servers and `ordergate oms` workers over one
 * database, users seeded directly in the store, a crowd of clients bidding until told to stop, and the
 * checks that every acknowledged order is whole and reached the simulated exchange exactly once.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { sql } from 'kysely';
import { AdminService } from '../../src/services/admin.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { CLI, cleanEnv, ROOT } from '../cli/run-ordergate.js';
import { openIssue, TEST_PASSWORD, validBid } from '../support/server.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { testMemberData } from '../support/member-data.js';

const MAIN = join(ROOT, 'dist', 'main.js');
const START_TIMEOUT_MS = 20_000;

export interface NodeProcess {
  child: ChildProcessWithoutNullStreams;
  /** The server's URL; empty for an OMS worker. */
  url: string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<ChildProcessWithoutNullStreams>();

/** Kills every process a test left running (afterAll / afterEach). */
export function killAll(): void {
  for (const child of running) child.kill('SIGKILL');
}

/**
 * Starts `dist/main.js` (`ordergate serve`) or `ordergate oms` and resolves once its log says it runs.
 * Rate limits are off: the tests measure durability, not limits.
 */
export function startNode(kind: 'serve' | 'oms', env: Record<string, string>): Promise<NodeProcess> {
  const args = kind === 'serve' ? [MAIN] : [CLI, 'oms'];
  const child = spawn(process.execPath, args, {
    cwd: ROOT,
    env: cleanEnv({
      HOST: '127.0.0.1',
      PORT: '0',
      LOG_LEVEL: 'info',
      OMS_POLL_MS: '50',
      RATE_LIMIT_ORDERS_PER_SECOND: '0',
      ...env,
    }),
  });
  running.add(child);
  let stderr = '';
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  const ready = kind === 'serve' ? 'ordergate listening' : 'ordergate oms running';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${kind} did not start within ${START_TIMEOUT_MS} ms: ${stderr}`)),
      START_TIMEOUT_MS,
    );
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`${kind} exited (${code ?? signal}) before it was ready: ${stderr}`));
    });
    let scanned = 0;
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      const lines = stderr.split('\n');
      for (; scanned < lines.length - 1; scanned += 1) {
        const line = lines[scanned]!;
        if (!line.startsWith('{')) continue;
        const entry = JSON.parse(line) as { msg?: string; url?: string };
        if (entry.msg === ready) {
          clearTimeout(timer);
          resolve({ child, url: entry.url ?? '', stderr: () => stderr, exited });
        }
      }
    });
    child.stdout.resume();
  });
}

export interface Bidder {
  userId: string;
  apiKey: string;
  token: string;
}

/**
 * Migrates the database and adds `count` non-retail users (no Rs 2 lakh retail limit) with API keys, and
 * the test OFS issue with both windows open now. Logging in is left to `login`, over HTTP.
 */
export async function seed(databaseUrl: string, count: number): Promise<{ userId: string; apiKey: string }[]> {
  const store = openStore(databaseUrl);
  try {
    await migrateToLatest(store);
    const issues = new OfsIssueRepository(store.db);
    const admin = new AdminService(
      new UserRepository(store.db, store.dialect),
      new OfsOfferRepository(store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    );
    await issues.upsert([openIssue(Date.now())], Date.now());
    const users = [];
    for (let i = 0; i < count; i += 1) {
      const userId = `bidder${i}`;
      await admin.addUser(userId, TEST_PASSWORD, { category: 'NON_RETAIL', member: testMemberData(userId) });
      users.push({ userId, apiKey: (await admin.createApiKey(userId)).apiKey });
    }
    return users;
  } finally {
    await store.close();
  }
}

export async function login(url: string, user: { userId: string; apiKey: string }): Promise<Bidder> {
  const response = await fetch(`${url}/authentication/v1/user/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      user_id: user.userId,
      login_type: 'PASSWORD',
      password: TEST_PASSWORD,
      second_auth_type: '',
      second_auth: '',
      api_key: user.apiKey,
      source: 'WEBAPI',
    }),
  });
  const body = (await response.json()) as { data?: { access_token?: string } };
  if (response.status !== 200 || !body.data?.access_token)
    throw new Error(`login of ${user.userId} failed: ${response.status} ${JSON.stringify(body)}`);
  return { ...user, token: body.data.access_token };
}

export type BidOutcome =
  | { kind: 'acknowledged'; orderId: string; identifier: string }
  | { kind: 'refused'; status: number; code: string | undefined; identifier: string }
  /** No complete answer: the connection failed (refused, reset) or the body was cut off. */
  | { kind: 'no-answer'; error: string; identifier: string };

/** Places one bid; `identifier` (at most 10 characters) lets the test find its order later. */
export async function placeBid(
  url: string,
  bidder: Bidder,
  identifier: string,
  signal?: AbortSignal,
): Promise<BidOutcome> {
  try {
    const response = await fetch(`${url}/transactional/v1/orders/regular`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${bidder.token}`,
        'x-api-key': bidder.apiKey,
      },
      body: JSON.stringify(validBid({ order_identifier: identifier, quantity: '1' })),
      signal: signal ?? AbortSignal.timeout(20_000),
    });
    const text = await response.text();
    const body = JSON.parse(text) as { code?: string; data?: { orderId?: string } };
    if (response.status === 200 && typeof body.data?.orderId === 'string')
      return { kind: 'acknowledged', orderId: body.data.orderId, identifier };
    return { kind: 'refused', status: response.status, code: body.code, identifier };
  } catch (error) {
    return { kind: 'no-answer', error: String((error as Error).cause ?? error), identifier };
  }
}

export interface Crowd {
  outcomes: BidOutcome[];
  acknowledged(): string[];
  /** Resolves once every client has stopped. */
  stop(): Promise<void>;
}

/**
 * `clients` concurrent clients, each placing bids one after another (spread over the bidders and the
 * URLs) until stop(); a client also stops at its first request without an answer (its node is gone).
 */
export function bidCrowd(urls: readonly string[], bidders: readonly Bidder[], clients: number): Crowd {
  const outcomes: BidOutcome[] = [];
  let stopped = false;
  let sequence = 0;
  const loops = Array.from({ length: clients }, async (_, client) => {
    const url = urls[client % urls.length]!;
    const bidder = bidders[client % bidders.length]!;
    while (!stopped) {
      const outcome = await placeBid(url, bidder, `c${(sequence += 1)}`);
      outcomes.push(outcome);
      if (outcome.kind === 'no-answer') return;
    }
  });
  return {
    outcomes,
    acknowledged: () => outcomes.flatMap((outcome) => (outcome.kind === 'acknowledged' ? [outcome.orderId] : [])),
    stop: async () => {
      stopped = true;
      await Promise.all(loops);
    },
  };
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `condition` answers true, for at most `ms`; answers whether it did. */
export async function eventually(condition: () => Promise<boolean>, ms: number, everyMs = 250): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (await condition()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(everyMs);
  }
}

/** Outbox entries not done yet. */
export async function openOutbox(store: Store): Promise<number> {
  const row = await store.db
    .selectFrom('outbox')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('done_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export interface OrderAudit {
  /** Every order in the database: id, its history rows, its outbox rows, its transmissions to the exchange. */
  orders: Map<
    string,
    {
      status: string;
      history: number;
      outbox: number;
      placeEntries: number;
      exchangeRows: number;
      transmissions: number;
    }
  >;
}

/** Reads, for every order, how many history, outbox and exchange rows it has. */
export async function auditOrders(store: Store): Promise<OrderAudit> {
  const rows = await store.db
    .selectFrom('orders as o')
    .select((eb) => [
      'o.order_id',
      'o.status',
      eb
        .selectFrom('order_history as h')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('h.order_id', '=', 'o.order_id')
        .as('history'),
      eb
        .selectFrom('outbox as x')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('x.order_id', '=', 'o.order_id')
        .as('outbox'),
      eb
        .selectFrom('outbox as x')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('x.order_id', '=', 'o.order_id')
        .where('x.action', '=', 'PLACE')
        .as('place_entries'),
      eb
        .selectFrom('sim_exchange_bids as b')
        .select(eb.fn.countAll<number>().as('n'))
        .whereRef('b.order_id', '=', 'o.order_id')
        .as('exchange_rows'),
      eb
        .selectFrom('sim_exchange_bids as b')
        .select(sql<number>`coalesce(sum(b.transmissions), 0)`.as('t'))
        .whereRef('b.order_id', '=', 'o.order_id')
        .as('transmissions'),
    ])
    .execute();
  const orders = new Map<
    string,
    {
      status: string;
      history: number;
      outbox: number;
      placeEntries: number;
      exchangeRows: number;
      transmissions: number;
    }
  >();
  for (const row of rows) {
    orders.set(row.order_id, {
      status: row.status,
      history: Number(row.history),
      outbox: Number(row.outbox),
      placeEntries: Number(row.place_entries),
      exchangeRows: Number(row.exchange_rows),
      transmissions: Number(row.transmissions),
    });
  }
  return { orders };
}

/** The ids of orders whose order_identifier is one of `identifiers`. */
export async function ordersWithIdentifiers(store: Store, identifiers: readonly string[]): Promise<string[]> {
  if (identifiers.length === 0) return [];
  const rows = await store.db
    .selectFrom('orders')
    .select('order_id')
    .where('order_identifier', 'in', identifiers)
    .execute();
  return rows.map((row) => row.order_id);
}
