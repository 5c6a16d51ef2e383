/** Route-level helpers: the success envelope and the documented error answers of each route. */
import { Errors, type ErrorKind } from '../domain/errors.js';
import { ErrorEnvelope, SUCCESS_CODE } from '../schemas/common.js';

export function success<T>(message: string, data: T, code: string = SUCCESS_CODE) {
  return { status: 'success' as const, code, message, data };
}

/** A page of a list: `data` the list, `metadata` its count on all pages and which page it is. */
export function page<T, M>(message: string, { data, metadata }: { data: T; metadata: M }) {
  return { status: 'success' as const, code: SUCCESS_CODE, message, data, metadata };
}

/**
 * The error responses a route documents: one entry per HTTP status, listing the catalog codes it can
 * answer with. Every route can also answer what any request may get: a body it was sent that is not JSON
 * within the limits, a malformed request, one too slow or with headers too large, and 500/503.
 */
export function errorResponses(...kinds: ErrorKind[]) {
  const all = [
    ...kinds,
    ...UNWANTED_BODY_ERRORS,
    Errors.BAD_REQUEST,
    // Every route: a NUL or a lone surrogate in its path, query or body (http/plugins/storable-strings.ts).
    Errors.STRING_NOT_STORABLE,
    Errors.REQUEST_TIMEOUT,
    Errors.HEADERS_TOO_LARGE,
    Errors.DUPLICATE_HEADER,
    Errors.INTERNAL,
    Errors.UNAVAILABLE,
  ];
  const byStatus = new Map<number, string[]>();
  for (const kind of all) byStatus.set(kind.status, [...(byStatus.get(kind.status) ?? []), kind.code]);
  const responses: Record<number, typeof ErrorEnvelope> = {};
  for (const [status, codes] of byStatus) {
    responses[status] = {
      ...ErrorEnvelope,
      description: `Error envelope; code is one of ${[...new Set(codes)].join(', ')}`,
    } as typeof ErrorEnvelope;
  }
  return responses;
}

export const BODY_ERRORS = [
  Errors.MALFORMED_JSON,
  Errors.PROTOTYPE_KEY,
  Errors.BODY_TOO_DEEP,
  Errors.BODY_REQUIRED,
  Errors.FIELD_REQUIRED,
  Errors.WRONG_TYPE,
  Errors.UNKNOWN_FIELD,
  Errors.INVALID_VALUE,
  Errors.BODY_TOO_LARGE,
  Errors.UNSUPPORTED_MEDIA_TYPE,
  Errors.BODY_NOT_UTF8,
  Errors.BODY_CHARSET,
];
/** A call without a body may still be sent one: it must then be JSON within the size limit. */
export const UNWANTED_BODY_ERRORS = [
  Errors.MALFORMED_JSON,
  Errors.PROTOTYPE_KEY,
  Errors.BODY_TOO_DEEP,
  Errors.BODY_TOO_LARGE,
  Errors.UNSUPPORTED_MEDIA_TYPE,
  Errors.BODY_NOT_UTF8,
  Errors.BODY_CHARSET,
];
export const TOKEN_ERRORS = [Errors.TOKEN_MISSING, Errors.TOKEN_INVALID, Errors.TOKEN_EXPIRED, Errors.TOKEN_REVOKED];
/** Order entry: the token and the API key, then the per-user rate limit (429). */
export const ORDER_ENTRY_AUTH_ERRORS = [
  ...TOKEN_ERRORS,
  Errors.API_KEY_MISSING,
  Errors.API_KEY_INVALID,
  Errors.API_KEY_OTHER_USER,
  Errors.API_KEY_ADDRESS,
  Errors.RATE_LIMITED,
];
