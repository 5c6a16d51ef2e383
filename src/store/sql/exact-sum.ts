/**
 * Sums of integers exact past 2^53 on both dialects (issue 47 row 3). SQLite's sum() of integers fails
 * past 2^63 and its total() is a double; PostgreSQL's sum of bigints is an exact numeric, but a JavaScript
 * number is not. So a column is summed as two sums, of its high bits (>> 24) and its low 24 bits (& 2^24 - 1),
 * each far from overflowing (a quantity is below 2^50: its high part below 2^26, and 2^37 rows of it stay
 * below 2^63), and the two are put together as a bigint: hi * 2^24 + lo, which is the sum whatever the signs.
 * Also how such a sum is stored and read back from a bigint column.
 */
import { sql } from 'kysely';

const LOW_BITS = 24n;
const LOW_MASK = (1 << 24) - 1;

/** The two selections of `expression`'s exact sum, named `<alias>_hi` and `<alias>_lo`. */
export function exactSum<A extends string>(expression: string, alias: A) {
  return [
    sql<number | string | null>`sum((${sql.raw(expression)}) >> 24)`.as(`${alias}_hi`),
    sql<number | string | null>`sum((${sql.raw(expression)}) & ${sql.raw(String(LOW_MASK))})`.as(`${alias}_lo`),
  ] as const;
}

/** The exact sum a row's `<alias>_hi` and `<alias>_lo` hold (0 for a group with no rows). */
export function exactSumOf(row: Record<string, unknown>, alias: string): bigint {
  const part = (value: unknown) => (value === null || value === undefined ? 0n : BigInt(value as number | string));
  return (part(row[`${alias}_hi`]) << LOW_BITS) + part(row[`${alias}_lo`]);
}

/** The largest quantity a bigint column holds on both dialects. */
export const MAX_STORED_SHARES = (1n << 63n) - 1n;

/** A sum of shares as the digits a bigint column stores: past 2^63 - 1 (no offer comes near), that bound. */
export function storableShares(quantity: bigint): string {
  return (quantity > MAX_STORED_SHARES ? MAX_STORED_SHARES : quantity).toString();
}

/**
 * A quantity read from a bigint column as text or number. Digits are exact; any other form (a double, as
 * SQLite turns an integer past 2^63 into one) is read as the nearest whole number rather than refused.
 */
export function sharesFromColumn(value: number | string): bigint {
  if (typeof value === 'string' && /^-?\d+$/.test(value)) return BigInt(value);
  const approx = Number(value);
  if (!Number.isFinite(approx)) return 0n;
  // A double read back (SQLite keeps one past 2^63) is at most the bound storableShares writes.
  const nearest = BigInt(Math.round(approx));
  return nearest > MAX_STORED_SHARES ? MAX_STORED_SHARES : nearest;
}
