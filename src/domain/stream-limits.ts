/**
 * How many long-lived connections a node holds (issue 12, finding 3): order-event streams (SSE) and live
 * order sockets share one budget, MAX_STREAMS_PER_USER for one user and MAX_STREAMS_PER_NODE for all users
 * together. A socket counts for the node from its connection (an unauthenticated socket costs the node as
 * much, for up to its login deadline) and for its user from its login. And how long one lives: no longer
 * than the session it was opened with, whose token is checked again while it is open.
 */
import { ApiError } from './errors.js';

export interface StreamCaps {
  /** Streams and sockets one user may hold open on one node. */
  streamsPerUser: number;
  /** Streams and sockets one node holds open, all users together (sockets not yet logged in included). */
  streamsPerNode: number;
}

/** What a new stream would add to: the node's count, and its user's (null: a socket not yet logged in). */
export interface StreamsHeld {
  onNode: number;
  byUser: number | null;
}

/** Which cap refuses a new stream: the user's is named first, since only the caller can free it. */
export type StreamLimit = 'user' | 'node';

/** The cap a new stream would exceed, or null when it may open. */
export function streamLimitReached(held: StreamsHeld, caps: StreamCaps): StreamLimit | null {
  if (held.byUser !== null && held.byUser >= caps.streamsPerUser) return 'user';
  if (held.onNode >= caps.streamsPerNode) return 'node';
  return null;
}

/** setTimeout's longest delay. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * How long until a stream's token is checked again: the recheck period, or just past the token's expiry
 * when that comes sooner (a logout or a disabled user is seen at the next period, an expiry at once).
 */
export function nextSessionCheckMs(expiresAt: number, now: number, recheckMs: number): number {
  return Math.max(1, Math.min(recheckMs, expiresAt - now + 1, MAX_TIMER_MS));
}

/**
 * Whether a failed check of a stream's token ends the stream: the auth check refused the token (unknown,
 * expired, revoked, its user disabled). A 5xx (the database is out) ends nothing: the next period checks again.
 */
export function endsSession(error: unknown): error is ApiError {
  return error instanceof ApiError && error.kind.status >= 400 && error.kind.status < 500;
}
