/**
 * The rules of idempotency keys (product.md "Several nodes, retries and faults"): what a key may look
 * like, when two requests are "the same", which answers are kept, and what a new request with a key
 * that is already held gets. Plain functions; the store keeps the keys and the HTTP layer applies them.
 */
import { createHash } from 'node:crypto';

/** A kept answer is replayed for this long after the key was first claimed. */
export const REPLAY_WINDOW_MS = 24 * 60 * 60 * 1000;
/** A request holds its key for this long; a key still held after it was abandoned by a dead node. */
export const LEASE_MS = 30 * 1000;

/** 1 to 255 printable ASCII characters (0x20 to 0x7E). */
export const IDEMPOTENCY_KEY_PATTERN = '^[\\x20-\\x7E]{1,255}$';

/** A 200 or a 422 business refusal is kept and replayed; any other answer (400, 401, 429, 5xx...) is not. */
export function isKeptStatus(statusCode: number): boolean {
  return statusCode === 200 || statusCode === 422;
}

/** JSON with the keys of every object sorted, without white space: equal for bodies equal as JSON. */
export function canonicalJson(value: unknown): string {
  if (value === undefined) return 'null';
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

/** What makes two requests with one key the same request: method, path (with its parameters) and body. */
export interface KeyedRequest {
  method: string;
  path: string;
  body: unknown;
}

/** SHA-256 (hex) of the method, the path and the canonical JSON of the body. */
export function requestFingerprint(request: KeyedRequest): string {
  return createHash('sha256')
    .update(`${request.method} ${request.path}\n${canonicalJson(request.body)}`)
    .digest('hex');
}

/** A key as stored: held by a running request, or done with its kept answer. */
export interface HeldKey {
  /** A random token naming the request that claimed the key. */
  owner: string;
  fingerprint: string;
  state: 'RUNNING' | 'DONE';
  /** Until when a RUNNING request holds the key. */
  lockedUntil: number;
  createdAt: number;
}

export type HeldKeyDecision =
  /** The key is free again: its window has passed, or the request that held it was abandoned. */
  | { action: 'take-over' }
  /** Same request, answer kept: send it again. */
  | { action: 'replay' }
  /** Another request used the key: 422. */
  | { action: 'reused' }
  /** Same request, still running: 409 (a request usually ends well within a second: retry then). */
  | { action: 'running' };

/** What a request with `fingerprint` gets for a key that is already stored. */
export function decideOnHeldKey(held: HeldKey, fingerprint: string, now: number): HeldKeyDecision {
  if (now >= held.createdAt + REPLAY_WINDOW_MS) return { action: 'take-over' };
  if (held.state === 'RUNNING' && now >= held.lockedUntil) return { action: 'take-over' };
  if (held.fingerprint !== fingerprint) return { action: 'reused' };
  if (held.state === 'DONE') return { action: 'replay' };
  return { action: 'running' };
}
