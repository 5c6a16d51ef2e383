/**
 * SEBI's rules for API and algo orders (circular SEBI/HO/MIRSD/MIRSD-PoD/P/CIR/2025/0000013 of 4 February
 * 2025, NSE's implementation standards of 5 May 2025; docs/design/sebi-algo.md) as plain functions: the
 * algo ID an order carries, the threshold of orders a second per user and exchange segment, and the kill
 * switch. The registry's rows, the counting and the cancellations are the services' and the store's.
 */
import { ApiError, Errors } from '../errors.js';

/** The exchange segments ordergate routes to: an algo ID is registered with one of them. */
export const ALGO_SEGMENTS = ['NSE_EQ', 'BSE_EQ'] as const;
export type AlgoSegment = (typeof ALGO_SEGMENTS)[number];

const isSegment = (text: string): text is AlgoSegment => (ALGO_SEGMENTS as readonly string[]).includes(text);

/**
 * An algo ID as the exchanges issue them and as ordergate registers them: 1 to 32 letters, digits, `_`, `-`
 * or `.` (no spaces, commas or `=`, which the settings and the CLI use as separators).
 */
export const ALGO_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,31}$/;

/** The exchanges' generic algo IDs, one per segment (ALGO_GENERIC_ID): stamped on orders of no registered algo. */
export type GenericAlgoIds = Readonly<Record<AlgoSegment, string>>;

/**
 * ALGO_GENERIC_ID's text: one ID for every segment (`ID`), or one per segment (`NSE_EQ=ID1,BSE_EQ=ID2`,
 * every segment named once). Answers the IDs, or why the text is not one.
 */
export function parseGenericAlgoIds(text: string): GenericAlgoIds | string {
  if (!text.includes('=')) {
    if (!ALGO_ID_PATTERN.test(text))
      return `must be an algo ID (1 to 32 letters, digits, _ - .) or NSE_EQ=ID,BSE_EQ=ID, got "${text}"`;
    return { NSE_EQ: text, BSE_EQ: text };
  }
  const ids: Partial<Record<AlgoSegment, string>> = {};
  for (const part of text.split(',')) {
    const [segment = '', id = '', ...rest] = part.split('=');
    if (!isSegment(segment) || rest.length > 0 || !ALGO_ID_PATTERN.test(id) || ids[segment] !== undefined) {
      return `must be NSE_EQ=ID,BSE_EQ=ID (each segment once, IDs of 1 to 32 letters, digits, _ - .), got "${text}"`;
    }
    ids[segment] = id;
  }
  const missing = ALGO_SEGMENTS.filter((segment) => ids[segment] === undefined);
  if (missing.length > 0) return `names no generic algo ID for ${missing.join(' and ')}, got "${text}"`;
  return ids as GenericAlgoIds;
}

/** `NSE_EQ=ID1,BSE_EQ=ID2`: the IDs as ALGO_GENERIC_ID writes them. */
export const genericAlgoIdsText = (ids: GenericAlgoIds) =>
  ALGO_SEGMENTS.map((segment) => `${segment}=${ids[segment]}`).join(',');

/** An algo registered with an exchange (by the broker, for its users), as the registry keeps it. */
export interface AlgoRegistration {
  algoId: string;
  /** The exchange segment that issued the ID: orders on another segment may not carry it. */
  exchange: AlgoSegment;
  /** The exchange's approval reference (its circular or letter), for the audit. */
  approvalRef: string;
  name: string | null;
  /** The users who may send orders with it. */
  userIds: readonly string[];
  registeredAt: number;
  /** When the kill switch stopped it (null: it runs), and why. */
  disabledAt: number | null;
  disabledReason: string | null;
}

/** The algo ID an order carries, once judged, and whether it is a registered algo's (which the threshold exempts). */
export interface OrderAlgo {
  algoId: string | null;
  registered: boolean;
}

/** The registration's faults, as the operator's command reports them. */
export function registrationViolations(
  registration: Pick<AlgoRegistration, 'algoId' | 'approvalRef' | 'userIds'> & { exchange: string },
  generic: GenericAlgoIds | null,
): string[] {
  const faults: string[] = [];
  if (!ALGO_ID_PATTERN.test(registration.algoId))
    faults.push(`the algo ID must hold 1 to 32 letters, digits, _ - . (got "${registration.algoId}")`);
  if (!isSegment(registration.exchange))
    faults.push(`the exchange must be ${ALGO_SEGMENTS.join(' or ')} (got "${registration.exchange}")`);
  if (generic !== null && Object.values(generic).includes(registration.algoId))
    faults.push(`${registration.algoId} is a generic algo ID (ALGO_GENERIC_ID), not an algo's`);
  if (registration.approvalRef.trim() === '' || registration.approvalRef.length > 200)
    faults.push("the exchange's approval reference must hold 1 to 200 characters");
  if (registration.userIds.length === 0) faults.push('name at least one user who runs the algo (--user)');
  return faults;
}

/** Whether `userId` may send orders with the registered algo on `exchange`. */
const mayUse = (registration: AlgoRegistration, userId: string, exchange: string) =>
  registration.exchange === exchange && registration.userIds.includes(userId);

function unknownAlgo(algoId: string, exchange: string): ApiError {
  // Another user's algo answers exactly like one that does not exist: an algo ID tells nothing of others.
  return new ApiError(
    Errors.ALGO_ID_UNKNOWN,
    `algo_id ${algoId} is not an algo registered for you on ${exchange}, nor the exchange's generic algo ID`,
    [
      {
        field: 'algo_id',
        message: 'not a registered algo ID of yours on this exchange; send none for the generic one',
      },
    ],
  );
}

/** The refusal of an order whose algo the kill switch stopped. */
export function algoDisabled(registration: AlgoRegistration): ApiError {
  const why = registration.disabledReason === null ? '' : ` (${registration.disabledReason})`;
  return new ApiError(
    Errors.ALGO_DISABLED,
    `Algo ${registration.algoId} is stopped by the kill switch${why}: its orders are refused until it is enabled again`,
    [{ field: 'algo_id', message: 'the algo is stopped' }],
  );
}

/**
 * The algo ID a new order carries. With the rules on (`generic` set): none sent, or the segment's generic
 * ID, stamps the generic ID; an ID registered for the caller on the order's segment is kept; anything else
 * is refused (e-601), and a stopped algo's ID too (e-602). With the rules off, an ID is stored as sent (ODIN
 * clients send their own tags), but a stopped registered algo is refused all the same: the kill switch
 * does not depend on a setting.
 */
export function orderAlgo(
  sent: string | null,
  exchange: string,
  userId: string,
  generic: GenericAlgoIds | null,
  registration: AlgoRegistration | undefined,
): OrderAlgo {
  const genericId = generic !== null && isSegment(exchange) ? generic[exchange] : null;
  if (sent === null || sent === genericId) return { algoId: genericId, registered: false };
  if (
    registration !== undefined &&
    registration.disabledAt !== null &&
    (generic === null || mayUse(registration, userId, exchange))
  ) {
    throw algoDisabled(registration);
  }
  if (registration !== undefined && mayUse(registration, userId, exchange)) return { algoId: sent, registered: true };
  if (generic !== null) throw unknownAlgo(sent, exchange);
  return { algoId: sent, registered: false };
}

/**
 * Inside the order's transaction: an order (new or modified) whose algo the kill switch has stopped since
 * is refused. `registration` is the algo's row as the transaction read (and, on PostgreSQL, share-locked) it.
 */
export function killSwitchViolations(registration: AlgoRegistration | undefined): ApiError | null {
  return registration !== undefined && registration.disabledAt !== null ? algoDisabled(registration) : null;
}

/** Whether an order carrying `algoId` is a registered algo's in use by its owner (the threshold exempts it). */
export function isRegisteredAlgoOrder(
  algoId: string | null,
  userId: string,
  exchange: string,
  registration: AlgoRegistration | undefined,
): boolean {
  return (
    algoId !== null &&
    registration !== undefined &&
    registration.disabledAt === null &&
    mayUse(registration, userId, exchange)
  );
}

/** The window of the threshold: orders a second. */
export const THRESHOLD_WINDOW_MS = 1000;

/** The counting key of a user's orders in one exchange segment (shared by every node through Redis). */
export const thresholdKey = (userId: string, exchange: string) => `algo-ops:${exchange}:${userId}`;

/**
 * The refusal of an order over the threshold without a registered algo ID: not queued, retried after the
 * oldest order of the last second leaves it.
 */
export function thresholdRefusal(max: number, exchange: string, resetMs: number): ApiError {
  const seconds = Math.max(1, Math.ceil(resetMs / 1000));
  return new ApiError(
    Errors.ALGO_THRESHOLD,
    `You have sent ${max} orders in the last second on ${exchange}: past that, SEBI's rules take only orders of a registered algo (algo_id); this one is refused, retry after ${seconds} s`,
    [{ field: 'algo_id', message: `more than ${max} orders a second on ${exchange} need a registered algo ID` }],
    { 'Retry-After': String(seconds) },
  );
}

/** The reason an order's history gives for a cancellation by the kill switch. */
export const killSwitchReason = (algoId: string, reason: string) =>
  `Cancelled by the kill switch of algo ${algoId}: ${reason}`;

/** The actor the order history names for the kill switch's cancellations. */
export const KILL_SWITCH_ACTOR = 'kill-switch';

/** The faults of a reason the operator gives (the kill switch's, an enabling's): one line of 1 to 200 characters. */
export function reasonViolations(reason: string): string[] {
  return reason.trim() === '' || reason.length > 200 || /[\u0000-\u001f\u007f]/.test(reason)
    ? ['the reason must hold 1 to 200 characters on one line']
    : [];
}
