/**
 * Time-ordered ids (UUID v7) for orders, requests, carts and webhooks. Time-ordered, because the store
 * indexes them and random keys would scatter every commit's index writes. The random bytes come from a
 * pool filled 256 ids at a time: the uuid package asks the operating system for 16 bytes per id, which
 * cost order entry a few per cent of its CPU (two ids per bid).
 */
import { randomFillSync } from 'node:crypto';
import { v7 } from 'uuid';

const ID_BYTES = 16;
const pool = Buffer.allocUnsafe(ID_BYTES * 256);
let offset = pool.length;

export function timeOrderedId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const random = pool.subarray(offset, (offset += ID_BYTES));
  return v7({ random });
}
