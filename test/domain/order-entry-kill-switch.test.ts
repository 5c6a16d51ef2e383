/**
 * The kill switch inside order entry's judgment (src/domain/orders/entry.ts): against the algos the batch's
 * transaction read, an order of a stopped algo is refused whatever the command that would send it to the
 * exchange (a new bid, a modification, a carry-forward), and may still be cancelled by its owner.
 */
import { describe, expect, it } from 'vitest';
import type { AlgoRegistration } from '../../src/domain/orders/algo-rules.js';
import { ApiError, Errors } from '../../src/domain/errors.js';
import { BatchSnapshot, judgeOrderCommand } from '../../src/domain/orders/entry.js';
import type { OrderCommand } from '../../src/domain/orders/commands.js';
import { sbinIssue, storedOrder } from '../support/fixtures.js';
import { testMember } from '../support/member-data.js';

const NOW = Date.UTC(2026, 10, 27, 6, 0);
const HOUR = 60 * 60 * 1000;
const issue = sbinIssue({
  scripToken: 1,
  symbol: 'ACME',
  series: 'RP',
  retailOpensAt: NOW - HOUR,
  retailClosesAt: NOW + HOUR,
  nonRetailOpensAt: NOW - HOUR,
  nonRetailClosesAt: NOW + HOUR,
});
// u1 is a client with its UCC and PAN recorded (docs/design/member-data.md).
const caller = { userId: 'u1', category: 'RETAIL' as const, member: testMember('u1') };

function algo(disabledAt: number | null): AlgoRegistration {
  return {
    algoId: 'K1',
    exchange: 'NSE_EQ',
    approvalRef: 'ref',
    name: null,
    userIds: ['u1'],
    registeredAt: 0,
    disabledAt,
    disabledReason: disabledAt === null ? null : 'runaway',
  };
}

function judged(command: OrderCommand, disabledAt: number | null): ApiError | 'accepted' {
  const order = storedOrder({ algoId: 'K1', pricePaise: 10_000 });
  const state = new BatchSnapshot(
    NOW,
    new Map([[`NSE_EQ\u00001`, issue]]),
    new Map([[order.orderId, order]]),
    [],
    new Map(),
    new Map(),
    [],
    new Map([['K1', algo(disabledAt)]]),
  );
  try {
    judgeOrderCommand(command, state);
    return 'accepted';
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
}

const place: OrderCommand = {
  kind: 'place',
  caller,
  bid: {
    scrip_info: { exchange: 'NSE_EQ', scrip_token: 1, symbol: 'ACME', series: 'RP' },
    order_type: 'RL',
    quantity: '10',
    price: 101.5,
  },
  order: storedOrder({ orderId: 'o2', algoId: 'K1', pricePaise: 10_150 }),
};
const modify: OrderCommand = {
  kind: 'modify',
  caller,
  exchange: 'NSE_EQ',
  orderId: 'o1',
  request: { order_type: 'RL', quantity: '20', price: 101.5 },
  requestId: null,
};
const carry: OrderCommand = { kind: 'carry', caller, exchange: 'NSE_EQ', orderId: 'o1', requestId: null };
const cancel: OrderCommand = { kind: 'cancel', caller, exchange: 'NSE_EQ', orderId: 'o1', requestId: null };

describe("a stopped algo's orders in order entry's judgment", () => {
  it.each([
    ['a new bid', place],
    ['a modification', modify],
    ['a carry-forward', carry],
  ])('refuses %s with e-602, and judges it on its other rules while the algo runs', (_name, command) => {
    const refused = judged(command, NOW - 1);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).kind).toBe(Errors.ALGO_DISABLED);
    expect((refused as ApiError).message).toContain('runaway');
    const running = judged(command, null);
    if (command.kind === 'carry') expect((running as ApiError).kind).toBe(Errors.OFS_CARRY_FORWARD_NOT_ALLOWED);
    else expect(running).toBe('accepted');
  });

  it('lets its owner cancel it', () => {
    expect(judged(cancel, NOW - 1)).toBe('accepted');
  });
});
