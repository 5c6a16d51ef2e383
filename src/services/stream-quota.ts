/**
 * The slots of one node's long-lived connections (src/domain/access/stream-limits.ts): the order-event stream and
 * the live order socket take one each from the same quota (OrderEventsService.streams) and give it back the
 * moment they close, whatever closed them.
 */
import { ApiError, Errors } from '../domain/errors.js';
import { pendingLimitReached, streamLimitReached, type StreamCaps } from '../domain/access/stream-limits.js';
import type { StreamUsage } from '../metrics/operator-metrics.js';

/** What a refused stream is asked to wait before it tries again, in seconds. */
export const STREAM_RETRY_AFTER_SECONDS = 5;

/** One open stream's place in the quota. */
export interface StreamSlot {
  /**
   * Counts the stream as the user's from now on (a socket at its login, or at a login of another user), or
   * throws the 429 when the user holds the cap already; it is then counted for no user.
   */
  assign(userId: string): void;
  /** Gives the slot back; idempotent. */
  release(): void;
}

export class StreamQuota {
  private onNode = 0;
  private readonly byUser = new Map<string, number>();
  /** Socket connections not logged in yet: their own budget, per node and per client address. */
  private pending = 0;
  private readonly pendingByAddress = new Map<string, number>();
  /** Streams refused since start, by the cap that refused them (the operator's metrics read them). */
  private refusedForUser = 0;
  private refusedForNode = 0;
  private refusedPendingForAddress = 0;
  private refusedPendingForNode = 0;

  constructor(private readonly caps: StreamCaps) {}

  /** How many streams and sockets are open on this node, and how many the caps refused so far. */
  usage(): StreamUsage {
    return {
      open: this.onNode,
      refusedForUser: this.refusedForUser,
      refusedForNode: this.refusedForNode,
      pending: this.pending,
      refusedPendingForAddress: this.refusedPendingForAddress,
      refusedPendingForNode: this.refusedPendingForNode,
    };
  }

  /** Throws the refusal of one more connection not logged in from `address` (nothing is taken), or returns. */
  checkPending(address: string): void {
    this.refusePendingOver(
      pendingLimitReached({ onNode: this.pending, byAddress: this.pendingByAddress.get(address) ?? 0 }, this.caps),
      address,
    );
  }

  /**
   * A slot for a socket connection not logged in yet, from the pending budget (issue 21 row 1); throws its
   * 429 (the address's cap) or 503 (the node's). Its first `assign` (the login) moves it into the node's
   * streams, where the node's and the user's caps may refuse it; until then it takes no logged-in
   * trader's place.
   */
  openPending(address: string): StreamSlot {
    this.checkPending(address);
    this.pending += 1;
    this.pendingByAddress.set(address, (this.pendingByAddress.get(address) ?? 0) + 1);
    let promoted: StreamSlot | null = null;
    let released = false;
    const leavePending = () => {
      this.pending -= 1;
      const left = (this.pendingByAddress.get(address) ?? 1) - 1;
      if (left > 0) this.pendingByAddress.set(address, left);
      else this.pendingByAddress.delete(address);
    };
    return {
      assign: (user) => {
        if (released) return;
        if (promoted !== null) return promoted.assign(user);
        // Throws (the node's or the user's cap) and the connection stays pending, to be refused and closed.
        promoted = this.open(user);
        leavePending();
      },
      release: () => {
        if (released) return;
        released = true;
        if (promoted !== null) promoted.release();
        else leavePending();
      },
    };
  }

  private refusePendingOver(limit: ReturnType<typeof pendingLimitReached>, address: string): void {
    const headers = { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) };
    if (limit === 'address') {
      this.refusedPendingForAddress += 1;
      throw new ApiError(
        Errors.RATE_LIMITED,
        `Your address ${address} holds ${this.caps.pendingSocketsPerAddress} live order socket connections that have not logged in, the most one address may; log one in or close it, then retry`,
        [],
        headers,
      );
    }
    if (limit === 'node') {
      this.refusedPendingForNode += 1;
      throw new ApiError(
        Errors.UNAVAILABLE,
        `This node holds ${this.caps.pendingSocketsPerNode} live order socket connections that have not logged in, the most it takes; retry after ${STREAM_RETRY_AFTER_SECONDS} s`,
        [],
        headers,
      );
    }
  }

  /**
   * A slot for a new stream, counted for the node and, when `userId` is given, for that user; throws the 429
   * (the user's cap) or the 503 (the node's) when the stream may not open.
   */
  open(userId?: string): StreamSlot {
    this.refuseOver(
      streamLimitReached({ onNode: this.onNode, byUser: userId === undefined ? null : this.heldBy(userId) }, this.caps),
    );
    this.onNode += 1;
    let owner: string | null = null;
    let released = false;
    const slot: StreamSlot = {
      assign: (user) => {
        if (released || owner === user) return;
        if (owner !== null) this.forget(owner);
        owner = null;
        // This stream is on the node already: only the user's count can refuse it.
        this.refuseOver(streamLimitReached({ onNode: this.onNode - 1, byUser: this.heldBy(user) }, this.caps));
        owner = user;
        this.byUser.set(user, this.heldBy(user) + 1);
      },
      release: () => {
        if (released) return;
        released = true;
        this.onNode -= 1;
        if (owner !== null) this.forget(owner);
        owner = null;
      },
    };
    if (userId !== undefined) slot.assign(userId);
    return slot;
  }

  private heldBy(userId: string): number {
    return this.byUser.get(userId) ?? 0;
  }

  private forget(userId: string): void {
    const held = this.heldBy(userId) - 1;
    if (held > 0) this.byUser.set(userId, held);
    else this.byUser.delete(userId);
  }

  private refuseOver(limit: ReturnType<typeof streamLimitReached>): void {
    const headers = { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) };
    if (limit === 'user') {
      this.refusedForUser += 1;
      throw new ApiError(
        Errors.RATE_LIMITED,
        `You already hold ${this.caps.streamsPerUser} order-event streams and live order sockets on this node, the most one user may; close one, then retry`,
        [],
        headers,
      );
    }
    if (limit === 'node') {
      this.refusedForNode += 1;
      throw new ApiError(
        Errors.UNAVAILABLE,
        `This node holds ${this.caps.streamsPerNode} order-event streams and live order sockets, the most it takes; retry after ${STREAM_RETRY_AFTER_SECONDS} s`,
        [],
        headers,
      );
    }
  }
}
