/** SEBI's rules for API and algo orders as plain functions (src/domain/orders/algo-rules.ts). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  genericAlgoIdsText,
  isRegisteredAlgoOrder,
  killSwitchViolations,
  orderAlgo,
  parseGenericAlgoIds,
  reasonViolations,
  registrationViolations,
  thresholdRefusal,
  type AlgoRegistration,
  type GenericAlgoIds,
} from '../../src/domain/orders/algo-rules.js';
import { ApiError, Errors } from '../../src/domain/errors.js';

const GENERIC: GenericAlgoIds = { NSE_EQ: 'NSEGEN', BSE_EQ: 'BSEGEN' };

function algo(overrides: Partial<AlgoRegistration> = {}): AlgoRegistration {
  return {
    algoId: 'A100',
    exchange: 'NSE_EQ',
    approvalRef: 'NSE/ALGO/2026/1',
    name: null,
    userIds: ['alice'],
    registeredAt: 0,
    disabledAt: null,
    disabledReason: null,
    ...overrides,
  };
}

/** The ApiError `work` throws (fails the test when it throws none). */
function refusal(work: () => unknown): ApiError {
  try {
    work();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

describe('ALGO_GENERIC_ID', () => {
  it('is one ID for both segments, or one per segment', () => {
    expect(parseGenericAlgoIds('99999')).toEqual({ NSE_EQ: '99999', BSE_EQ: '99999' });
    expect(parseGenericAlgoIds('NSE_EQ=1,BSE_EQ=2')).toEqual({ NSE_EQ: '1', BSE_EQ: '2' });
    expect(parseGenericAlgoIds('BSE_EQ=2,NSE_EQ=1')).toEqual({ NSE_EQ: '1', BSE_EQ: '2' });
  });

  it.each([
    '',
    'a b',
    'NSE_EQ=1',
    'NSE_EQ=1,NSE_EQ=2',
    'NSE_EQ=1,MCX=2',
    'NSE_EQ=1,BSE_EQ=',
    'NSE_EQ=1=2,BSE_EQ=3',
    'x'.repeat(33),
  ])('refuses %j', (text) => {
    expect(typeof parseGenericAlgoIds(text)).toBe('string');
  });

  it('reads back what it writes', () => {
    const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/);
    fc.assert(
      fc.property(id, id, (nse, bse) => {
        expect(parseGenericAlgoIds(genericAlgoIdsText({ NSE_EQ: nse, BSE_EQ: bse }))).toEqual({
          NSE_EQ: nse,
          BSE_EQ: bse,
        });
      }),
    );
  });
});

describe('the algo ID an order carries, with the rules on', () => {
  it("stamps the segment's generic ID when none is sent, or when the generic one is sent", () => {
    expect(orderAlgo(null, 'NSE_EQ', 'alice', GENERIC, undefined)).toEqual({ algoId: 'NSEGEN', registered: false });
    expect(orderAlgo(null, 'BSE_EQ', 'alice', GENERIC, undefined)).toEqual({ algoId: 'BSEGEN', registered: false });
    expect(orderAlgo('BSEGEN', 'BSE_EQ', 'alice', GENERIC, undefined)).toEqual({ algoId: 'BSEGEN', registered: false });
  });

  it('keeps a registered ID of the caller on its segment', () => {
    expect(orderAlgo('A100', 'NSE_EQ', 'alice', GENERIC, algo())).toEqual({ algoId: 'A100', registered: true });
  });

  it("refuses an unknown ID, another user's, another segment's, and the other segment's generic one, all alike (e-601)", () => {
    const cases: [string, string, string, AlgoRegistration | undefined][] = [
      ['NOPE', 'NSE_EQ', 'alice', undefined],
      ['A100', 'NSE_EQ', 'bob', algo()],
      ['A100', 'BSE_EQ', 'alice', algo()],
      ['BSEGEN', 'NSE_EQ', 'alice', undefined],
    ];
    const answers = cases.map(([sent, exchange, user, registration]) =>
      refusal(() => orderAlgo(sent, exchange, user, GENERIC, registration)),
    );
    for (const answer of answers) expect(answer.kind).toBe(Errors.ALGO_ID_UNKNOWN);
    // The answer for another user's algo tells nothing the answer for an unknown one does not.
    expect(answers[1]!.errors).toEqual(answers[0]!.errors);
  });

  it('refuses a stopped algo of the caller (e-602), but answers another user e-601 for it', () => {
    const stopped = algo({ disabledAt: 5, disabledReason: 'NSE instruction 42' });
    const answer = refusal(() => orderAlgo('A100', 'NSE_EQ', 'alice', GENERIC, stopped));
    expect(answer.kind).toBe(Errors.ALGO_DISABLED);
    expect(answer.message).toContain('NSE instruction 42');
    expect(refusal(() => orderAlgo('A100', 'NSE_EQ', 'bob', GENERIC, stopped)).kind).toBe(Errors.ALGO_ID_UNKNOWN);
  });
});

describe('the algo ID an order carries, with the rules off', () => {
  it('is stored as sent, registered or not, and none stays none', () => {
    expect(orderAlgo(null, 'NSE_EQ', 'alice', null, undefined)).toEqual({ algoId: null, registered: false });
    expect(orderAlgo('my-tag', 'NSE_EQ', 'alice', null, undefined)).toEqual({ algoId: 'my-tag', registered: false });
    expect(orderAlgo('A100', 'NSE_EQ', 'alice', null, algo())).toEqual({ algoId: 'A100', registered: true });
  });

  it('still refuses a stopped algo: the kill switch does not depend on a setting', () => {
    expect(refusal(() => orderAlgo('A100', 'NSE_EQ', 'bob', null, algo({ disabledAt: 5 }))).kind).toBe(
      Errors.ALGO_DISABLED,
    );
  });
});

describe('the kill switch inside the commit', () => {
  it('refuses an order of a stopped algo and passes the rest', () => {
    expect(killSwitchViolations(algo({ disabledAt: 1, disabledReason: 'r' }))?.kind).toBe(Errors.ALGO_DISABLED);
    expect(killSwitchViolations(algo())).toBeNull();
    expect(killSwitchViolations(undefined)).toBeNull();
  });
});

describe('which orders the threshold exempts', () => {
  it("a running registered algo's, on its segment, of one of its users", () => {
    expect(isRegisteredAlgoOrder('A100', 'alice', 'NSE_EQ', algo())).toBe(true);
    expect(isRegisteredAlgoOrder('A100', 'alice', 'NSE_EQ', algo({ disabledAt: 1 }))).toBe(false);
    expect(isRegisteredAlgoOrder('A100', 'bob', 'NSE_EQ', algo())).toBe(false);
    expect(isRegisteredAlgoOrder('A100', 'alice', 'BSE_EQ', algo())).toBe(false);
    expect(isRegisteredAlgoOrder(null, 'alice', 'NSE_EQ', undefined)).toBe(false);
  });

  it('refuses past it with e-603 and a Retry-After of whole seconds', () => {
    const answer = thresholdRefusal(10, 'NSE_EQ', 250);
    expect(answer.kind).toBe(Errors.ALGO_THRESHOLD);
    expect(answer.kind.status).toBe(429);
    expect(answer.headers['Retry-After']).toBe('1');
    expect(answer.message).toContain('10 orders');
  });
});

describe('what the operator registers', () => {
  it('takes a complete registration', () => {
    expect(
      registrationViolations({ algoId: 'A100', exchange: 'NSE_EQ', approvalRef: 'ref', userIds: ['alice'] }, GENERIC),
    ).toEqual([]);
  });

  it('refuses a bad ID, an unknown segment, a generic ID, no approval and no user', () => {
    expect(
      registrationViolations({ algoId: 'a b', exchange: 'MCX' as 'NSE_EQ', approvalRef: ' ', userIds: [] }, GENERIC),
    ).toHaveLength(4);
    expect(
      registrationViolations({ algoId: 'NSEGEN', exchange: 'NSE_EQ', approvalRef: 'ref', userIds: ['alice'] }, GENERIC),
    ).toEqual(["NSEGEN is a generic algo ID (ALGO_GENERIC_ID), not an algo's"]);
  });

  it('takes a reason on one line of 1 to 200 characters', () => {
    expect(reasonViolations('NSE instruction 42')).toEqual([]);
    expect(reasonViolations('')).toHaveLength(1);
    expect(reasonViolations('two\nlines')).toHaveLength(1);
    expect(reasonViolations('x'.repeat(201))).toHaveLength(1);
  });
});
