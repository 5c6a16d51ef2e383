/**
 * Trades (migration 0008): one per allotment, written by OrderRepository.apply; read here for the trade
 * book and, split at settlement, for positions and holdings. Every query names the owner.
 */
import { inOneSnapshot } from '../sql/snapshot.js';
import type { Kysely, Selectable } from 'kysely';
import { inList } from '../sql/bulk.js';
import type { DialectName } from '../sql/database.js';
import type { Trade } from '../../domain/funds/trades.js';
import type { Database, TradesTable } from '../schema/tables.js';

type TradeRow = Selectable<TradesTable>;

function tradeFromRow(row: TradeRow): Trade {
  return {
    tradeId: row.trade_id,
    orderId: row.order_id,
    userId: row.user_id,
    exchange: row.exchange,
    scripToken: Number(row.scrip_token),
    symbol: row.symbol,
    series: row.series,
    transactionType: row.transaction_type,
    productType: row.product_type,
    quantity: Number(row.quantity),
    pricePaise: Number(row.price_paise),
    tradedAt: Number(row.traded_at),
    settlesAt: Number(row.settles_at),
    exchangeOrderId: row.exchange_order_id,
    orderIdentifier: row.order_identifier,
  };
}

/** A user's trades to list, and which page of them; `page` counts from 1. */
export interface TradePageRequest {
  userId: string;
  /** Only the trades of these orders (undefined: every order). */
  orderIds?: readonly string[] | undefined;
  page: number;
  pageSize: number;
}

export class TradeRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
  ) {}

  /** One page of the user's trades, newest first, and how many match in all. */
  async tradeBook(request: TradePageRequest): Promise<{ trades: Trade[]; totalCount: number }> {
    // The page and its count in one snapshot (snapshot.ts).
    return inOneSnapshot(this.db, async (db) => {
      let filtered = db.selectFrom('trades').where('user_id', '=', request.userId);
      // One SQL text whatever the number of ids (a list parameter, not a placeholder per id).
      if (request.orderIds !== undefined) filtered = filtered.where(inList(this.dialect, 'order_id', request.orderIds));
      const rows = await filtered
        .selectAll()
        .orderBy('traded_at', 'desc')
        .orderBy('trade_id', 'desc')
        .limit(request.pageSize)
        .offset((request.page - 1) * request.pageSize)
        .execute();
      const total = await filtered.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return { trades: rows.map(tradeFromRow), totalCount: Number(total.n) };
    });
  }

  /** The user's trades not settled at `now` (their positions), oldest first. */
  async unsettled(userId: string, now: number): Promise<Trade[]> {
    const rows = await this.db
      .selectFrom('trades')
      .selectAll()
      .where('user_id', '=', userId)
      .where('settles_at', '>', now)
      .orderBy('traded_at')
      .orderBy('trade_id')
      .execute();
    return rows.map(tradeFromRow);
  }

  /** The user's trades settled at `now` (their holdings), oldest first. */
  async settled(userId: string, now: number): Promise<Trade[]> {
    const rows = await this.db
      .selectFrom('trades')
      .selectAll()
      .where('user_id', '=', userId)
      .where('settles_at', '<=', now)
      .orderBy('traded_at')
      .orderBy('trade_id')
      .execute();
    return rows.map(tradeFromRow);
  }
}
