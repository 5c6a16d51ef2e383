/**
 * Order carts. Every query names the owner next to the cart id: a cart of another user is, to this
 * repository, a cart that does not exist.
 */
import { inOneSnapshot } from '../sql/snapshot.js';
import type { Kysely, Selectable } from 'kysely';
import type { StoredOrderCart } from '../../domain/orders/cart.js';
import type { Database, OrderCartsTable } from '../schema/tables.js';
import { executorOf, type StoreTx } from '../sql/write-tx.js';

type OrderCartRow = Selectable<OrderCartsTable>;

function cartFromRow(row: OrderCartRow): StoredOrderCart {
  return {
    ordercartId: row.ordercart_id,
    userId: row.user_id,
    name: row.name,
    ordersJson: row.orders_json,
    version: row.version,
    executedNoTime: Number(row.executed_no_time),
    createdBy: row.created_by,
    modifiedBy: row.modified_by,
    revision: Number(row.revision),
    createdAt: Number(row.created_at),
    updatedAt: Number(row.updated_at),
  };
}

export interface NewOrderCart {
  ordercartId: string;
  userId: string;
  name: string;
  ordersJson: string;
  version: string;
}

/** What an update replaces; the creator, the owner and the execution count stay. */
export interface OrderCartChanges {
  name: string;
  ordersJson: string;
  version: string;
  modifiedBy: string;
}

/** The stored state an update was checked against; the write happens only if the cart is still in it. */
export interface CheckedState {
  revision: number;
  executedNoTime: number;
}

export class OrderCartRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Inserts the cart unless its owner already keeps `cap` carts; answers whether it did. The count and the
   * insert are one serialized step per owner: the transaction first writes the owner's users row (a write
   * that changes nothing), which on PostgreSQL locks that row until commit, so that two creates of one
   * user at cap - 1 cannot both count cap - 1 under READ COMMITTED (the second waits, then counts the
   * first's cart); on SQLite every write transaction holds the database's write lock from its start.
   * Creates of different users do not wait for each other, and order entry (which only reads the users
   * row, or references it) does not wait for them.
   */
  async insertWithinCap(cart: NewOrderCart, now: number, cap: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      await trx
        .updateTable('users')
        .set((eb) => ({ created_at: eb.ref('created_at') }))
        .where('user_id', '=', cart.userId)
        .execute();
      const kept = await trx
        .selectFrom('order_carts')
        .select((eb) => eb.fn.countAll<number | string>().as('n'))
        .where('user_id', '=', cart.userId)
        .executeTakeFirstOrThrow();
      if (Number(kept.n) >= cap) return false;
      await trx
        .insertInto('order_carts')
        .values({
          ordercart_id: cart.ordercartId,
          user_id: cart.userId,
          name: cart.name,
          orders_json: cart.ordersJson,
          version: cart.version,
          executed_no_time: 0,
          created_by: cart.userId,
          modified_by: cart.userId,
          revision: 1,
          created_at: now,
          updated_at: now,
        })
        .execute();
      return true;
    });
  }

  /** One page (from 1) of the owner's carts, newest first (ties by id), and how many the owner keeps. */
  async listOwned(
    userId: string,
    page: number,
    pageSize: number,
  ): Promise<{ carts: StoredOrderCart[]; totalCount: number }> {
    // The page and its count in one snapshot (snapshot.ts).
    return inOneSnapshot(this.db, async (db) => {
      const owned = db.selectFrom('order_carts').where('user_id', '=', userId);
      const rows = await owned
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('ordercart_id', 'desc')
        .limit(pageSize)
        .offset((page - 1) * pageSize)
        .execute();
      const total = await owned.select((eb) => eb.fn.countAll<number | string>().as('n')).executeTakeFirstOrThrow();
      return { carts: rows.map(cartFromRow), totalCount: Number(total.n) };
    });
  }

  async findOwned(ordercartId: string, userId: string): Promise<StoredOrderCart | undefined> {
    const row = await this.db
      .selectFrom('order_carts')
      .selectAll()
      .where('ordercart_id', '=', ordercartId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row && cartFromRow(row);
  }

  /**
   * Check-and-write in one statement: replaces the cart only while it still has the revision and the
   * execution count the caller's checks ran against, and bumps the revision. Answers whether it wrote;
   * false means another request changed (or deleted) the cart in between.
   */
  async replaceIfUnchanged(
    ordercartId: string,
    userId: string,
    checked: CheckedState,
    changes: OrderCartChanges,
    now: number,
  ): Promise<boolean> {
    const result = await this.db
      .updateTable('order_carts')
      .set({
        name: changes.name,
        orders_json: changes.ordersJson,
        version: changes.version,
        modified_by: changes.modifiedBy,
        revision: checked.revision + 1,
        updated_at: now,
      })
      .where('ordercart_id', '=', ordercartId)
      .where('user_id', '=', userId)
      .where('revision', '=', checked.revision)
      .where('executed_no_time', '=', checked.executedNoTime)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Counts one execution that placed orders, in one statement: `executed_no_time` and `revision` go up
   * together, so that an update checked against the cart before it misses its write (and answers 409 or
   * 412 on re-checking). `updated_at` stays: it is when the content last changed. Answers whether the owner
   * still has the cart (false: it was deleted meanwhile).
   */
  async recordExecution(ordercartId: string, userId: string, storeTx?: StoreTx): Promise<boolean> {
    const executor = executorOf(this.db, storeTx);
    const result = await executor
      .updateTable('order_carts')
      .set((eb) => ({ executed_no_time: eb('executed_no_time', '+', 1), revision: eb('revision', '+', 1) }))
      .where('ordercart_id', '=', ordercartId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Answers whether the owner had such a cart. */
  async deleteOwned(ordercartId: string, userId: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom('order_carts')
      .where('ordercart_id', '=', ordercartId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) === 1;
  }
}
