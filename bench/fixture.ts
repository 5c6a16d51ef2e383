/**
 * The benchmark's data: bidders (half retail, half non-retail) with API keys and sessions, one OFS issue
 * whose windows are open, and optionally a preload of a million orders with their histories for other
 * users. Written straight into the store before the server starts, as `ordergate` commands would.
 */
import { newAccessToken, newApiKey, OWASP_PASSWORD_HASHER } from '../src/auth/credentials.js';
import { sql } from 'kysely';
import type { Store } from '../src/store/sql/database.js';
import { OfsIssueRepository } from '../src/store/ofs/issues.js';
import { UserRepository } from '../src/store/access/users.js';

export interface Bidder {
  userId: string;
  category: 'RETAIL' | 'NON_RETAIL';
  token: string;
  apiKey: string;
}

export const ISSUE = { exchange: 'NSE_EQ', scripToken: 500112, symbol: 'SBIN', series: 'OF' } as const;

/** The route every benchmark bids on: ODIN's regular order placement. */
export const PLACE_PATH = '/transactional/v1/orders/regular';

/**
 * A bid of Rs 1.00 for 1 share: valid for both categories (the floor and the retail cut-off are Rs 1.00),
 * so that a retail bidder reaches the Rs 2,00,000 limit only after 200,000 bids and every bid of the run
 * is accepted.
 */
export const BID_BODY = JSON.stringify({
  scrip_info: {
    exchange: ISSUE.exchange,
    scrip_token: ISSUE.scripToken,
    symbol: ISSUE.symbol,
    series: ISSUE.series,
    expiry_date: '',
    strike_price: '',
    option_type: '',
  },
  transaction_type: 'BUY',
  product_type: 'OFS',
  order_type: 'RL',
  quantity: '1',
  price: 1,
  trigger_price: null,
  disclosed_quantity: 0,
  validity: '',
  validity_days: 0,
  is_amo: false,
  order_identifier: 'bench',
});

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * A bidder's member data (docs/design/member-data.md): a UCC of its own (the prefix's first letters and its
 * number) and a person's PAN, so that its bids pass the member-data rule as a real client's do.
 */
function benchMember(prefix: string, i: number) {
  const ucc = `${prefix
    .replace(/[^A-Za-z]/g, '')
    .slice(0, 3)
    .toUpperCase()}${i}`.slice(0, 10);
  const pan = `BENP${LETTERS[i % 26]}${String(i % 10_000).padStart(4, '0')}${LETTERS[Math.floor(i / 26) % 26]}`;
  return { ucc, pan, clientType: 'CLI' as const };
}

export async function createBidders(store: Store, count: number, prefix = 'bidder'): Promise<Bidder[]> {
  const users = new UserRepository(store.db, store.dialect);
  const now = Date.now();
  const passwordHash = await OWASP_PASSWORD_HASHER.hash('bench-password-1');
  const bidders: Bidder[] = [];
  for (let i = 0; i < count; i++) {
    const userId = `${prefix}${String(i).padStart(3, '0')}`;
    const category = i % 2 === 0 ? 'RETAIL' : 'NON_RETAIL';
    await users.create({ userId, passwordHash, category, totpSecret: null, now, member: benchMember(prefix, i) });
    const key = newApiKey();
    await users.addApiKey({ keyId: key.id, userId, keyHash: key.hash, now });
    const token = newAccessToken();
    await users.createSession({ tokenHash: token.hash, userId, now, expiresAt: now + 86_400_000 });
    bidders.push({ userId, category, token: token.secret, apiKey: key.secret });
  }
  return bidders;
}

export async function createIssue(store: Store): Promise<void> {
  const now = Date.now();
  await new OfsIssueRepository(store.db).upsert(
    [
      {
        ...ISSUE,
        floorPricePaise: 100,
        tickSizePaise: 5,
        offerQuantity: 1_000_000_000,
        retailReservePct: 10,
        retailCutoffPricePaise: 100,
        allocation: 'PROPORTIONATE',
        nonRetailOpensAt: now - 3_600_000,
        nonRetailClosesAt: now + 86_400_000,
        retailOpensAt: now - 3_600_000,
        retailClosesAt: now + 86_400_000,
        settlementDelayMs: null,
      },
    ],
    now,
  );
}

/**
 * `orders` finished-looking orders (PENDING at the exchange) of 1,000 other users, each with the three
 * history rows of its way there and its done outbox entry, in set-based inserts.
 */
export async function preload(store: Store, orders: number): Promise<void> {
  const users = new UserRepository(store.db, store.dialect);
  const passwordHash = await OWASP_PASSWORD_HASHER.hash('bench-password-1');
  const now = Date.now();
  const owners = 1000;
  for (let i = 0; i < owners; i++) {
    await users.create({
      userId: `preload${String(i).padStart(4, '0')}`,
      passwordHash,
      category: i % 2 === 0 ? 'RETAIL' : 'NON_RETAIL',
      totpSecret: null,
      now,
    });
  }
  const chunk = 100_000;
  for (let start = 0; start < orders; start += chunk) {
    const n = Math.min(chunk, orders - start);
    const series =
      store.dialect === 'postgres'
        ? sql`select g as n from generate_series(${start}::int8, ${start + n - 1}::int8) g`
        : sql`with recursive s(n) as (select cast(${start} as integer) union all select n + 1 from s where n < cast(${start + n - 1} as integer)) select n from s`;
    await store.db.transaction().execute(async (trx) => {
      const orderId = sql`'00000000-0000-7000-8000-' || substr('000000000000' || n, -12, 12)`;
      const pgOrderId = sql`'00000000-0000-7000-8000-' || lpad(n::text, 12, '0')`;
      const id = store.dialect === 'postgres' ? pgOrderId : orderId;
      const owner =
        store.dialect === 'postgres'
          ? sql`'preload' || lpad((n % ${sql.lit(owners)})::text, 4, '0')`
          : sql`'preload' || substr('0000' || (n % ${sql.lit(owners)}), -4, 4)`;
      const at = sql`${now - 86_400_000} + n`;
      await sql`insert into orders (order_id, user_id, exchange, scrip_token, symbol, series, transaction_type, product_type,
          order_type, quantity, price_paise, disclosed_quantity, traded_quantity, status, order_identifier, request_id,
          created_at, updated_at, category, exchange_order_id)
        select ${id}, ${owner}, 'NSE_EQ', ${ISSUE.scripToken}, ${ISSUE.symbol}, ${ISSUE.series}, 'BUY', 'OFS',
          'RL', 1, 100, 0, 0, 'PENDING', 'preload', null, ${at}, ${at},
          case when n % 2 = 0 then 'RETAIL' else 'NON_RETAIL' end, 'SIMPRELOAD' || n
        from (${series}) s`.execute(trx);
      for (const [status, actor] of [
        ['OMSXMITTED', 'user'],
        ['EXXMITTED', 'oms'],
        ['PENDING', 'exchange'],
      ] as const) {
        await sql`insert into order_history (order_id, status, reason, quantity, price_paise, traded_quantity, at, actor, request_id)
          select ${id}, ${status}, 'preloaded', 1, 100, 0, ${at}, ${actor}, null from (${series}) s`.execute(trx);
      }
      await sql`insert into outbox (order_id, action, created_at, claimed_by, claimed_until, done_at)
        select ${id}, 'PLACE', ${at}, 'preload', null, ${at} from (${series}) s`.execute(trx);
      await sql`insert into sim_exchange_bids (order_id, exchange_order_id, exchange, scrip_token, category, order_type,
          price_paise, quantity, status, transmissions, received_at, updated_at)
        select ${id}, 'SIMPRELOAD' || n, 'NSE_EQ', ${ISSUE.scripToken}, case when n % 2 = 0 then 'RETAIL' else 'NON_RETAIL' end,
          'RL', 100, 1, 'LIVE', 1, ${at}, ${at} from (${series}) s`.execute(trx);
    });
  }
  // The running totals of the retail limit, as order entry would have kept them for these orders.
  await sql`insert into retail_exposure (user_id, symbol, exchange, scrip_token, price_value_paise, cutoff_quantity)
    select user_id, symbol, exchange, scrip_token, sum(quantity * price_paise), 0
    from orders where user_id like 'preload%' and category = 'RETAIL' group by user_id, symbol, exchange, scrip_token`.execute(
    store.db,
  );
  await sql`analyze`.execute(store.db);
  // On disk before the measurement starts: the rounds must not share the disk with the preload's writeback.
  if (store.dialect === 'postgres') await sql`checkpoint`.execute(store.db);
  else await sql`pragma wal_checkpoint(truncate)`.execute(store.db);
}
