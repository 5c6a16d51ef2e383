/** Time-ordered ids (src/ids.ts): the order book breaks ties of one millisecond on the order id. */
import { describe, expect, it } from 'vitest';
import { timeOrderedId } from '../../src/ids.js';

describe('timeOrderedId', () => {
  it('sorts in the order the ids were made, also within one millisecond, and never repeats', () => {
    // Far more ids than a millisecond holds at this speed, across more than one refill of the random pool.
    const ids = Array.from({ length: 20_000 }, () => timeOrderedId());
    for (let i = 1; i < ids.length; i++) expect(ids[i]! > ids[i - 1]!, `${ids[i - 1]} then ${ids[i]}`).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('is a UUID version 7 carrying the current time', () => {
    const before = Date.now();
    const id = timeOrderedId();
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const msecs = parseInt(id.replaceAll('-', '').slice(0, 12), 16);
    expect(msecs).toBeGreaterThanOrEqual(before);
    expect(msecs).toBeLessThanOrEqual(Date.now() + 1);
  });
});
