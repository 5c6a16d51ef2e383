/**
 * Users' funds (docs/design/funds.md): the operator's deposits and withdrawals behind `ordergate funds`,
 * and the balance a user reads over the API. What bids block and allotments debit is the OMS's part.
 */
import { availablePaise, parseRupeeAmount, type FundsAccount, type FundsLedgerEntry } from '../domain/funds/funds.js';
import { formatPrice } from '../domain/ofs/issue/issue.js';
import { formatRupees } from '../domain/ofs/rules.js';
import type { FundsBalance } from '../schemas/funds.js';
import type { Store } from '../store/sql/database.js';
import type { FundsRepository } from '../store/funds/funds.js';
import type { UserRepository } from '../store/access/users.js';
import { AdminError } from '../domain/errors.js';
import type { Caller } from './auth.js';

/** How many ledger entries `show` lists. */
export const RECENT_LEDGER_ENTRIES = 20;

/** A user's account (undefined: the user is not funds-checked) and its latest ledger entries, newest first. */
export interface FundsStatement {
  account: FundsAccount | undefined;
  ledger: FundsLedgerEntry[];
}

export class FundsService {
  constructor(
    private readonly store: Pick<Store, 'writeTransaction'>,
    private readonly funds: FundsRepository,
    private readonly users: Pick<UserRepository, 'find'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Adds `rupeesText` to the user's cash, opening the account when the user has none. */
  async deposit(userId: string, rupeesText: string): Promise<FundsAccount> {
    const paise = await this.amountFor(userId, rupeesText);
    const result = await this.store.writeTransaction((tx) => this.funds.deposit(tx, userId, paise, this.now()));
    if (result === 'would-exceed-max')
      throw new AdminError(
        `a deposit of ${formatRupees(paise)} would take ${userId}'s cash past the most an account may hold`,
      );
    return result;
  }

  /** Takes `rupeesText` out of the user's available funds; refused, changing nothing, beyond them. */
  async withdraw(userId: string, rupeesText: string): Promise<FundsAccount> {
    const paise = await this.amountFor(userId, rupeesText);
    const result = await this.store.writeTransaction((tx) => this.funds.withdraw(tx, userId, paise, this.now()));
    if (result === 'no-account') throw new AdminError(`user ${userId} has no funds account; deposit first`);
    if ('insufficient' in result) {
      const account = result.insufficient;
      throw new AdminError(
        `cannot withdraw ${formatRupees(paise)}: ${userId} has ${formatRupees(availablePaise(account))} available ` +
          `(cash ${formatRupees(account.cashPaise)}, blocked by live bids ${formatRupees(account.blockedPaise)}); nothing was changed`,
      );
    }
    return result;
  }

  /**
   * Opens the user's account with a first deposit of `paise` (the demo's funds); undefined, changing
   * nothing, when the user has an account already.
   */
  async open(userId: string, paise: number): Promise<FundsAccount | undefined> {
    return this.store.writeTransaction((tx) => this.funds.open(tx, userId, paise, this.now()));
  }

  /** The user's account and its latest ledger entries. */
  async show(userId: string): Promise<FundsStatement> {
    await this.requireUser(userId);
    const account = await this.funds.find(userId);
    return { account, ledger: account === undefined ? [] : await this.funds.ledger(userId, RECENT_LEDGER_ENTRIES) };
  }

  /** The caller's balance, as the balance call answers it: zeros, not funds-checked, without an account. */
  async balance(caller: Caller): Promise<FundsBalance> {
    const account = await this.funds.find(caller.userId);
    const cash = account?.cashPaise ?? 0;
    const blocked = account?.blockedPaise ?? 0;
    return {
      client_id: caller.userId,
      funds_checked: account !== undefined,
      cash: formatPrice(cash),
      blocked: formatPrice(blocked),
      available: formatPrice(availablePaise({ cashPaise: cash, blockedPaise: blocked })),
      debited: formatPrice(account?.debitedPaise ?? 0),
    };
  }

  private async amountFor(userId: string, rupeesText: string): Promise<number> {
    const amount = parseRupeeAmount(rupeesText);
    if ('problem' in amount) throw new AdminError(amount.problem);
    await this.requireUser(userId);
    return amount.paise;
  }

  private async requireUser(userId: string): Promise<void> {
    if ((await this.users.find(userId)) === undefined) throw new AdminError(`no user ${userId}`);
  }
}
