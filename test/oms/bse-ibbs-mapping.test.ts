/**
 * BSE's iBBS files as src/oms/links/bse-ibbs/mapping.ts writes and reads them: the upload row's ten
 * fields, its widths refused rather than truncated, RIC and EMP carrying the floor price, the margin flag the
 * reverse of NSE's; a bid written and read back through each download's parser; a download's bad lines set
 * aside one by one while the others are read (comma or pipe, CRLF, BOM, empty); the files' names.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  compareFileNames,
  downloadFileName,
  encodeDownload,
  encodeUploadFile,
  kindOfFileName,
  parseDownload,
  parseUploadFile,
  readFileName,
  toUploadRow,
  uploadFileName,
  DOWNLOAD_KINDS,
  IBBS_MAX_ROWS,
  type DownloadKind,
  type DownloadRows,
  type IbbsBid,
  type SuccessRow,
} from '../../src/oms/links/bse-ibbs/mapping.js';
import { toNseOrder, type MemberBid } from '../../src/oms/links/nse-eofs/mapping.js';

const FLOOR = 125_050;

const bid = (overrides: Partial<IbbsBid> = {}): IbbsBid => ({
  symbol: 'ACME',
  category: 'NII',
  cutoff: false,
  reference: 'R0001',
  ucc: 'UCC1',
  custodian: null,
  quantity: 100,
  pricePaise: 130_025,
  zeroMargin: false,
  bidId: null,
  action: 'NEW',
  ...overrides,
});

/** The row a download gives back for `b`, with the exchange's bid id. */
const rowOf = (b: IbbsBid, bidId: string, floor = FLOOR): SuccessRow => ({
  symbol: b.symbol,
  category: b.category,
  cutoff: b.cutoff,
  reference: b.reference,
  ucc: b.ucc,
  custodian: b.custodian,
  quantity: b.quantity,
  pricePaise: b.cutoff ? floor : b.pricePaise,
  zeroMargin: b.zeroMargin,
  bidId,
  action: b.action,
});

describe('the upload row', () => {
  it('writes the ten fields in order, a new bid with bid id 0', () => {
    expect(toUploadRow(bid(), FLOOR)).toBe('ACME,NII,R0001,UCC1,,100,1300.25,2,0,N');
    expect(toUploadRow(bid({ category: 'MF', custodian: 'CUST01', zeroMargin: true }), FLOOR)).toBe(
      'ACME,MF,R0001,UCC1,CUST01,100,1300.25,1,0,N',
    );
    expect(toUploadRow(bid({ action: 'MODIFY', bidId: '9001', quantity: 5, pricePaise: 130_000 }), FLOOR)).toBe(
      'ACME,NII,R0001,UCC1,,5,1300.00,2,9001,M',
    );
    expect(toUploadRow(bid({ action: 'DELETE', bidId: '9001', symbol: 'JK AGRI' }), FLOOR)).toBe(
      'JK AGRI,NII,R0001,UCC1,,100,1300.25,2,9001,D',
    );
  });

  it('RIC (retail at cut-off) and EMP carry the floor price; RI its own', () => {
    expect(toUploadRow(bid({ category: 'RETAIL', cutoff: true, pricePaise: 0 }), FLOOR)).toBe(
      'ACME,RIC,R0001,UCC1,,100,1250.50,2,0,N',
    );
    expect(toUploadRow(bid({ category: 'EMPLOYEE', cutoff: true, pricePaise: 0 }), FLOOR)).toBe(
      'ACME,EMP,R0001,UCC1,,100,1250.50,2,0,N',
    );
    expect(toUploadRow(bid({ category: 'RETAIL' }), FLOOR)).toBe('ACME,RI,R0001,UCC1,,100,1300.25,2,0,N');
    const floors: string[] = [];
    const file = encodeUploadFile([bid({ category: 'RETAIL', cutoff: true }), bid({ reference: 'R2' })], (s) => {
      floors.push(s);
      return FLOOR;
    });
    expect(file).toBe('ACME,RIC,R0001,UCC1,,100,1250.50,2,0,N\r\nACME,NII,R2,UCC1,,100,1300.25,2,0,N\r\n');
    expect(floors).toEqual(['ACME']);
  });

  it('refuses a cut-off bid of a non-retail category, and a priced employee bid', () => {
    expect(() => toUploadRow(bid({ cutoff: true }), FLOOR)).toThrow(/NII bid cannot be a cut-off bid/);
    expect(() => toUploadRow(bid({ category: 'EMPLOYEE' }), FLOOR)).toThrow(/EMPLOYEE bid is a cut-off bid/);
  });

  it("writes the margin flag the reverse of NSE's: 1 = 0 %, 2 = 100 %", () => {
    const nse = (zeroMargin: boolean) => {
      const member: MemberBid = {
        orderId: '0190a0b0-0000-7000-8000-000000000001',
        exchangeOrderId: null,
        symbol: 'ACME',
        series: 'IS',
        ucc: 'UCC1',
        clientType: 'CLI',
        custodian: null,
        zeroMargin,
        cutoff: false,
        quantity: 1,
        pricePaise: 100,
        investorCategory: 'MF',
      };
      return toNseOrder(member, 'E').marginType;
    };
    const bse = (zeroMargin: boolean) => toUploadRow(bid({ zeroMargin }), FLOOR).split(',')[7];
    expect([nse(true), bse(true)]).toEqual([0, '1']);
    expect([nse(false), bse(false)]).toEqual([1, '2']);
  });

  it('refuses what does not fit the widths, naming the field, and never truncates', () => {
    const refused: [Partial<IbbsBid>, RegExp][] = [
      [{ reference: 'R'.repeat(17) }, /reference "R{17}" is 17 characters: iBBS carries at most 16/],
      [{ reference: 'r0001' }, /reference "r0001"/],
      [{ reference: '' }, /reference ""/],
      [{ symbol: 'ABCDEFGHIJK' }, /symbol "ABCDEFGHIJK" is 11 characters: iBBS carries at most 10/],
      [{ symbol: 'AC,ME' }, /symbol "AC,ME"/],
      [{ ucc: 'U'.repeat(13) }, /ucc "U{13}" is 13 characters: iBBS carries at most 12/],
      [{ ucc: 'UC|C' }, /ucc "UC\|C"/],
      [{ custodian: 'C'.repeat(13) }, /custodian "C{13}" is 13 characters/],
      [{ quantity: 100_000_000_000 }, /quantity 100000000000 is not a whole number from 1 to 99999999999/],
      [{ quantity: 0 }, /quantity 0/],
      [{ quantity: 1.5 }, /quantity 1.5/],
      [{ pricePaise: 1_000_000_000 }, /price 10000000 is not a price from 0.01 to 999999.99 rupees/],
      [{ pricePaise: 100_000_000 }, /price 1000000 is not a price/],
      [{ pricePaise: 0 }, /price 0 is not a price/],
      [{ pricePaise: 10.5 }, /price 0.105 is not a price/],
      [{ action: 'MODIFY' }, /MODIFY row needs the exchange's bid id/],
      [{ bidId: '9001' }, /a new bid carries no bid id/],
      [{ action: 'DELETE', bidId: '0' }, /bid id "0"/],
    ];
    for (const [overrides, message] of refused) expect(() => toUploadRow(bid(overrides), FLOOR)).toThrow(message);
    expect(() => toUploadRow(bid({ category: 'RETAIL', cutoff: true }), 1_000_000_000)).toThrow(/floor price 10000000/);
    expect(
      toUploadRow(bid({ quantity: 99_999_999_999, pricePaise: 99_999_999, reference: 'R'.repeat(16) }), FLOOR),
    ).toBe(`ACME,NII,${'R'.repeat(16)},UCC1,,99999999999,999999.99,2,0,N`);
  });

  it('a file holds 1 to 100 rows, one per reference, no header, CRLF', () => {
    const bids = Array.from({ length: IBBS_MAX_ROWS }, (_, i) => bid({ reference: `R${i}` }));
    const file = encodeUploadFile(bids, () => FLOOR);
    expect(file.split('\r\n')).toHaveLength(IBBS_MAX_ROWS + 1);
    expect(file.startsWith('ACME,NII,R0,')).toBe(true);
    expect(file.endsWith('\r\n')).toBe(true);
    expect(() => encodeUploadFile([...bids, bid({ reference: 'R100' })], () => FLOOR)).toThrow(
      /at most 100 bids, not 101/,
    );
    expect(() => encodeUploadFile([], () => FLOOR)).toThrow(/at least one bid/);
    expect(() => encodeUploadFile([bid(), bid({ quantity: 1 })], () => FLOOR)).toThrow(/one row per reference/);
  });
});

const code = (max: number) => fc.stringMatching(new RegExp(`^[0-9A-Z]{1,${max}}$`));
const arbitraryBid: fc.Arbitrary<IbbsBid> = fc
  .record({
    symbol: fc.stringMatching(/^[A-Z0-9][A-Z0-9&_-]{0,4}( [A-Z0-9&_-]{1,3})?$/),
    kind: fc.constantFrom('RI', 'RIC', 'EMP', 'NII', 'MF', 'IC', 'OTHS'),
    reference: code(16),
    ucc: code(12),
    custodian: fc.option(code(12)),
    quantity: fc.integer({ min: 1, max: 99_999_999_999 }),
    pricePaise: fc.integer({ min: 1, max: 99_999_999 }),
    zeroMargin: fc.boolean(),
    bidId: fc.option(fc.stringMatching(/^[1-9][0-9]{0,19}$/)),
    action: fc.constantFrom('MODIFY', 'DELETE') as fc.Arbitrary<'MODIFY' | 'DELETE'>,
  })
  .map(({ kind, bidId, action, ...rest }) => ({
    ...rest,
    category: kind === 'RI' || kind === 'RIC' ? 'RETAIL' : kind === 'EMP' ? 'EMPLOYEE' : kind,
    cutoff: kind === 'RIC' || kind === 'EMP',
    bidId,
    action: bidId === null ? 'NEW' : action,
  }));

describe('a bid written and read back', () => {
  it('through the success file (the upload with the bid id the exchange gave) gives the same fields', () => {
    fc.assert(
      fc.property(
        fc.array(arbitraryBid, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 99_999_999 }),
        (bids, floor) => {
          const unique = bids.map((b, i) => ({ ...b, reference: `${b.reference.slice(0, 13)}X${i}` }));
          const upload = encodeUploadFile(unique, () => floor);
          const success = upload
            .split('\r\n')
            .map((line, i) =>
              line === '' ? line : line.replace(/,[0-9]+,([NMD])$/, `,${unique[i]!.bidId ?? 7000 + i},$1`),
            )
            .join('\r\n');
          const parsed = parseDownload('success', success);
          expect(parsed.problems).toEqual([]);
          expect(parsed.rows).toEqual(unique.map((b, i) => rowOf(b, b.bidId ?? String(7000 + i), floor)));
        },
      ),
    );
  });

  it('through the upload file as iBBS (the simulator) reads it gives the same fields, a new bid with no bid id', () => {
    fc.assert(
      fc.property(
        fc.array(arbitraryBid, { minLength: 1, maxLength: 20 }),
        fc.integer({ min: 1, max: 99_999_999 }),
        (bids, floor) => {
          const unique = bids.map((b, i) => ({ ...b, reference: `${b.reference.slice(0, 13)}X${i}` }));
          const parsed = parseUploadFile(encodeUploadFile(unique, () => floor));
          expect(parsed.problems).toEqual([]);
          expect(parsed.rows).toEqual(unique.map((b) => ({ ...rowOf(b, '', floor), bidId: b.bidId })));
        },
      ),
    );
    const bad = parseUploadFile('ACME,NII,R1,UCC1,,100,1300.25,2,0,N\r\nACME,XX,R2,UCC1,,100,1300.25,2,0,N\r\n');
    expect(bad.rows).toHaveLength(1);
    expect(bad.problems).toEqual([
      { line: 2, text: 'ACME,XX,R2,UCC1,,100,1300.25,2,0,N', reason: expect.stringMatching(/unknown category "XX"/) },
    ]);
  });

  it("through each download the simulator writes, every kind's own columns", () => {
    const b = bid({ category: 'MF', custodian: 'CUST01', zeroMargin: true, bidId: '9001', action: 'MODIFY' });
    const enteredAt = Date.parse('2026-12-07T04:00:05Z');
    const files: { [K in DownloadKind]: DownloadRows[K][] } = {
      success: [rowOf(b, '9001')],
      rejection: [{ ...rowOf(b, '9001'), error: 'Price, out of range | see circular' }],
      bidBook: [{ ...rowOf(b, '9001'), enteredAt, modifiedAt: null }],
      allocation: [
        { ...rowOf(b, '9001'), allottedQuantity: 40, allottedPricePaise: 128_000 },
        { ...rowOf(b, '9002'), allottedQuantity: 0, allottedPricePaise: null },
      ].map(({ action: _action, ...row }) => row),
    };
    expect(encodeDownload('bidBook', files.bidBook)).toBe(
      'ACME,MF,R0001,UCC1,CUST01,100,1300.25,9001,07/12/2026 09:30:05,,1,M\r\n',
    );
    expect(encodeDownload('allocation', files.allocation)).toContain(',9001,40,1280.00,1\r\n');
    for (const kind of DOWNLOAD_KINDS) {
      const parsed = parseDownload(kind, encodeDownload(kind, files[kind]));
      expect(parsed).toEqual({ rows: files[kind], problems: [] });
    }
    const rejected = parseDownload('rejection', 'ACME,NII,R1,UCC1,,1,1.00,2,0,N,Bid, rejected\n');
    expect(rejected.rows[0]).toMatchObject({ bidId: null, error: 'Bid, rejected' });
  });
});

describe('a download', () => {
  const good = 'ACME,NII,R1,UCC1,,100,1300.25,2,9001,N';
  const good2 = 'ACME,RIC,R2,UCC2,,10,1250.50,2,9002,N';
  const bad: [string, string, RegExp][] = [
    ['a wrong field count', 'ACME,NII,R3,UCC3,,100,1300.25,2,9003', /9 fields where a success row has 10/],
    ['a quantity that is no number', 'ACME,NII,R3,UCC3,,1e3,1300.25,2,9003,N', /quantity "1e3" is not a whole number/],
    ['a decimal comma in the price', 'ACME,NII,R3,UCC3,,100,12,50,2,9003,N', /11 fields where a success row has 10/],
    ['a price that is no number', 'ACME,NII,R3,UCC3,,100,-5.00,2,9003,N', /price "-5.00" is not a number of rupees/],
    [
      'a price with three decimals',
      'ACME,NII,R3,UCC3,,100,1300.255,2,9003,N',
      /price "1300.255" has more than two decimals/,
    ],
    ['an unknown category', 'ACME,QIB,R3,UCC3,,100,1300.25,2,9003,N', /unknown category "QIB"/],
    ['an unknown margin', 'ACME,NII,R3,UCC3,,100,1300.25,0,9003,N', /unknown margin "0"/],
    ['an unknown action', 'ACME,NII,R3,UCC3,,100,1300.25,2,9003,C', /unknown action "C"/],
    ['a bid id that is no number', 'ACME,NII,R3,UCC3,,100,1300.25,2,9OO3,N', /bid id "9OO3" is not a number/],
    ['no bid id of the exchange', 'ACME,NII,R3,UCC3,,100,1300.25,2,0,N', /no bid id of the exchange/],
    ['no UCC', 'ACME,NII,R3,,,100,1300.25,2,9003,N', /no UCC/],
  ];
  for (const [what, line, reason] of bad) {
    it(`sets aside a line with ${what}, and reads the others`, () => {
      const parsed = parseDownload('success', [good, line, good2, ''].join('\n'));
      expect(parsed.rows.map((row) => row.reference)).toEqual(['R1', 'R2']);
      expect(parsed.problems).toHaveLength(1);
      expect(parsed.problems[0]).toMatchObject({ line: 2, text: line });
      expect(parsed.problems[0]!.reason).toMatch(reason);
    });
  }

  it('reads pipes, CRLF, a BOM, blanks around fields, blank lines and a trailing newline', () => {
    const text = `\uFEFF${good.replace(/,/g, '|')}\r\n\r\n ACME , RIC ,R2, UCC2,,10,1250.50,2,9002,N\r\n`;
    const parsed = parseDownload('success', text);
    expect(parsed.problems).toEqual([]);
    expect(parsed.rows).toMatchObject([
      { symbol: 'ACME', category: 'NII', cutoff: false, reference: 'R1', pricePaise: 130_025, bidId: '9001' },
      { category: 'RETAIL', cutoff: true, reference: 'R2', pricePaise: 125_050, zeroMargin: false },
    ]);
  });

  it('an empty file, or one whose every line is bad, answers so', () => {
    for (const text of ['', '\uFEFF', '\r\n\n']) {
      expect(parseDownload('allocation', text)).toEqual({
        rows: [],
        problems: [{ line: 0, text: '', reason: 'the file holds no rows' }],
      });
    }
    const parsed = parseDownload('success', 'junk\nmore,junk\n');
    expect(parsed.rows).toEqual([]);
    expect(parsed.problems.map((p) => p.line)).toEqual([1, 2, 0]);
    expect(parsed.problems[2]!.reason).toBe('no line of the file could be read');
  });

  it("reads the bid book's times and the allocation's allotment, and refuses what cannot be", () => {
    const book = parseDownload(
      'bidBook',
      [
        'ACME,RI,R1,UCC1,,10,1300.00,9001,07/12/2026 09:30:05,07/12/2026 10:00:00,2,M',
        'ACME,RI,R2,UCC1,,10,1300.00,9002,31/02/2026 09:30:05,,2,N',
      ].join('\n'),
    );
    expect(book.rows[0]).toMatchObject({
      enteredAt: Date.parse('2026-12-07T04:00:05Z'),
      modifiedAt: Date.parse('2026-12-07T04:30:00Z'),
      action: 'MODIFY',
    });
    expect(book.problems[0]!.reason).toMatch(/entry time "31\/02\/2026 09:30:05" is not a time/);
    const allocation = parseDownload(
      'allocation',
      [
        'ACME,NII,R1,UCC1,,10,1300.00,9001,10,1290.00,2',
        'ACME,NII,R2,UCC1,,10,1300.00,9002,0,,2',
        'ACME,NII,R3,UCC1,,10,1300.00,9003,11,1290.00,2',
        'ACME,NII,R4,UCC1,,10,1300.00,9004,5,0.00,2',
      ].join('\n'),
    );
    expect(allocation.rows).toMatchObject([
      { reference: 'R1', allottedQuantity: 10, allottedPricePaise: 129_000 },
      { reference: 'R2', allottedQuantity: 0, allottedPricePaise: null },
    ]);
    expect(allocation.problems.map((p) => p.reason)).toEqual([
      "the allotted quantity 11 is more than the bid's 10",
      'shares allotted at no price',
    ]);
  });

  it('never throws, whatever the file holds', () => {
    const line = fc.array(fc.oneof(fc.string(), fc.constantFrom('NII', 'RIC', '1', '2', 'N', '9001', '1.00', '')), {
      maxLength: 13,
    });
    fc.assert(
      fc.property(fc.constantFrom(...DOWNLOAD_KINDS), fc.array(line), fc.constantFrom(',', '|'), (kind, lines, sep) => {
        const parsed = parseDownload(kind, lines.map((fields) => fields.join(sep)).join('\n'));
        expect(parsed.rows.length + parsed.problems.length).toBeGreaterThan(0);
      }),
    );
  });
});

describe('file names', () => {
  const at = Date.parse('2026-12-07T04:00:05Z');

  it('say their kind, member, India time and sequence', () => {
    expect(uploadFileName('6789', at, 12)).toBe('OFSBID_6789_20261207093005_0012.csv');
    expect(downloadFileName('success', '6789', at, 12)).toBe('SUCCESS_6789_20261207093005_0012.csv');
    expect(readFileName('ALLOC_6789_20261207093005_0012.txt')).toEqual({
      kind: 'allocation',
      memberCode: '6789',
      stamp: '20261207093005',
      sequence: 12,
    });
    const kinds = ['SUCCESS', 'REJECT', 'BIDBOOK', 'ALLOC'].map((p) =>
      kindOfFileName(`${p}_6789_20261207093005_0001.csv`),
    );
    expect(kinds).toEqual(['success', 'rejection', 'bidBook', 'allocation']);
    for (const name of [
      'SUCCESS_6789_20261207093005_0001.csv.tmp',
      'OFSBID_6789_20261207093005_0001.csv',
      'success_6789_20261207093005_0001.csv',
      'HELLO_6789_20261207093005_0001.csv',
      'notes.txt',
    ]) {
      expect(kindOfFileName(name)).toBeNull();
    }
    expect(() => uploadFileName('67-89', at, 1)).toThrow(/member code/);
  });

  it('sort oldest first by time and sequence, whatever their kind', () => {
    const names = [
      'notes.txt',
      'SUCCESS_6789_20261207093005_0002.csv',
      'REJECT_6789_20261207093005_0010.csv',
      'ALLOC_6789_20261208180000_0001.csv',
      'SUCCESS_6789_20261207093005_0001.csv',
    ];
    expect([...names].sort(compareFileNames)).toEqual([
      'SUCCESS_6789_20261207093005_0001.csv',
      'SUCCESS_6789_20261207093005_0002.csv',
      'REJECT_6789_20261207093005_0010.csv',
      'ALLOC_6789_20261208180000_0001.csv',
      'notes.txt',
    ]);
  });
});
