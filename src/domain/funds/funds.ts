/**
 * A user's funds account (docs/design/funds.md): the cash deposited, what live bids block of it, and what
 * allotments debited. A user without an account is not funds-checked. Pure rules over plain data; the OMS's
 * side (what a bid blocks) is in funds-blocking.ts.
 */
import { formatRupees } from '../ofs/rules.js';

export interface FundsAccount {
  userId: string;
  /** Deposits - withdrawals - debits. */
  cashPaise: number;
  /** What the user's live bids hold out of cash. */
  blockedPaise: number;
  /** Every debit ever (allotments), in total. */
  debitedPaise: number;
  createdAt: number;
  updatedAt: number;
}

/** What a new bid or a withdrawal may take: cash not blocked by a live bid. */
export function availablePaise(account: Pick<FundsAccount, 'cashPaise' | 'blockedPaise'>): number {
  return account.cashPaise - account.blockedPaise;
}

/** The kinds of ledger entry: operator cash movements, and what bids do to the account. */
export const FundsLedgerKind = {
  /** Cash paid in by the operator. */
  DEPOSIT: 'DEPOSIT',
  /** Cash paid out by the operator, out of what was available. */
  WITHDRAW: 'WITHDRAW',
  /** Funds held for a bid (a new bid, or a modification to higher terms). */
  BLOCK: 'BLOCK',
  /** Funds a bid no longer holds (lower terms, cancellation, rejection, the unallotted rest). */
  RELEASE: 'RELEASE',
  /** The cost of an allotment, out of cash. */
  DEBIT: 'DEBIT',
} as const;
export type FundsLedgerKind = (typeof FundsLedgerKind)[keyof typeof FundsLedgerKind];

/** One row of the append-only funds ledger. */
export interface FundsLedgerEntry {
  id: number;
  userId: string;
  at: number;
  kind: FundsLedgerKind;
  /** Always more than 0; the kind says which way it went. */
  amountPaise: number;
  /** The bid a BLOCK, RELEASE or DEBIT is for; null for a DEPOSIT or WITHDRAW. */
  orderId: string | null;
}

/**
 * The most cash an account may hold: Rs 90 lakh crore. Below 2^53, so that every amount of an account,
 * and the difference of any two (available = cash - blocked), is a safe integer of paise.
 */
export const MAX_CASH_PAISE = 9_000_000_000_000_000;

const RUPEE_AMOUNT = /^(\d+)(?:\.(\d{1,2}))?$/;

/** An operator's amount in rupees ("250000" or "250000.50") as paise, or why it is not one. */
export function parseRupeeAmount(text: string): { paise: number } | { problem: string } {
  const match = RUPEE_AMOUNT.exec(text);
  if (match === null) {
    return {
      problem: `amount "${text}" is not a number of rupees with at most two decimals, e.g. 250000 or 250000.50`,
    };
  }
  const paise = BigInt(match[1]!) * 100n + BigInt((match[2] ?? '').padEnd(2, '0'));
  if (paise === 0n) return { problem: 'the amount must be more than 0' };
  if (paise > BigInt(MAX_CASH_PAISE))
    return { problem: `amount ${text} is more than the most an account may hold, ${formatRupees(MAX_CASH_PAISE)}` };
  return { paise: Number(paise) };
}
