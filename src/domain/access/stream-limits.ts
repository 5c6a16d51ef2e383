/**
 * How many long-lived connections a node holds (issue 12, finding 3): order-event streams (SSE) and live
 * order sockets share one budget, MAX_STREAMS_PER_USER for one user and MAX_STREAMS_PER_NODE for all users
 * together. A socket counts for the node and its user from its login; until then (at most its login deadline)
 * it holds a slot of a budget of its own, per node and per client address (MAX_PENDING_SOCKETS_PER_NODE,
 * MAX_PENDING_SOCKETS_PER_ADDRESS), so that connections that never log in cannot crowd traders out. And how long one lives: no longer
 * than the session it was opened with, whose token is checked again while it is open.
 */
import { ApiError } from '../errors.js';

export interface StreamCaps {
  /** Streams and sockets one user may hold open on one node. */
  streamsPerUser: number;
  /** Streams and logged-in sockets one node holds open, all users together. */
  streamsPerNode: number;
  /**
   * Socket connections not logged in yet (issue 21 row 1): a budget of their own, so that connections that
   * never log in cannot take a logged-in trader's place; per node, and per client address.
   */
  pendingSocketsPerNode: number;
  pendingSocketsPerAddress: number;
}

/** What a connection not yet logged in would add to: the node's pending count and its address's. */
export interface PendingHeld {
  onNode: number;
  byAddress: number;
}

/** Which pending cap refuses a new connection: its address's first (only that client can free it). */
export function pendingLimitReached(
  held: PendingHeld,
  caps: Pick<StreamCaps, 'pendingSocketsPerNode' | 'pendingSocketsPerAddress'>,
): 'address' | 'node' | null {
  if (held.byAddress >= caps.pendingSocketsPerAddress) return 'address';
  if (held.onNode >= caps.pendingSocketsPerNode) return 'node';
  return null;
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
