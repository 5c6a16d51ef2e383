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

/**
 * The last id's millisecond and sequence. Given its own random bytes, uuid's v7 no longer keeps them, so
 * this does what it does without options (RFC 9562, method 1): a new millisecond starts the 31-bit sequence
 * at a random value, an id in the same millisecond takes the next one. Ids of one process therefore sort
 * in the order they were made, also within a millisecond (the order book breaks ties on the order id).
 */
const last = { msecs: -Infinity, seq: 0 };

export function timeOrderedId(): string {
  if (offset === pool.length) {
    randomFillSync(pool);
    offset = 0;
  }
  const random = pool.subarray(offset, (offset += ID_BYTES));
  const now = Date.now();
  if (now > last.msecs) {
    last.msecs = now;
    last.seq = ((random[6]! & 0x7f) << 24) | (random[7]! << 16) | (random[8]! << 8) | random[9]!;
  } else {
    last.seq = (last.seq + 1) | 0;
    if (last.seq === 0) last.msecs += 1;
  }
  return v7({ random, msecs: last.msecs, seq: last.seq });
}
