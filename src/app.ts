/**
 * The Fastify app: external plugins, then the one error handler and the auth hook, then the routes.
 * Fastify defaults that clash with the contract are turned off here: no type coercion, JSON bodies only,
 * and every error (404, 413, 415, malformed JSON, validation) leaves through our one envelope.
 */
import { timeOrderedId } from './ids.js';
import helmet from '@fastify/helmet';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { ApiError, Errors, type ErrorKind, type FieldError } from './domain/errors.js';
import { registerAuditHooks } from './http/audit.js';
import { registerOrderEventRoutes } from './http/events.js';
import { registerIdempotency } from './http/idempotency.js';
import { registerOrderCartRoutes } from './http/ordercart.js';
import { registerOrderRoutes } from './http/orders.js';
import { RATE_LIMITS_OFF, registerRateLimits, type RateLimitOptions } from './http/rate-limit.js';
import { registerSessionRoutes } from './http/session.js';
import { openApiDocument } from './http/openapi.js';
import { createAjv, violationsOf } from './schemas/validator.js';
import type { AuditRecorder } from './services/audit.js';
import type { AuthService, Caller } from './services/auth.js';
import type { OrderBookService } from './services/order-book.js';
import type { OrderCartService } from './services/order-carts.js';
import type { OrderEventsService } from './services/order-events.js';
import type { IdempotencyService } from './services/idempotency.js';
import type { OrderEntryService } from './services/order-entry.js';
import { isDatabaseUnavailable } from './store/database.js';

/** Who may call a route: nobody in particular, a logged-in user, or a user with token and API key. */
export type AuthLevel = 'none' | 'token' | 'order-entry';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthLevel;
  }
  interface FastifyRequest {
    caller: Caller | null;
    /** The JSON body as it arrived, once it parsed (the audit trail keeps it). */
    rawBody: string | null;
  }
}

export interface AppServices {
  auth: AuthService;
  orderEntry: OrderEntryService;
  orderBook: OrderBookService;
  orderCarts: OrderCartService;
  orderEvents: OrderEventsService;
  idempotency: IdempotencyService;
  audit: AuditRecorder;
}

export const BODY_LIMIT_BYTES = 64 * 1024;

/** What a 503 for a database outage asks the client to wait before it tries again, in seconds. */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 1;

export type App = FastifyInstance<
  import('node:http').Server,
  import('node:http').IncomingMessage,
  import('node:http').ServerResponse,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;

/** The caller of an authenticated route; the auth hook has set it. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.caller === null) throw new ApiError(Errors.TOKEN_MISSING);
  return request.caller;
}

function sendError(request: FastifyRequest, reply: FastifyReply, kind: ErrorKind, message: string, errors: FieldError[] = []) {
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
 * One access-log line per request at info, when it completes (method, URL, status and time), instead of
 * Fastify's two: the line of the arrival, with the request serialized and redacted, cost order entry a
 * twentieth of its CPU. It is logged at debug.
 */
class AccessLog extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null, request: FastifyRequest, reply: FastifyReply): void {
    const line = { method: request.method, url: request.url, res: reply, responseTime: reply.elapsedTime };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/** `rateLimits`: the call limits (off when absent, as in tests and benchmarks). */
export function buildApp(services: AppServices, options: { logger: FastifyBaseLogger | boolean; rateLimits?: RateLimitOptions }): App {
  const ajv = createAjv();
  const app = Fastify({
    ...(typeof options.logger === 'boolean' ? { logger: options.logger } : { loggerInstance: options.logger }),
    bodyLimit: BODY_LIMIT_BYTES,
    // Time-ordered ids: the audit trail and the order history index them, and random keys would scatter
    // every commit's index writes over the whole B-tree.
    genReqId: () => timeOrderedId(),
    // During shutdown new requests get 503 e-503 in our envelope (the onRequest hook below), not
    // Fastify's own 503 body.
    return503OnClosing: false,
    forceCloseConnections: 'idle',
    logController: new AccessLog(),
    routerOptions: { ignoreTrailingSlash: false, maxParamLength: 200 },
    // Errors raised before routing (a bad URL encoding, an over-long path parameter) get our envelope too.
    frameworkErrors: (error, request, reply) => {
      reply.header('Request-Id', request.id);
      const kind = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? Errors.ROUTE_NOT_FOUND : Errors.BAD_REQUEST;
      void sendError(request, reply, kind, error.message);
    },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;

  app.setValidatorCompiler(({ schema }) => ajv.compile(schema));

  // JSON only: Fastify also parses text/plain by default, which our contract does not accept.
  app.removeAllContentTypeParsers();
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // A call without a body (validate, logout, delete) may still carry Content-Type: application/json, as
  // many clients send it on every call; a route that needs a body then answers e-102 from its schema.
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') return done(null, undefined);
    parseJson(request, body as string, (error: Error | null, value?: unknown) => {
      if (error === null) request.rawBody = body as string;
      done(error, value);
    });
  });

  app.decorateRequest('caller', null);
  app.decorateRequest('rawBody', null);

  registerAuditHooks(app, services.audit);

  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // An answer sent once the shutdown has begun closes its connection: a kept-alive connection would
  // otherwise hold the server open (close() waits for it) until the client's keep-alive runs out.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });

  app.addHook('onRequest', async (request, reply) => {
    reply.header('Request-Id', request.id);
    // Shutting down (SIGTERM): requests already running finish; a new one on a kept-alive connection is
    // turned away (Fastify adds Connection: close), and the client retries on another node or later.
    if (closing) throw new ApiError(Errors.UNAVAILABLE, 'The server is shutting down; retry shortly', [], { 'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS) });
    const level = request.routeOptions.config.auth ?? 'none';
    if (level === 'none') return;
    if (level === 'order-entry') {
      const apiKey = request.headers['x-api-key'];
      request.caller = await services.auth.authenticateWithApiKey(request.headers.authorization, Array.isArray(apiKey) ? apiKey[0] : apiKey);
    } else {
      request.caller = await services.auth.authenticate(request.headers.authorization);
    }
  });
  // Right after auth, so that order entry is counted per caller before any later hook (Idempotency-Key).
  registerRateLimits(app, options.rateLimits ?? RATE_LIMITS_OFF);

  app.setErrorHandler((error: FastifyError, request, reply) => {
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
        return sendError(request, reply, kind, message, violations.map(({ field }) => ({ field, message })));
      }
      const contextKind = VALIDATION_CONTEXT_KIND[context];
      if (contextKind) {
        // A header or query schema tagged with a code of its own (e.g. Idempotency-Key) answers that code.
        const tagged = violations.find((v) => !GENERIC_SCHEMA_KINDS.has(v.kind))?.kind;
        return sendError(request, reply, tagged ?? contextKind, violations[0]?.message ?? error.message, violations.map(({ field, message }) => ({ field, message })));
      }
      const bodyMissing = violations.length === 1 && violations[0]!.field === '' && (request.body === undefined || request.body === null);
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
    if (isDatabaseUnavailable(error)) {
      request.log.warn({ err: error }, 'database unavailable');
      reply.header('Retry-After', String(UNAVAILABLE_RETRY_AFTER_SECONDS));
      return sendError(request, reply, Errors.UNAVAILABLE, 'The database cannot be reached right now; retry after Retry-After seconds');
    }
    request.log.error({ err: error }, 'unhandled error');
    return sendError(request, reply, Errors.INTERNAL, 'Internal error; quote the request_id when you report it');
  });

  // Which methods each path answers, so that a known path with the wrong method gets 405 and an Allow header.
  const routePatterns: { pattern: RegExp; method: string }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(`^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`);
    for (const method of [route.method].flat()) routePatterns.push({ pattern, method });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...new Set(routePatterns.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendError(request, reply, Errors.METHOD_NOT_ALLOWED, `${path} does not accept ${request.method}; it accepts ${allowed.join(', ')}`);
    }
    return sendError(request, reply, Errors.ROUTE_NOT_FOUND, `No endpoint for ${request.method} ${path}`);
  });

  // Open event streams are not idle connections: end them before the server waits for its connections.
  app.addHook('preClose', async () => {
    await services.orderEvents.close();
  });

  app.register(helmet, { contentSecurityPolicy: false });
  app.register(swagger, { openapi: openApiDocument });
  app.register(swaggerUi, { routePrefix: '/docs' });

  registerIdempotency(app, services.idempotency);

  app.register(async (routes) => {
    const typed = routes as unknown as App;
    registerSessionRoutes(typed, services.auth);
    registerOrderRoutes(typed, services.orderEntry, services.orderBook);
    registerOrderCartRoutes(typed, services.orderCarts);
    registerOrderEventRoutes(typed, services.orderEvents);
    typed.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  });

  return app;
}
