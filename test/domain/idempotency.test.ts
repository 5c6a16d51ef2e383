/** The rules of idempotency keys: the body fingerprint, the kept statuses and what a held key answers. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  canonicalJson,
  decideOnHeldKey,
  isKeptStatus,
  LEASE_MS,
  REPLAY_WINDOW_MS,
  requestFingerprint,
  type HeldKey,
} from '../../src/domain/orders/idempotency.js';

/** The same JSON value with the keys of every object in another order. */
function shuffled(value: unknown, seed: number): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffled(v, seed));
  if (value === null || typeof value !== 'object') return value;
  const entries = Object.entries(value as Record<string, unknown>);
  const rotated =
    entries.length === 0
      ? entries
      : [...entries.slice(seed % entries.length), ...entries.slice(0, seed % entries.length)].reverse();
  return Object.fromEntries(rotated.map(([k, v]) => [k, shuffled(v, seed + 1)]));
}

describe('canonicalJson and requestFingerprint', () => {
  it('property: a body sent with its keys in any order and any white space has one fingerprint', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.nat(), fc.integer({ min: 0, max: 8 }), (value, seed, indent) => {
        const resent = JSON.parse(JSON.stringify(shuffled(value, seed), null, indent)) as unknown;
        expect(canonicalJson(resent)).toBe(canonicalJson(value));
        expect(requestFingerprint({ method: 'POST', path: '/p', body: resent })).toBe(
          requestFingerprint({ method: 'POST', path: '/p', body: value }),
        );
      }),
    );
  });

  it('property: canonical JSON is JSON of the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('sorts keys at every level and leaves array order alone', () => {
    expect(canonicalJson({ b: [3, { z: 1, a: 2 }], a: null })).toBe('{"a":null,"b":[3,{"a":2,"z":1}]}');
  });

  it('another body, method or path is another request', () => {
    const base = { method: 'POST', path: '/transactional/v1/orders/regular', body: { quantity: '10', price: 101.5 } };
    const fingerprint = requestFingerprint(base);
    expect(fingerprint).toMatch(/^[0-9a-f]{64}$/);
    expect(requestFingerprint({ ...base, body: { quantity: '11', price: 101.5 } })).not.toBe(fingerprint);
    expect(requestFingerprint({ ...base, body: [{ quantity: '10', price: 101.5 }] })).not.toBe(fingerprint);
    expect(requestFingerprint({ ...base, method: 'PUT' })).not.toBe(fingerprint);
    expect(requestFingerprint({ ...base, path: '/transactional/v1/ordercart' })).not.toBe(fingerprint);
    // A call without a body and one with an empty object are not the same request.
    expect(requestFingerprint({ ...base, body: undefined })).not.toBe(requestFingerprint({ ...base, body: {} }));
  });
});

describe('isKeptStatus', () => {
  it('keeps a 200 and a 422 only', () => {
    expect([200, 422].every(isKeptStatus)).toBe(true);
    for (const status of [201, 400, 401, 403, 404, 409, 412, 413, 415, 429, 500, 503])
      expect(isKeptStatus(status), String(status)).toBe(false);
  });
});

describe('decideOnHeldKey', () => {
  const now = 1_000_000_000_000;
  const held = (overrides: Partial<HeldKey> = {}): HeldKey => ({
    owner: 'o',
    fingerprint: 'same',
    state: 'DONE',
    lockedUntil: now - 60_000 + LEASE_MS,
    createdAt: now - 60_000,
    ...overrides,
  });
  const running = (lockedUntil: number) => held({ state: 'RUNNING', lockedUntil, createdAt: lockedUntil - LEASE_MS });

  it('replays a kept answer to the same request, refuses another request', () => {
    expect(decideOnHeldKey(held(), 'same', now)).toEqual({ action: 'replay' });
    expect(decideOnHeldKey(held(), 'other', now)).toEqual({ action: 'reused' });
  });

  it('a running request: 409 for the same request, 422 for another, until its lease runs out', () => {
    expect(decideOnHeldKey(running(now + 1), 'same', now)).toEqual({ action: 'running' });
    expect(decideOnHeldKey(running(now + 1), 'other', now)).toEqual({ action: 'reused' });
    expect(decideOnHeldKey(running(now), 'same', now)).toEqual({ action: 'take-over' });
    expect(decideOnHeldKey(running(now), 'other', now)).toEqual({ action: 'take-over' });
  });

  it('a key claimed 24 hours ago is free, whatever it holds', () => {
    expect(decideOnHeldKey(held({ createdAt: now - REPLAY_WINDOW_MS + 1 }), 'same', now)).toEqual({ action: 'replay' });
    expect(decideOnHeldKey(held({ createdAt: now - REPLAY_WINDOW_MS }), 'same', now)).toEqual({ action: 'take-over' });
    expect(decideOnHeldKey(held({ createdAt: now - REPLAY_WINDOW_MS }), 'other', now)).toEqual({ action: 'take-over' });
  });
});
