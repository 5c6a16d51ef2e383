/**
 * The Idempotency-Key header of order-entry calls (docs/design/idempotency.md). A route opts in with
 * `config: { idempotent: true }` and `headers: IdempotencyKeyHeaders` (the schema checks the header:
 * 400 e-114). After authentication and validation, a preHandler claims the caller's key or answers what
 * it holds (a replay with `Idempotent-Replayed: true`, 422 e-115, 409 e-116); onSend keeps the answer
 * (200, 422) or frees the key, before the answer leaves. A route that can write its answer in the
 * transaction of its change passes `answerInTransaction(...)` to its service.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import Type from 'typebox';
import { Errors } from '../../domain/errors.js';
import { IDEMPOTENCY_KEY_PATTERN } from '../../domain/orders/idempotency.js';
import { withCode } from '../../schemas/common.js';
import type { AnswerInTransaction, ClaimedKey, IdempotencyService, KeptSteps } from '../../services/idempotency.js';
import type { App } from '../app-type.js';
import { callerOf } from './authentication.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route takes an Idempotency-Key header. */
    idempotent?: boolean;
  }
  interface FastifyRequest {
    idempotency: HeldKeyOfRequest | null;
  }
}

interface HeldKeyOfRequest {
  claim: ClaimedKey;
  service: IdempotencyService;
  /** The body already kept in the transaction of the change, if the route did so. */
  keptInTransaction: string | null;
}

export const IDEMPOTENCY_KEY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'Idempotent-Replayed';
/** Headers of an answer that a replay repeats, besides status and body. */
const KEPT_HEADERS = ['etag'];

export const IdempotencyKeyHeaders = Type.Object({
  [IDEMPOTENCY_KEY_HEADER]: Type.Optional(
    withCode(
      Errors.IDEMPOTENCY_KEY_INVALID,
      Type.String({
        pattern: IDEMPOTENCY_KEY_PATTERN,
        description:
          'Optional; 1 to 255 printable ASCII characters, unique per request of yours (a UUID, say). Within 24 hours a retry with the same key and the same body (equal as JSON) gets the first answer again (a 200 or a 422), marked `Idempotent-Replayed: true`, and changes nothing; the same key with another request: 422 e-115; while the first is still running: 409 e-116.',
      }),
    ),
  ),
});

/** The error codes an idempotent route adds to its answers. */
export const IDEMPOTENCY_ERRORS = [
  Errors.IDEMPOTENCY_KEY_INVALID,
  Errors.IDEMPOTENCY_KEY_REUSED,
  Errors.IDEMPOTENCY_KEY_RUNNING,
];

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(', ') : value;
}

/**
 * For a route whose service writes the answer with its change: the answer to keep, from the change's
 * result (serialized as the route serializes it). Undefined when the request has no key.
 */
export function answerInTransaction<T>(
  request: FastifyRequest,
  reply: FastifyReply,
  answer: (result: T) => unknown,
): AnswerInTransaction<T> | undefined {
  const held = request.idempotency;
  if (held === null) return undefined;
  return held.service.answerInTransaction<T>(held.claim, (result) => {
    const body = reply.serialize(answer(result)) as string;
    held.keptInTransaction = body;
    return { statusCode: 200, body, headers: {} };
  });
}

/**
 * For a route whose service makes several changes, each in its own transaction (cart execute): the steps
 * its runs keep under the key. Undefined when the request has no key.
 */
export function keptSteps(request: FastifyRequest): KeptSteps | undefined {
  const held = request.idempotency;
  return held === null ? undefined : held.service.keptSteps(held.claim);
}

export function registerIdempotency(app: App, idempotency: IdempotencyService): void {
  app.decorateRequest('idempotency', null);

  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.config.idempotent !== true) return;
    const key = headerValue(request.headers[IDEMPOTENCY_KEY_HEADER]);
    if (key === undefined) return;
    const outcome = await idempotency.claim(callerOf(request).userId, key, {
      method: request.method,
      path: request.url.split('?')[0] ?? '',
      body: request.body,
    });
    if (outcome.kind === 'claimed') {
      request.idempotency = { claim: outcome.claim, service: idempotency, keptInTransaction: null };
      return;
    }
    const { statusCode, body, headers } = outcome.answer;
    return reply
      .code(statusCode)
      .headers(headers)
      .header(REPLAYED_HEADER, 'true')
      .type('application/json; charset=utf-8')
      .send(body);
  });

  app.addHook('onSend', async (request, reply, payload) => {
    const held = request.idempotency;
    if (held === null) return payload;
    request.idempotency = null;
    if (reply.statusCode === 200 && held.keptInTransaction !== null && held.keptInTransaction === payload) {
      held.service.stopRenewing(held.claim);
      return payload;
    }
    const headers: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = reply.getHeader(name);
      if (value !== undefined) headers[name] = String(value);
    }
    // An answer that is not a string (no route here sends one) cannot be replayed: the key is freed.
    const statusCode = typeof payload === 'string' ? reply.statusCode : 500;
    try {
      await idempotency.finish(held.claim, { statusCode, body: typeof payload === 'string' ? payload : '', headers });
    } catch (error) {
      // The answer stands; the key stays held until its lease ends, then a retry runs again.
      request.log.error({ err: error }, 'could not keep the answer of an idempotency key');
    }
    return payload;
  });
}
