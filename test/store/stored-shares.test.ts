/**
 * Share counts as a bigint column stores and reads them (src/store/sql/exact-sum.ts): digits exact, a
 * sum past 2^63 - 1 written as that bound, and a double read back (SQLite keeps one past 2^63) never
 * above the bound and never an error.
 */
import { describe, expect, it } from 'vitest';
import { MAX_STORED_SHARES, sharesFromColumn, storableShares } from '../../src/store/sql/exact-sum.js';

describe('stored share counts', () => {
  it('writes digits, and the bound past it', () => {
    expect(storableShares(9_007_199_254_740_993n)).toBe('9007199254740993');
    expect(storableShares(1n << 64n)).toBe(MAX_STORED_SHARES.toString());
  });

  it('reads digits exactly, a double as the nearest whole number within the bound, anything else as 0', () => {
    expect(sharesFromColumn('9007199254740993')).toBe(9_007_199_254_740_993n);
    expect(sharesFromColumn(42)).toBe(42n);
    expect(sharesFromColumn('1.0e+19')).toBe(MAX_STORED_SHARES);
    expect(sharesFromColumn('1.5e+3')).toBe(1_500n);
    expect(sharesFromColumn('not a number')).toBe(0n);
  });
});
