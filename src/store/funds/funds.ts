/**
 * Funds accounts and their ledger (docs/design/funds.md). The operator's deposits and withdrawals are
 * written here; what bids block, release and debit is written by OrderRepository.apply, in the transaction
 * of the order change, after the OMS has locked the accounts with `lockAccounts`.
 */
import { sql, type Kysely, type Selectable, type SqlBool } from 'kysely';
import { FundsLedgerKind, MAX_CASH_PAISE, type FundsAccount, type FundsLedgerEntry } from '../../domain/funds/funds.js';
import { queryWithList } from '../sql/bulk.js';
import type { DialectName } from '../sql/database.js';
import type { Database, FundsAccountsTable, FundsLedgerTable } from '../schema/tables.js';
import { executorOf, openTx, type StoreTx } from '../sql/write-tx.js';

type AccountRow = Selectable<FundsAccountsTable>;
type LedgerRow = Selectable<FundsLedgerTable>;

const LOCK_ACCOUNTS = {
  sqlite: 'select * from funds_accounts where user_id in (select value from json_each(?))',
  // Row locks in one order on every node (the order OrderRepository.apply updates them in): no deadlock.
  postgres: 'select * from funds_accounts where user_id = any($1::text[]) order by user_id for update',
};

/** A refused withdrawal: the account as it is, unchanged. */
export interface InsufficientFunds {
  insufficient: FundsAccount;
}

export class FundsRepository {
  /**
   * `_dialect` as every repository takes it: the statements here read the same on both dialects (the list
   * query picks its text from the transaction).
   */
  constructor(
    private readonly db: Kysely<Database>,
    _dialect: DialectName,
  ) {}

  async find(userId: string): Promise<FundsAccount | undefined> {
    const row = await this.db.selectFrom('funds_accounts').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row && this.accountFromRow(row);
  }

  /**
   * The accounts of these users, locked until the transaction ends (PostgreSQL; on SQLite the write
   * transaction excludes every other writer). Users without an account are absent from the map.
   */
  async lockAccounts(storeTx: StoreTx, userIds: readonly string[]): Promise<Map<string, FundsAccount>> {
    const accounts = new Map<string, FundsAccount>();
    if (userIds.length === 0) return accounts;
    for (const row of await queryWithList<AccountRow>(openTx(storeTx), LOCK_ACCOUNTS, userIds)) {
      const account = this.accountFromRow(row);
      accounts.set(account.userId, account);
    }
    return accounts;
  }

  /**
   * Adds cash, creating the account when the user has none. Refused, changing nothing, when cash would pass
   * MAX_CASH_PAISE.
   */
  async deposit(
    storeTx: StoreTx,
    userId: string,
    amountPaise: number,
    now: number,
  ): Promise<FundsAccount | 'would-exceed-max'> {
    if (amountPaise > MAX_CASH_PAISE) return 'would-exceed-max';
    const row = await executorOf(this.db, storeTx)
      .insertInto('funds_accounts')
      .values({
        user_id: userId,
        cash_paise: amountPaise,
        blocked_paise: 0,
        debited_paise: 0,
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) =>
        conflict
          .column('user_id')
          .doUpdateSet({ cash_paise: sql`funds_accounts.cash_paise + excluded.cash_paise`, updated_at: now })
          .where(sql<SqlBool>`funds_accounts.cash_paise + excluded.cash_paise <= ${MAX_CASH_PAISE}`),
      )
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) return 'would-exceed-max';
    await this.record(storeTx, { userId, at: now, kind: FundsLedgerKind.DEPOSIT, amountPaise, orderId: null });
    return this.accountFromRow(row);
  }

  /**
   * Opens the user's account with a first deposit; does nothing (undefined) when the user has one already.
   */
  async open(storeTx: StoreTx, userId: string, amountPaise: number, now: number): Promise<FundsAccount | undefined> {
    const row = await executorOf(this.db, storeTx)
      .insertInto('funds_accounts')
      .values({
        user_id: userId,
        cash_paise: amountPaise,
        blocked_paise: 0,
        debited_paise: 0,
        created_at: now,
        updated_at: now,
      })
      .onConflict((conflict) => conflict.column('user_id').doNothing())
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) return undefined;
    await this.record(storeTx, { userId, at: now, kind: FundsLedgerKind.DEPOSIT, amountPaise, orderId: null });
    return this.accountFromRow(row);
  }

  /**
   * Takes cash out of what is available. The condition is part of the update, so that it holds against the
   * row as it is when the update runs, whatever blocks other nodes' OMS workers committed meanwhile:
   * available never goes below zero.
   */
  async withdraw(
    storeTx: StoreTx,
    userId: string,
    amountPaise: number,
    now: number,
  ): Promise<FundsAccount | 'no-account' | InsufficientFunds> {
    const executor = executorOf(this.db, storeTx);
    const row = await executor
      .updateTable('funds_accounts')
      .set({ cash_paise: sql`cash_paise - ${amountPaise}`, updated_at: now })
      .where('user_id', '=', userId)
      .where(sql<number>`cash_paise - blocked_paise`, '>=', amountPaise)
      .returningAll()
      .executeTakeFirst();
    if (row === undefined) {
      const current = await executor
        .selectFrom('funds_accounts')
        .selectAll()
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return current === undefined ? 'no-account' : { insufficient: this.accountFromRow(current) };
    }
    await this.record(storeTx, { userId, at: now, kind: FundsLedgerKind.WITHDRAW, amountPaise, orderId: null });
    return this.accountFromRow(row);
  }

  /** The user's latest ledger entries, newest first. */
  async ledger(userId: string, limit: number): Promise<FundsLedgerEntry[]> {
    const rows = await this.db
      .selectFrom('funds_ledger')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map((row) => this.entryFromRow(row));
  }

  private async record(storeTx: StoreTx, entry: Omit<FundsLedgerEntry, 'id'>): Promise<void> {
    await executorOf(this.db, storeTx)
      .insertInto('funds_ledger')
      .values({
        user_id: entry.userId,
        at: entry.at,
        kind: entry.kind,
        amount_paise: entry.amountPaise,
        order_id: entry.orderId,
      })
      .execute();
  }

  /** Integer columns come back from PostgreSQL as int8. */
  private accountFromRow(row: AccountRow): FundsAccount {
    return {
      userId: row.user_id,
      cashPaise: Number(row.cash_paise),
      blockedPaise: Number(row.blocked_paise),
      debitedPaise: Number(row.debited_paise),
      createdAt: Number(row.created_at),
      updatedAt: Number(row.updated_at),
    };
  }

  /** The kind was written from FundsLedgerKind, by this repository or OrderRepository.apply. */
  private entryFromRow(row: LedgerRow): FundsLedgerEntry {
    return {
      id: Number(row.id),
      userId: row.user_id,
      at: Number(row.at),
      kind: row.kind as FundsLedgerKind,
      amountPaise: Number(row.amount_paise),
      orderId: row.order_id,
    };
  }
}
