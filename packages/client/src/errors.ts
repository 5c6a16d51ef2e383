/** The two ways a call fails: the API answered with its error envelope, or no usable answer came. */
import { ERROR_CATALOG, type ErrorCode, type ErrorName } from './generated/error-catalog.js';
import type { ErrorEnvelope, FieldError } from './types.js';

const CODES: ReadonlySet<string> = new Set(Object.values(ERROR_CATALOG).map((entry) => entry.code));

/** The API refused the call: its HTTP status and the catalog code, message, field errors and request id it answered. */
export class OrdergateError extends Error {
  override readonly name = 'OrdergateError';
  /** The HTTP status (for a `stream_end` event, the status the code has in the catalog). */
  readonly status: number;
  /** The stable `e-NNN` code of the catalog (docs/errors.md). */
  readonly code: ErrorCode;
  /** Every field at fault: `field` is a dotted path (`scrip_info.symbol`, `orders[2].Price`) or a header name. */
  readonly errors: FieldError[];
  /** The server's id of the request (its `Request-Id` header): quote it when you report a problem. */
  readonly requestId: string;
  /** The answer's Retry-After, in seconds, when it had one (429, 503, 409 e-116). */
  readonly retryAfterSeconds: number | undefined;
  /**
   * The Idempotency-Key the failed call sent (an order-entry call that had one): pass it back as
   * `{ idempotencyKey }`, with the same arguments, to retry the same logical call (after a 409 `e-116` or
   * a 503, say) without any risk of entering the order twice.
   */
  readonly idempotencyKey?: string;

  constructor(
    status: number,
    envelope: ErrorEnvelope,
    retryAfterSeconds?: number,
    options: { idempotencyKey?: string } = {},
  ) {
    super(envelope.message);
    this.status = status;
    this.code = envelope.code as ErrorCode;
    this.errors = envelope.errors;
    this.requestId = envelope.request_id;
    this.retryAfterSeconds = retryAfterSeconds;
    if (options.idempotencyKey !== undefined) this.idempotencyKey = options.idempotencyKey;
  }

  /** True when this is the catalog's error of that name, e.g. `error.is('CART_PRECONDITION_FAILED')`. */
  is(name: ErrorName): boolean {
    return ERROR_CATALOG[name].code === this.code;
  }
}

/**
 * No answer of the API came: the connection failed or timed out (after the retries the call was allowed), or
 * what answered was not the API (a proxy's error page, a body that is not its JSON).
 */
export class OrdergateTransportError extends Error {
  override readonly name = 'OrdergateTransportError';
  /**
   * The Idempotency-Key the failed call sent (an order-entry call that had one). Whether its order was
   * entered is unknown: pass the key back as `{ idempotencyKey }`, with the same arguments, to retry the
   * same logical call; the server answers a repeat with the first call's answer and enters nothing twice.
   */
  readonly idempotencyKey?: string;

  constructor(
    message: string,
    /** The HTTP status, when something answered. */
    readonly status?: number,
    /** The `Request-Id` header, when the answer had one. */
    readonly requestId?: string,
    options: { cause?: unknown; idempotencyKey?: string } = {},
  ) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    if (options.idempotencyKey !== undefined) this.idempotencyKey = options.idempotencyKey;
  }
}

/** True for a body in the shape of the error envelope with a code of the catalog. */
export function isErrorEnvelope(body: unknown): body is ErrorEnvelope {
  if (typeof body !== 'object' || body === null) return false;
  const envelope = body as Record<string, unknown>;
  return (
    envelope.status === 'error' &&
    typeof envelope.code === 'string' &&
    CODES.has(envelope.code) &&
    typeof envelope.message === 'string' &&
    Array.isArray(envelope.errors) &&
    typeof envelope.request_id === 'string'
  );
}

/** The HTTP status the catalog gives a code. */
export function statusOfCode(code: ErrorCode): number {
  return Object.values(ERROR_CATALOG).find((entry) => entry.code === code)?.status ?? 500;
}
