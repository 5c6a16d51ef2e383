import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  FINISHED_STATUSES,
  odinTimestamp,
  socketTimestamp,
  statusesOf,
  SOCKET_STATUS_CODES,
} from '../../src/domain/orders/odin.js';
import { LIVE_STATUSES, OrderStatus } from '../../src/domain/orders/status.js';

describe('ODIN times, in India time', () => {
  it('formats the REST time and the socket time', () => {
    const at = Date.parse('2026-04-17T07:16:34.999Z');
    expect(odinTimestamp(at)).toBe('2026-04-17 12:46:34');
    expect(socketTimestamp(at)).toBe('17-Apr-2026 12.46.34');
  });

  it('crosses midnight and the year in India time, not in UTC', () => {
    const at = Date.parse('2026-12-31T18:30:00Z');
    expect(odinTimestamp(at)).toBe('2027-01-01 00:00:00');
    expect(socketTimestamp(at)).toBe('01-Jan-2027 00.00.00');
  });

  it('reads back as the same second, for any instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: Date.parse('2100-01-01T00:00:00Z') }), (at) => {
        const back = Date.parse(`${odinTimestamp(at).replace(' ', 'T')}+05:30`);
        expect(back).toBe(Math.floor(at / 1000) * 1000);
      }),
    );
  });
});

describe('orderStatus codes', () => {
  it('1 is live, 2 is completed, -1 and nothing are every status; a name is itself', () => {
    expect(statusesOf('1')).toEqual(LIVE_STATUSES);
    expect(statusesOf('2')).toEqual(FINISHED_STATUSES);
    expect(statusesOf('-1')).toBeUndefined();
    expect(statusesOf(undefined)).toBeUndefined();
    expect(statusesOf('PENDING')).toEqual(['PENDING']);
  });

  it('live and completed split the statuses: each status in exactly one, each with its socket code', () => {
    const all = Object.values(OrderStatus);
    expect([...LIVE_STATUSES, ...FINISHED_STATUSES].sort()).toEqual([...all].sort());
    expect(new Set(all.map((status) => SOCKET_STATUS_CODES[status])).size).toBe(all.length);
  });
});
