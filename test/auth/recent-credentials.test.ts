/** Order entry's recent credentials (src/auth/recent-credentials.ts): a second's reuse, one key per token, bounded. */
import { describe, expect, it } from 'vitest';
import { RecentCredentials } from '../../src/auth/recent-credentials.js';
import type { SessionWithKeyOwner } from '../../src/store/users.js';

const credentials = (userId: string): SessionWithKeyOwner => ({
  userId,
  category: 'RETAIL',
  expiresAt: 1e15,
  revokedAt: null,
  apiKeyOwner: userId,
  apiKeyAddresses: [],
});

describe('RecentCredentials', () => {
  it('serves a token with the same key for less than its age, then reads again', () => {
    const clock = { now: 1_000 };
    const recent = new RecentCredentials(1_000, 10, () => clock.now);
    recent.set('t1', 'k1', credentials('alice'));
    clock.now += 999;
    expect(recent.get('t1', 'k1')?.userId).toBe('alice');
    clock.now += 1;
    expect(recent.get('t1', 'k1')).toBeUndefined();
    // An expired entry is dropped when found.
    expect(recent.size).toBe(0);
  });

  it('serves a token only with the key it was read with; another key replaces it', () => {
    const recent = new RecentCredentials(1_000, 10, () => 0);
    recent.set('t1', 'k1', credentials('alice'));
    expect(recent.get('t1', 'k2')).toBeUndefined();
    recent.set('t1', 'k2', credentials('alice'));
    expect(recent.get('t1', 'k1')).toBeUndefined();
    expect(recent.get('t1', 'k2')?.userId).toBe('alice');
    expect(recent.size).toBe(1);
  });

  it('forgets a token at once (its logout, a refusal at commit)', () => {
    const recent = new RecentCredentials(1_000, 10, () => 0);
    recent.set('t1', 'k1', credentials('alice'));
    recent.set('t2', 'k2', credentials('bob'));
    recent.forget('t1');
    expect(recent.get('t1', 'k1')).toBeUndefined();
    expect(recent.get('t2', 'k2')?.userId).toBe('bob');
  });

  it('holds at most its bound, forgetting the least recently read first', () => {
    const recent = new RecentCredentials(1_000, 3, () => 0);
    for (const token of ['t1', 't2', 't3']) recent.set(token, 'k', credentials(token));
    // t1 read again: t2 is now the oldest.
    recent.set('t1', 'k', credentials('t1'));
    recent.set('t4', 'k', credentials('t4'));
    expect(recent.size).toBe(3);
    expect(recent.get('t2', 'k')).toBeUndefined();
    for (const token of ['t1', 't3', 't4']) expect(recent.get(token, 'k')?.userId).toBe(token);
  });
});
