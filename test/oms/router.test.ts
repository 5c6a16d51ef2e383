/**
 * The router over several links (src/oms/links/router.ts): a link whose book cannot be read fails alone.
 * The orders the other links know are answered; the rest wait as awaited with its reason. All failing: the
 * first error, as one link would throw it.
 */
import { describe, expect, it } from 'vitest';
import { ExchangeUnavailableError, type ExchangeAdapter, type ExchangeOrder } from '../../src/oms/exchange.js';
import { ExchangeRouter } from '../../src/oms/links/router.js';

const held: ExchangeOrder = { status: 'LIVE', exchangeOrderId: 'X1', orderType: 'RL', pricePaise: 100, quantity: 1 };

function link(findBids: ExchangeAdapter['findBids']): ExchangeAdapter {
  const none = () => Promise.reject(new Error('not used'));
  return {
    findBids,
    placeBids: none,
    modify: none,
    cancel: none,
    carryForward: none,
    pollEvents: async () => [],
    acknowledge: async () => undefined,
  };
}

describe('the exchange router', () => {
  it("answers the orders a healthy link knows when another link's book cannot be read", async () => {
    const router = new ExchangeRouter(
      new Map([
        ['NSE_EQ', link(async (ids) => new Map(ids.filter((id) => id === 'nse-order').map((id) => [id, held])))],
        ['BSE_EQ', link(() => Promise.reject(new Error('ENOTDIR: /srv/ibbs/record/uploaded')))],
      ]),
    );
    const found = await router.findBids(['nse-order', 'bse-order']);
    expect(found.get('nse-order')).toEqual(held);
    expect(found.get('bse-order')).toEqual({
      status: 'AWAITED',
      unanswered: {
        outcome: 'not-sent',
        why: "an exchange's book could not be read: ENOTDIR: /srv/ibbs/record/uploaded",
        retryAfterMs: 10_000,
      },
    });
  });

  it('throws the first error when no link can read its book', async () => {
    const down = new ExchangeUnavailableError({ outcome: 'unknown', why: 'timeout', retryAfterMs: 5_000 });
    const router = new ExchangeRouter(
      new Map([
        ['NSE_EQ', link(() => Promise.reject(down))],
        ['BSE_EQ', link(() => Promise.reject(new Error('EACCES')))],
      ]),
    );
    await expect(router.findBids(['a'])).rejects.toBe(down);
  });
});
