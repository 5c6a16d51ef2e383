import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { availablePaise, MAX_CASH_PAISE, parseRupeeAmount } from '../../src/domain/funds/funds.js';
import { fundsRequiredPaise, fundsShortfall } from '../../src/domain/funds/blocking.js';
import { formatPrice } from '../../src/domain/ofs/issue/issue.js';
import { formatRupees } from '../../src/domain/ofs/rules.js';

describe('rupee amounts of the funds commands', () => {
  it('reads whole rupees and up to two decimals exactly, for every amount up to the most an account holds', () => {
    expect(parseRupeeAmount('250000')).toEqual({ paise: 25_000_000 });
    expect(parseRupeeAmount('250000.5')).toEqual({ paise: 25_000_050 });
    expect(parseRupeeAmount('0.01')).toEqual({ paise: 1 });
    fc.assert(
      fc.property(fc.integer({ min: 1, max: MAX_CASH_PAISE }), (paise) => {
        const text = `${Math.floor(paise / 100)}.${String(paise % 100).padStart(2, '0')}`;
        expect(parseRupeeAmount(text)).toEqual({ paise });
      }),
    );
  });

  it.each(['0', '0.00', '-5', '+5', 'abc', '1.234', '1e5', ' 5', '5 ', '', '.5', '5.'])(
    'refuses %j with a reason',
    (text) => {
      expect(parseRupeeAmount(text)).toHaveProperty('problem');
    },
  );

  it('refuses more than an account may hold', () => {
    expect(parseRupeeAmount(String(MAX_CASH_PAISE / 100 + 1))).toHaveProperty('problem');
  });
});

describe('what a bid blocks', () => {
  const issue = { floorPricePaise: 10_000, retailCutoffPricePaise: 10_100 };

  it('is quantity x price; a cut-off bid at the retail cut-off price; exact beyond 2^53', () => {
    expect(fundsRequiredPaise({ orderType: 'RL', quantity: 10, pricePaise: 10_150 }, issue)).toBe(101_500n);
    expect(fundsRequiredPaise({ orderType: 'RL-MKT', quantity: 10, pricePaise: 0 }, issue)).toBe(101_000n);
    expect(
      fundsRequiredPaise({ orderType: 'RL', quantity: 999_999_999_999_999, pricePaise: 99_999_999_999 }, issue),
    ).toBe(999_999_999_999_999n * 99_999_999_999n);
  });

  it('fits when what is needed beyond the held block is available, and names the amounts when not', () => {
    expect(fundsShortfall(101_500n, 0, 101_500)).toBeNull();
    expect(fundsShortfall(101_500n, 0, 101_499)).toBe('the bid needs Rs 1,015.00 of funds; Rs 1,014.99 available');
    expect(fundsShortfall(203_000n, 101_500, 101_500)).toBeNull();
    expect(fundsShortfall(203_000n, 101_500, 0)).toBe(
      'the new terms need Rs 1,015.00 more funds (Rs 2,030.00 in all); Rs 0.00 available',
    );
    expect(fundsShortfall(50_000n, 101_500, 0)).toBeNull();
    expect(availablePaise({ cashPaise: 500, blockedPaise: 200 })).toBe(300);
  });
});

describe('amounts below zero', () => {
  it('are written with a leading minus, never "-1.-50"', () => {
    expect(formatPrice(-150)).toBe('-1.50');
    expect(formatPrice(-5)).toBe('-0.05');
    expect(formatRupees(-20_000_000_050n)).toBe('-Rs 20,00,00,000.50');
  });
});
