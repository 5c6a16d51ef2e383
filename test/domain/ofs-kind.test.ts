/**
 * What makes a request an OFS bid is written once (src/domain/ofs/bid.ts): the place-order schema is built
 * from it, and a cart's OFS line is judged by ofsKindFaults. Both must then refuse exactly the same fields.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ofsKindFaults } from '../../src/domain/ofs/bid.js';
import { OfsOrderRequest } from '../../src/schemas/orders.js';
import { compileChecker, createAjv } from '../../src/schemas/validator.js';

const checkBid = compileChecker(createAjv(), OfsOrderRequest);
const optional = <T>(...values: T[]) => fc.constantFrom<T | undefined>(undefined, ...values);

const kind = fc.record({
  exchange: fc.constantFrom('NSE_EQ', 'BSE_EQ', 'NSE', 'MCX'),
  transaction_type: fc.constantFrom('BUY', 'SELL', 'buy'),
  order_type: fc.constantFrom('RL', 'RL-MKT', 'SL', 'SL-MKT'),
  validity: optional('', 'DAY'),
  is_amo: optional(false, true),
  expiry_date: optional('', '2026-12-31'),
  option_type: optional('', 'CE'),
  strike_price: optional('', '100'),
});

describe('ofsKindFaults and the place-order schema', () => {
  it('refuse the same fields of a bid', () => {
    fc.assert(
      fc.property(
        kind,
        ({ exchange, transaction_type, order_type, validity, is_amo, expiry_date, option_type, strike_price }) => {
          const bid = {
            scrip_info: {
              exchange,
              scrip_token: 500112,
              symbol: 'SBIN',
              series: 'OF',
              ...(expiry_date !== undefined && { expiry_date }),
              ...(option_type !== undefined && { option_type }),
              ...(strike_price !== undefined && { strike_price }),
            },
            transaction_type,
            product_type: 'OFS',
            order_type,
            quantity: '10',
            price: order_type.endsWith('-MKT') ? 0 : 101.5,
            ...(validity !== undefined && { validity }),
            ...(is_amo !== undefined && { is_amo }),
          };
          const bySchema = checkBid(bid)
            .map((v) => v.field)
            .sort();
          const byRule = ofsKindFaults({
            exchange,
            transaction_type,
            order_type,
            validity,
            is_amo,
            expiry_date,
            option_type,
            strike_price,
          }).sort();
          expect(byRule).toEqual(bySchema);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('finds nothing against an OFS bid', () => {
    expect(
      ofsKindFaults({
        exchange: 'BSE_EQ',
        transaction_type: 'BUY',
        order_type: 'RL-MKT',
        validity: '',
        is_amo: false,
        strike_price: '',
      }),
    ).toEqual([]);
  });
});
