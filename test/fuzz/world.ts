/**
 * The fuzzer's world: a real server with users, OFS issues, orders and carts, so that generated requests can
 * name real objects (the caller's own, another user's) as well as unknown ones. Requests are generated
 * with symbolic references (`Ref`) that are resolved against the stored data just before each call, since
 * earlier calls change it (a cart's ETag, a cancelled order, a revoked token). Also takes snapshots of the
 * business tables, to check that a refused call changed nothing.
 */
import type { Kysely } from 'kysely';
import { newAccessToken, sha256Hex } from '../../src/auth/credentials.js';
import type { BidderCategory } from '../../src/domain/ofs/rules.js';
import { EXAMPLE_ORDER_LINE } from '../../src/schemas/ordercart.js';
import { UserRepository } from '../../src/store/access/users.js';
import { OrderRepository } from '../../src/store/orders/orders.js';
import { acceptedOrder } from '../../src/domain/orders/order.js';
import { OrderStatus } from '../../src/domain/orders/status.js';
import { offerImport } from '../support/offers.js';
import { TEST_PASSWORD, validBid, type TestServer, type TestUser } from '../support/server.js';

const SESSION_PATH = '/authentication/v1/user/session';
const OFFER_ID = 'FUZZ-OFFER-1';
/** An offer on T+1, its T allocation run: its users' unallotted non-retail bids may be carried forward and revised. */
const T1_OFFER_ID = 'FUZZ-OFFER-T1';
const T1_OFFER_LISTING = { exchange: 'NSE_EQ', scrip_token: 710001, symbol: 'TONE' } as const;

/** Tables that record refused calls too, by design: left out of the snapshot. */
const TABLES_RECORDING_REFUSALS = new Set(['audit_requests', 'idempotency_keys']);

export type RefName =
  | 'userId'
  | 'password'
  | 'apiKey'
  | 'token'
  | 'cartId'
  | 'cartExecutedNoTime'
  | 'cartEtag'
  | 'orderId'
  | 'orderExchange'
  | 'orderTradedQuantity'
  | 'orderIds'
  | 'scrip'
  | 'scripToken'
  | 'offerId';

/** A value taken from the world when the request is sent. */
export class Ref {
  constructor(readonly name: RefName) {}
  toString(): string {
    return `<${this.name}>`;
  }
  toJSON(): string {
    return this.toString();
  }
}

/** Whose object a request names: the caller's own, another user's, or none that exists. */
export interface ObjectPick {
  whose: 'own' | 'other' | 'unknown';
  n: number;
}

export interface ContextPick {
  caller: number;
  cart: ObjectPick;
  order: ObjectPick;
  issue: ObjectPick;
}

/** The values a request's references stand for. */
export type Resolved = Record<RefName, unknown> & {
  caller: TestUser;
  otherToken: string;
  otherApiKey: string;
  revokedToken: string;
};

interface StoredCart {
  ordercart_id: string;
  user_id: string;
  executed_no_time: number;
  revision: number;
}

interface StoredOrder {
  order_id: string;
  user_id: string;
  exchange: string;
  traded_quantity: number;
  status: string;
  offer_id: string | null;
}

const LIVE_STATUSES = new Set(['OMSXMITTED', 'EXXMITTED', 'PENDING']);

export type Snapshot = Map<string, string[]>;

export class World {
  readonly users: TestUser[] = [];
  /** Access tokens revoked by a logout, for mutations that send one. */
  readonly revokedTokens: string[] = [];
  readonly scrips: { exchange: string; scrip_token: number; symbol: string; series: string }[] = [];
  /** Cart and order ids seen once and gone since (a deleted cart): "unknown" ids that look real. */
  private readonly seenCartIds = new Set<string>();
  private tables: string[] = [];

  constructor(readonly server: TestServer) {}

  // The world reads and writes tables by name, whatever their row types.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private get db(): Kysely<any> {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    return this.server.store.db as unknown as Kysely<any>;
  }

  /** Three users (two retail, one non-retail), two open OFS issues, and a few orders and carts of each user. */
  async populate(): Promise<void> {
    const issues = [
      await this.server.registerIssue(),
      await this.server.registerIssue({ exchange: 'BSE_EQ', scripToken: 500209, symbol: 'INFY', series: 'OF' }),
    ];
    for (const issue of issues)
      this.scrips.push({
        exchange: issue.exchange,
        scrip_token: issue.scripToken,
        symbol: issue.symbol,
        series: issue.series,
      });
    // An offer of the exchanges' framework, for the offers' read calls.
    await this.server.admin.importOfs([
      offerImport({ offer_id: OFFER_ID, settlement_delay_seconds: 60 }, this.server.clock.now),
    ]);
    const users: [string, BidderCategory][] = [
      ['alice', 'RETAIL'],
      ['bob', 'NON_RETAIL'],
      ['carol', 'RETAIL'],
    ];
    for (const [userId, category] of users) this.users.push(await this.server.createUser(userId, { category }));
    const day = 24 * 60 * 60 * 1000;
    await this.server.admin.importOfs([
      offerImport(
        {
          offer_id: T1_OFFER_ID,
          settlement_delay_seconds: 60,
          symbol: T1_OFFER_LISTING.symbol,
          listings: [
            {
              exchange: T1_OFFER_LISTING.exchange,
              scrip_token: T1_OFFER_LISTING.scrip_token,
              series: { RETAIL: 'RS', NON_RETAIL: 'IS', EMPLOYEE: 'ES' },
            },
          ],
        },
        this.server.clock.now - day - 60 * 60 * 1000,
      ),
    ]);
    await this.db
      .updateTable('ofs_offers')
      .set({ t_allocated_at: this.server.clock.now - day, t_cutoff_price_paise: 10_000, t_unallotted: 0 })
      .where('offer_id', '=', T1_OFFER_ID)
      .execute();
    await this.ensureUnallottedOfferBids();
    // One operator, so that the operator calls have callers who may make them.
    await new UserRepository(this.server.store.db, this.server.store.dialect).setOperator('bob', this.server.clock.now);
    for (const user of this.users) {
      for (const scrip of this.scrips) {
        const res = await this.placeBid(user, scrip);
        if (res.status !== 200) throw new Error(`fuzz set-up: bid refused: ${res.text}`);
      }
      for (const name of ['basket', 'second basket']) {
        const res = await this.createCart(user, name);
        if (res.status !== 200) throw new Error(`fuzz set-up: cart refused: ${res.text}`);
      }
    }
    // A token revoked by a logout, for the mutations that send one.
    const alice = this.users[0]!;
    const login = await this.server.call('POST', SESSION_PATH, {
      body: {
        user_id: alice.userId,
        login_type: 'PASSWORD',
        password: TEST_PASSWORD,
        api_key: alice.apiKey,
        source: 'WEBAPI',
      },
    });
    const logout = await this.server.call('DELETE', SESSION_PATH, { token: login.body?.data?.access_token });
    if (logout.status !== 200) throw new Error(`fuzz set-up: logout refused: ${logout.text}`);
    this.revokedTokens.push(login.body.data.access_token);
    const tables = await this.server.store.db.introspection.getTables();
    this.tables = tables
      .map((t) => t.name)
      .filter((name) => !TABLES_RECORDING_REFUSALS.has(name) && !name.startsWith('kysely_'))
      .sort();
  }

  /** The values of a request's references, from the data stored now. */
  async resolve(pick: ContextPick): Promise<Resolved> {
    const caller = this.users[pick.caller % this.users.length]!;
    const other = this.users[(pick.caller + 1 + (pick.cart.n % (this.users.length - 1))) % this.users.length]!;
    const carts = (await this.db
      .selectFrom('order_carts')
      .select(['ordercart_id', 'user_id', 'executed_no_time', 'revision'])
      .orderBy('ordercart_id')
      .execute()) as StoredCart[];
    for (const cart of carts) this.seenCartIds.add(cart.ordercart_id);
    const orders = (await this.db
      .selectFrom('orders')
      .select(['order_id', 'user_id', 'exchange', 'traded_quantity', 'status', 'offer_id'])
      .orderBy('order_id')
      .execute()) as StoredOrder[];

    const cart = this.pickCart(pick.cart, carts, caller.userId, other.userId);
    const order = this.pickOrder(pick.order, orders, caller.userId, other.userId);
    const ownOrders = orders.filter((o) => o.user_id === caller.userId);
    const orderIds = [order.order_id, ...ownOrders.slice(0, pick.order.n % 4).map((o) => o.order_id)];
    const scrip =
      pick.issue.whose === 'unknown'
        ? { exchange: 'NSE_EQ', scrip_token: 1 + (pick.issue.n % 999_999), symbol: 'NOPE', series: 'OF' }
        : this.scrips[pick.issue.n % this.scrips.length]!;
    return {
      caller,
      otherToken: other.token,
      otherApiKey: other.apiKey,
      revokedToken: this.revokedTokens.at(-1) ?? `${caller.token.slice(0, -1)}x`,
      userId: caller.userId,
      password: caller.password,
      apiKey: caller.apiKey,
      token: caller.token,
      cartId: cart.ordercart_id,
      cartExecutedNoTime: cart.executed_no_time,
      cartEtag: `"${cart.revision}"`,
      orderId: order.order_id,
      orderExchange: order.exchange,
      orderTradedQuantity: order.traded_quantity,
      orderIds: orderIds.join(','),
      scrip,
      scripToken: String(scrip.scrip_token),
      offerId: pick.issue.whose === 'unknown' ? `NO-SUCH-OFFER-${pick.issue.n}` : OFFER_ID,
    };
  }

  private pickCart(pick: ObjectPick, carts: StoredCart[], callerId: string, otherId: string): StoredCart {
    const owner = pick.whose === 'own' ? callerId : otherId;
    const candidates = carts.filter((c) => c.user_id === owner);
    if (pick.whose !== 'unknown' && candidates.length > 0) return candidates[pick.n % candidates.length]!;
    const live = new Set(carts.map((c) => c.ordercart_id));
    const gone = [...this.seenCartIds].filter((id) => !live.has(id));
    const id =
      gone.length > 0 && pick.n % 2 === 0
        ? gone[pick.n % gone.length]!
        : `0190a1b2-c3d4-7e5f-8a6b-${String(pick.n).padStart(12, '0').slice(-12)}`;
    return { ordercart_id: id, user_id: owner, executed_no_time: pick.n % 3, revision: 1 + (pick.n % 5) };
  }

  private pickOrder(pick: ObjectPick, orders: StoredOrder[], callerId: string, otherId: string): StoredOrder {
    const owner = pick.whose === 'own' ? callerId : otherId;
    const theirs = orders.filter((o) => o.user_id === owner);
    // Mostly a live order, which modify and cancel can still act on.
    const live = theirs.filter((o) => LIVE_STATUSES.has(o.status));
    // A third of those a bid in the T+1 offer, which carry-forward acts on.
    const inOffer = live.filter((o) => o.offer_id === T1_OFFER_ID);
    const candidates =
      pick.n % 3 === 1 && inOffer.length > 0 ? inOffer : pick.n % 3 !== 0 && live.length > 0 ? live : theirs;
    if (pick.whose !== 'unknown' && candidates.length > 0) return candidates[pick.n % candidates.length]!;
    const id = pick.n % 2 === 0 ? `NOSUCH${pick.n}` : `${orders[0]?.order_id ?? 'X'}0`;
    return {
      order_id: id,
      user_id: owner,
      exchange: pick.n % 4 === 0 ? 'BSE_EQ' : 'NSE_EQ',
      traded_quantity: 0,
      status: 'PENDING',
      offer_id: null,
    };
  }

  /**
   * After a call that succeeded: every user gets a live token again (the call may have been a logout), and
   * at least two carts and two live orders (it may have deleted or cancelled the last ones).
   */
  async replenish(): Promise<void> {
    const now = this.server.clock.now;
    const sessions = new UserRepository(this.server.store.db, this.server.store.dialect);
    for (const [index, user] of this.users.entries()) {
      const session = await this.db
        .selectFrom('sessions')
        .select(['revoked_at', 'expires_at'])
        .where('token_hash', '=', sha256Hex(user.token))
        .executeTakeFirst();
      if (session === undefined || session.revoked_at !== null || Number(session.expires_at) <= now) {
        this.revokedTokens.push(user.token);
        // Straight into the store: a login over HTTP would spend a password hash on each.
        const token = newAccessToken();
        await sessions.createSession({
          tokenHash: token.hash,
          userId: user.userId,
          now,
          expiresAt: now + 24 * 60 * 60 * 1000,
        });
        this.users[index] = { ...user, token: token.secret };
      }
    }
    for (const user of this.users) {
      const carts = await this.db
        .selectFrom('order_carts')
        .select('ordercart_id')
        .where('user_id', '=', user.userId)
        .execute();
      for (let i = carts.length; i < 2; i++) await this.createCart(user, 'replenished');
      const live = await this.db
        .selectFrom('orders')
        .select('order_id')
        .where('user_id', '=', user.userId)
        .where('status', 'in', [...LIVE_STATUSES])
        .execute();
      // A retail user may be at the retail limit: then the bid is refused, and that is all.
      for (let i = live.length; i < 2; i++) await this.placeBid(user, this.scrips[i % this.scrips.length]!);
    }
    await this.ensureUnallottedOfferBids();
  }

  /**
   * Two live non-retail bids of each user in the T+1 offer, unallotted on T (what the T allocation leaves
   * them), for carry-forward to act on: written as the OMS leaves them, PENDING at the exchange.
   */
  private async ensureUnallottedOfferBids(): Promise<void> {
    const now = this.server.clock.now;
    const orders = new OrderRepository(this.server.store.db, this.server.store.dialect);
    for (const user of this.users) {
      const live = await this.db
        .selectFrom('orders')
        .select('order_id')
        .where('user_id', '=', user.userId)
        .where('offer_id', '=', T1_OFFER_ID)
        .where('status', 'in', [...LIVE_STATUSES])
        .execute();
      for (let i = live.length; i < 2; i++) {
        const order = acceptedOrder(
          {
            orderId: `fuzz-offer-${user.userId}-${now}-${i}-${live.length}`,
            userId: user.userId,
            exchange: T1_OFFER_LISTING.exchange,
            scripToken: T1_OFFER_LISTING.scrip_token,
            symbol: T1_OFFER_LISTING.symbol,
            series: 'IS',
            transactionType: 'BUY',
            productType: 'OFS',
            orderType: 'RL',
            quantity: 10,
            pricePaise: 10_100,
            disclosedQuantity: 0,
            orderIdentifier: null,
            algoId: null,
            strategyId: null,
            partCode: null,
            venderCode: null,
            requestId: null,
            category: 'NON_RETAIL',
            offerId: T1_OFFER_ID,
            offerCategory: 'NII',
            marginType: 'H',
          },
          now,
        );
        const pending = { ...order, status: OrderStatus.PENDING };
        await this.server.store.writeTransaction((tx) =>
          orders.apply(
            tx,
            [
              {
                before: null,
                after: pending,
                reason: 'Not allotted on T (fuzz world)',
                origin: { actor: 'exchange', requestId: null },
              },
            ],
            now,
          ),
        );
      }
    }
  }

  private async createCart(user: TestUser, name: string) {
    const body = {
      ordercartName: name,
      orders: JSON.stringify([EXAMPLE_ORDER_LINE]),
      version: '1',
      createdBy: user.userId,
      modifiedBy: user.userId,
      executedNoTime: 0,
    };
    return this.server.call('POST', '/transactional/v1/ordercart', { body, token: user.token });
  }

  private async placeBid(user: TestUser, scrip: (typeof this.scrips)[number]) {
    return this.server.call('POST', '/transactional/v1/orders/regular', {
      body: validBid({ scrip_info: scrip, quantity: '1' }),
      token: user.token,
      apiKey: user.apiKey,
    });
  }

  /** Every row of every business table (all but the audit trail and the idempotency keys), as text. */
  async snapshot(): Promise<Snapshot> {
    const snapshot: Snapshot = new Map();
    for (const table of this.tables) {
      const rows = await this.db.selectFrom(table).selectAll().execute();
      snapshot.set(table, rows.map((row) => JSON.stringify(row)).sort());
    }
    return snapshot;
  }
}

/** What differs between two snapshots, table by table (a few rows each); empty when they are equal. */
export function snapshotDifferences(before: Snapshot, after: Snapshot): string[] {
  const differences: string[] = [];
  for (const [table, rows] of after) {
    const old = before.get(table) ?? [];
    if (old.length === rows.length && old.every((row, i) => row === rows[i])) continue;
    const oldSet = new Set(old);
    const newSet = new Set(rows);
    const added = rows.filter((row) => !oldSet.has(row));
    const removed = old.filter((row) => !newSet.has(row));
    differences.push(
      `${table}: ${added.length} row(s) added or changed ${JSON.stringify(added.slice(0, 3))}, ${removed.length} removed or changed ${JSON.stringify(removed.slice(0, 3))}`,
    );
  }
  return differences;
}
