/**
 * The clients file of `ordergate users import-clients` (src/schemas/client-import.ts): CSV as RFC 4180
 * writes it, and each record checked alone.
 */
import { describe, expect, it } from 'vitest';
import { parseClientsFile, parseCsv } from '../../src/schemas/client-import.js';

describe('parseCsv', () => {
  it('reads quoted fields with commas, doubled quotes and line breaks, CRLF and LF, a BOM, and skips blank lines', () => {
    const text = '\uFEFFa,b,c\r\n"x, y","say ""hi""",\n\n"two\nlines",2,3\r\nlast,,';
    expect(parseCsv(text)).toEqual([
      { line: 1, fields: ['a', 'b', 'c'] },
      { line: 2, fields: ['x, y', 'say "hi"', ''] },
      { line: 4, fields: ['two\nlines', '2', '3'] },
      { line: 6, fields: ['last', '', ''] },
    ]);
  });

  it('a record it cannot read carries its problem, and the next line is read', () => {
    const records = parseCsv('a,"b"x,c\nd,e"f,g\nh,i,j\n"open,k');
    expect(records[0]!.problem).toMatch(/text after the closing quote/);
    expect(records[1]!.problem).toMatch(/a quote inside an unquoted field/);
    expect(records[2]).toEqual({ line: 3, fields: ['h', 'i', 'j'] });
    expect(records[3]!.problem).toMatch(/not closed before the end of the file/);
  });
});

describe('parseClientsFile', () => {
  it('takes the columns in any order, the optional ones absent; each record alone', () => {
    const lines = parseClientsFile(
      [
        'PAN,user_id,ucc,custodian_code',
        'abcpe1234f,alice,al01,',
        'ABCCE1234F,fund,FUND1,"IN300123"',
        'bad,bob,B01,',
        'ABCPE1234F,alice,AL02,',
        'ABCPE1234F,carol,C01',
        ',,,',
      ].join('\n'),
    );
    expect(lines[0]).toEqual({
      line: 2,
      userId: 'alice',
      // No client_type column: the recorded type stays; an empty custodian_code cell removes it.
      member: { ucc: 'AL01', pan: 'ABCPE1234F', custodianCode: null },
    });
    expect(lines[0]).not.toHaveProperty('member.clientType');
    expect(lines[1]).toMatchObject({ member: { ucc: 'FUND1', custodianCode: 'IN300123' } });
    expect(lines[2]).toMatchObject({ line: 4, userId: 'bob', problems: [expect.stringMatching(/pan "BAD"/)] });
    expect(lines[3]).toMatchObject({ line: 5, problems: ['user_id alice is on line 2 already'] });
    expect(lines[4]).toMatchObject({ line: 6, problems: ['3 fields where the header names 4'] });
    expect(lines[5]).toMatchObject({ userId: null, problems: ['user_id is empty', 'ucc is empty', 'pan is empty'] });
  });

  it('an empty client_type cell of a column the header names is CLI', () => {
    expect(parseClientsFile('user_id,ucc,pan,client_type\nalice,A1,ABCPE1234F,\n')[0]).toMatchObject({
      member: { clientType: 'CLI' },
    });
  });

  it('leaves a user id to a corrected line when the line before it was refused', () => {
    const lines = parseClientsFile('user_id,ucc,pan\nbob,B01,bad\nbob,B01,ABCPE1234F\nbob,B02,ABCPE1234F\n');
    expect(lines[0]).toMatchObject({ line: 2, problems: [expect.stringMatching(/pan "BAD"/)] });
    expect(lines[1]).toEqual({ line: 3, userId: 'bob', member: { ucc: 'B01', pan: 'ABCPE1234F' } });
    expect(lines[2]).toMatchObject({ line: 4, problems: ['user_id bob is on line 3 already'] });
  });

  it('refuses the whole file when a quote opens and never closes: the lines after it would be one field', () => {
    expect(() =>
      parseClientsFile('user_id,ucc,pan\nalice,A1,ABCPE1234F\n"bob,B1,ABCPE1234F\ncarol,C1,ABCPE1234F\n'),
    ).toThrow(/^line 3: a quoted field opens there and is not closed before the end of the file/);
  });

  it('refuses a file that is no clients file', () => {
    expect(() => parseClientsFile('')).toThrow(/the file is empty/);
    expect(() => parseClientsFile('user_id,ucc\nalice,A1')).toThrow(/lacks the columns pan/);
    expect(() => parseClientsFile('user_id,ucc,pan,email\n')).toThrow(/unknown columns "email"/);
    expect(() => parseClientsFile('user_id,ucc,pan,ucc\n')).toThrow(/names ucc twice/);
  });
});
