/**
 * The duplicate-header check's scan (src/http/plugins/duplicate-headers.ts) passes over a raw name whose length no
 * single-value header has, without lower-casing it. Property: it names the same header as the plain scan
 * (every name lower-cased) for any raw header list, in any case, with look-alikes of the same lengths.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { repeatedHeader, SINGLE_HEADERS } from '../../src/http/plugins/duplicate-headers.js';

function plainScan(rawHeaders: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!SINGLE_HEADERS.has(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

const anyCase = (name: string) =>
  fc
    .array(fc.boolean(), { minLength: name.length, maxLength: name.length })
    .map((upper) => [...name].map((c, i) => (upper[i] ? c.toUpperCase() : c)).join(''));

// Other headers, some as long as a single-value one (accept-encoding and idempotency-key are both 15).
const OTHERS = [
  'host',
  'accept',
  'accept-encoding',
  'content-length',
  'user-agent',
  'x-request-id',
  'authorizatio',
  'x-api-keys',
  'if-matcH2',
  'cookie',
];

const headerName = fc.oneof(
  fc.constantFrom(...SINGLE_HEADERS).chain(anyCase),
  fc.constantFrom(...OTHERS).chain(anyCase),
);

describe('repeatedHeader', () => {
  it('names what the plain scan names, for any raw header list', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(headerName, fc.string({ maxLength: 8 })), { maxLength: 12 }), (pairs) => {
        const raw = pairs.flat();
        expect(repeatedHeader(raw)).toBe(plainScan(raw));
      }),
      { numRuns: 2000 },
    );
  });

  it('finds a repeat sent in two cases, and none in a list of distinct headers', () => {
    expect(
      repeatedHeader(['Host', 'a', 'Authorization', 'Bearer x', 'content-length', '2', 'AUTHORIZATION', 'Bearer y']),
    ).toBe('authorization');
    expect(
      repeatedHeader([
        'Host',
        'a',
        'Authorization',
        'Bearer x',
        'X-Api-Key',
        'k',
        'Accept-Encoding',
        'gzip',
        'Idempotency-Key',
        'i',
      ]),
    ).toBeUndefined();
  });
});
