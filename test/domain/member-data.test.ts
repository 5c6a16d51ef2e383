/**
 * The member-data rules (src/domain/access/member-data.ts): each field's form, and which fields a bid of a
 * category and margin needs; the refusal names every missing field.
 */
import { describe, expect, it } from 'vitest';
import {
  checkedMemberDataChange,
  memberDataRefusal,
  missingMemberData,
  panProblem,
  uccProblem,
  custodianCodeProblem,
  type MemberData,
} from '../../src/domain/access/member-data.js';

const full: MemberData = { ucc: 'AB12', pan: 'ABCPE1234F', clientType: 'CLI', custodianCode: 'CUST1' };

describe('the fields', () => {
  it('a UCC is 1 to 10 capital letters or digits', () => {
    expect(uccProblem('A')).toBeNull();
    expect(uccProblem('ABCDE12345')).toBeNull();
    expect(uccProblem('ABCDE123456')).toMatch(/1 to 10 letters or digits/);
    expect(uccProblem('AB-1')).toMatch(/1 to 10 letters or digits/);
    expect(uccProblem('')).not.toBeNull();
  });

  it('a PAN is five letters, four digits and a letter, its fourth letter the holder kind', () => {
    expect(panProblem('ABCPE1234F')).toBeNull();
    expect(panProblem('ABCCE1234F')).toBeNull();
    expect(panProblem('ABCXE1234F')).toMatch(/fourth letter/);
    expect(panProblem('ABCPE123F')).toMatch(/five letters, four digits and a letter/);
    expect(panProblem('ABCPE12345')).toMatch(/five letters, four digits and a letter/);
  });

  it('a custodian code is 1 to 12 capital letters or digits', () => {
    expect(custodianCodeProblem('IN30012345AB')).toBeNull();
    expect(custodianCodeProblem('IN30012345ABC')).toMatch(/1 to 12/);
  });

  it("the operator's text is trimmed and capitalised; every problem is told at once", () => {
    expect(
      checkedMemberDataChange({ ucc: ' ab12 ', pan: 'abcpe1234f', clientType: 'pro', custodianCode: null }),
    ).toEqual({
      change: { ucc: 'AB12', pan: 'ABCPE1234F', clientType: 'PRO', custodianCode: null },
      problems: [],
    });
    const bad = checkedMemberDataChange({ ucc: 'AB_1', pan: 'X', clientType: 'OWN' });
    expect(bad.change).toBeNull();
    expect(bad.problems).toHaveLength(3);
    expect(bad.problems[2]).toMatch(/client_type "OWN" must be CLI .* or PRO/);
  });
});

describe('what a bid needs', () => {
  it('every bid a UCC and a PAN; MF, IC, OTHS and 0 %-margin bids a custodian code too', () => {
    const none: MemberData = { ucc: null, pan: null, clientType: 'CLI', custodianCode: null };
    expect(missingMemberData(none, 'RETAIL', 'H')).toEqual(['ucc', 'pan']);
    expect(missingMemberData(undefined, 'NII', 'H')).toEqual(['ucc', 'pan']);
    expect(missingMemberData(none, 'MF', 'H')).toEqual(['ucc', 'pan', 'custodian_code']);
    const noCustodian = { ...full, custodianCode: null };
    expect(missingMemberData(noCustodian, 'RETAIL', 'H')).toEqual([]);
    expect(missingMemberData(noCustodian, 'EMPLOYEE', 'H')).toEqual([]);
    expect(missingMemberData(noCustodian, 'NII', 'H')).toEqual([]);
    for (const category of ['MF', 'IC', 'OTHS'] as const)
      expect(missingMemberData(noCustodian, category, 'H')).toEqual(['custodian_code']);
    expect(missingMemberData(noCustodian, 'OTHS', 'T')).toEqual(['custodian_code']);
    expect(missingMemberData(full, 'IC', 'T')).toEqual([]);
  });

  it('the refusal is 422 e-385 and lists each missing field', () => {
    expect(memberDataRefusal(full, 'MF', 'T')).toBeNull();
    const refusal = memberDataRefusal({ ...full, ucc: null, custodianCode: null }, 'IC', 'T')!;
    expect(refusal.kind.code).toBe('e-385');
    expect(refusal.kind.status).toBe(422);
    expect(refusal.message).toBe(
      'The exchange needs your ucc, custodian_code for this bid (a 0 %-margin bid needs a custodian code), and your broker has not recorded them: ask your broker',
    );
    expect(refusal.errors.map((e) => e.field)).toEqual(['ucc', 'custodian_code']);
  });
});
