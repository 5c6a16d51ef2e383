/**
 * The one error handler: every failure (ours, a schema's, Fastify's own, an unexpected one) leaves as the
 * error envelope `{status, code, message, errors, request_id}` with a code of the catalog
 * (src/domain/errors.ts). Messages of 5xx answers never show the cause.
 */
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { timeOrderedId } from '../../ids.js';
import { countDatabaseUnavailable } from '../../metrics/http-requests.js';
import { ApiError, Errors, type ErrorKind, type FieldError, DatabaseUnavailableError } from '../../domain/errors.js';
import { violationsOf } from '../../schemas/validator.js';
import { BODY_LIMIT_BYTES } from './json-body.js';
import { REQUEST_ID_HEADER } from './request-id.js';

/** What a 503 for a database outage asks the client to wait before it tries again, in seconds. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  kind: ErrorKind,
  message: string,
  errors: FieldError[] = [],
) {
  return reply
    .code(kind.status)
    .type('application/json; charset=utf-8')
    .send({ status: 'error', code: kind.code, message, errors, request_id: request.id });
}

const VALIDATION_CONTEXT_KIND: Record<string, ErrorKind> = {
  querystring: Errors.INVALID_QUERY,
  headers: Errors.INVALID_HEADER,
};

/** Schema failures that name no code of their own. */
const GENERIC_SCHEMA_KINDS: ReadonlySet<ErrorKind> = new Set([
  Errors.FIELD_REQUIRED,
  Errors.WRONG_TYPE,
  Errors.UNKNOWN_FIELD,
  Errors.INVALID_VALUE,
]);

/** Fastify's own errors (parsing, limits) -> our catalog. */
function frameworkErrorKind(error: FastifyError): ErrorKind | undefined {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return Errors.UNSUPPORTED_MEDIA_TYPE;
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return Errors.BODY_TOO_LARGE;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return Errors.BODY_REQUIRED;
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return Errors.MALFORMED_JSON;
  }
  if (error instanceof SyntaxError) return Errors.MALFORMED_JSON;
  if (error.statusCode === 429) return Errors.RATE_LIMITED;
  return undefined;
}

const FRAMEWORK_MESSAGES: Partial<Record<string, string>> = {
  [Errors.UNSUPPORTED_MEDIA_TYPE.code]: 'Send the body as JSON with Content-Type: application/json',
  [Errors.BODY_TOO_LARGE.code]: `The body is larger than ${BODY_LIMIT_BYTES} bytes`,
  [Errors.BODY_REQUIRED.code]: 'This call needs a JSON object body',
  [Errors.MALFORMED_JSON.code]: 'The body is not valid JSON',
};

/**
 * Errors Node raises before there is a request (a request that did not arrive in time, headers too large,
 * a malformed request line): answered in our envelope, with a request id, and the connection closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  // A request read whole before on this connection may still be running (a body sent after a DELETE
  // without a Content-Length is read as a next, malformed request): its answer leaves first. Else the
  // client would take this refusal for the answer to that request, which was carried out. (A request still
  // arriving, cut off by the request timeout, is the one refused: it is answered at once.)
  const running = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (running && !running.writableFinished && running.req.complete) {
    running.once('close', () => answerClientError(error, socket));
    return;
  }
  const kind =
    error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? Errors.REQUEST_TIMEOUT
      : error.code === 'HPE_HEADER_OVERFLOW'
        ? Errors.HEADERS_TOO_LARGE
        : Errors.BAD_REQUEST;
  const requestId = timeOrderedId();
  const body = JSON.stringify({
    status: 'error',
    code: kind.code,
    message: kind.title,
    errors: [],
    request_id: requestId,
  });
  socket.end(
    `HTTP/1.1 ${kind.status} ${STATUS_TEXT[kind.status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\n${REQUEST_ID_HEADER}: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  431: 'Request Header Fields Too Large',
};

/** The error handler of every route and hook. */
export function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  if (error instanceof ApiError) {
    reply.headers(error.headers);
    return sendError(request, reply, error.kind, error.message, error.errors);
  }
  if (error.validation) {
    const context = error.validationContext ?? 'body';
    const violations = violationsOf(error.validation as never);
    if (context === 'params') {
      // A path parameter that cannot name anything: the resource is not there. A parameter schema
      // tagged with a code (e.g. the cart id) answers that code; any other answers "no endpoint".
      const tagged = violations.find((v) => !GENERIC_SCHEMA_KINDS.has(v.kind))?.kind;
      const path = request.url.split('?')[0] ?? '';
      const kind = tagged ?? Errors.ROUTE_NOT_FOUND;
      const message = tagged ? tagged.title : `No endpoint for ${request.method} ${path}`;
      return sendError(
        request,
        reply,
        kind,
        message,
        violations.map(({ field }) => ({ field, message })),
      );
    }
    const contextKind = VALIDATION_CONTEXT_KIND[context];
    if (contextKind) {
      // A header or query schema tagged with a code of its own (e.g. Idempotency-Key) answers that code.
      const tagged = violations.find((v) => !GENERIC_SCHEMA_KINDS.has(v.kind))?.kind;
      return sendError(
        request,
        reply,
        tagged ?? contextKind,
        violations[0]?.message ?? error.message,
        violations.map(({ field, message }) => ({ field, message })),
      );
    }
    const bodyMissing =
      violations.length === 1 && violations[0]!.field === '' && (request.body === undefined || request.body === null);
    if (bodyMissing) return sendError(request, reply, Errors.BODY_REQUIRED, 'This call needs a JSON object body');
    const apiError = ApiError.fromViolations(violations);
    return sendError(request, reply, apiError.kind, apiError.message, apiError.errors);
  }
  const kind = frameworkErrorKind(error);
  if (kind) return sendError(request, reply, kind, FRAMEWORK_MESSAGES[kind.code] ?? error.message);
  if (error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 500) {
    return sendError(request, reply, Errors.BAD_REQUEST, error.message);
  }
  // The database cannot be reached (or used) right now: a retry may succeed, so 503 and Retry-After.
  if (error instanceof DatabaseUnavailableError) {
    request.log.warn({ err: error }, 'database unavailable');
    countDatabaseUnavailable(request);
    reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
    return sendError(
      request,
      reply,
      Errors.UNAVAILABLE,
      'The database cannot be reached right now; retry after Retry-After seconds',
    );
  }
  request.log.error({ err: error }, 'unhandled error');
  return sendError(request, reply, Errors.INTERNAL, 'Internal error; quote the request_id when you report it');
}

/**
 * Errors raised before routing (a bad URL encoding, an over-long path parameter): Fastify's
 * `frameworkErrors` option, which runs before any hook, so the Request-Id header is set here.
 */
export function answerRoutingError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header(REQUEST_ID_HEADER, request.id);
  const kind = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? Errors.ROUTE_NOT_FOUND : Errors.BAD_REQUEST;
  void sendError(request, reply, kind, error.message);
}
