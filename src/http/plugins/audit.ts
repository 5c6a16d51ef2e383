/**
 * The audit hooks: every request of an authenticated caller to an order-entry route (`config.auth:
 * 'order-entry'`) leaves one record, whatever its answer (2xx, 4xx, 5xx), except a 429 e-429 of the per-user
 * rate limit, so that the rows a user can add are bounded by that limit. A request whose caller was
 * not established (401, 403, or refused before authentication) is no user's, and leaves only its
 * access-log line: anyone could otherwise fill a table nobody may prune. The record is handed to the
 * batching AuditRecorder as the answer is sent; the request never waits for its write. Headers are never
 * stored (they carry the token and the API key); the body is stored as it arrived, or, when it has a
 * secret-named field anywhere, re-serialized with that field redacted; path and body are capped
 * (AUDIT_PATH_MAX_BYTES, AUDIT_BODY_MAX_BYTES), a cut one with the length and SHA-256 of the whole.
 */
import type { FastifyRequest } from 'fastify';
import { AUDIT_BODY_MAX_BYTES, AUDIT_PATH_MAX_BYTES, capText } from '../../domain/access/audit.js';
import { Errors } from '../../domain/errors.js';
import type { App } from '../app-type.js';
import type { AuditRecorder } from '../../services/audit.js';

/** Field names whose value is a credential, wherever they appear in a body (compared in lower case). */
const SECRET_FIELDS: ReadonlySet<string> = new Set([
  'password',
  'new_password',
  'second_auth',
  'api_key',
  'apikey',
  'x-api-key',
  'access_token',
  'refresh_token',
  'token',
  'secret',
  'totp_secret',
  'authorization',
]);

export const REDACTED = '[redacted]';

/** The value with every secret-named field, at any depth, replaced by "[redacted]". */
export function redactSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactSecrets);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, field]) => [
      key,
      SECRET_FIELDS.has(key.toLowerCase()) ? REDACTED : redactSecrets(field),
    ]),
  );
}

/** Whether a secret-named field appears anywhere in the value (without copying it). */
function hasSecretField(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(hasSecretField);
  if (value === null || typeof value !== 'object') return false;
  for (const [key, field] of Object.entries(value))
    if (SECRET_FIELDS.has(key.toLowerCase()) || hasSecretField(field)) return true;
  return false;
}

/** The body the trail keeps: as it arrived, unless a field must be redacted (then re-serialized without it). */
function storedBody(request: FastifyRequest): string | null {
  if (request.body === undefined || request.body === null) return null;
  if (hasSecretField(request.body) || request.rawBody === null) return JSON.stringify(redactSecrets(request.body));
  return storable(request.rawBody);
}

/** What the answer says that the trail keeps: its code and the order it created or named. */
function answerFacts(payload: unknown): { code: string | null; orderId: string | null } {
  if (typeof payload !== 'string' || !payload.startsWith('{')) return { code: null, orderId: null };
  try {
    const answer = JSON.parse(payload) as { code?: unknown; data?: { orderId?: unknown } | null };
    const orderId = answer.data !== null && typeof answer.data === 'object' ? answer.data.orderId : undefined;
    return {
      code: typeof answer.code === 'string' ? answer.code : null,
      orderId: typeof orderId === 'string' ? orderId : null,
    };
  } catch {
    return { code: null, orderId: null };
  }
}

const isOrderEntry = (request: FastifyRequest) => request.routeOptions.config?.auth === 'order-entry';

/** Text as sent, but without NUL (PostgreSQL refuses it in text; a path parameter may decode to it). */
function storable(text: string): string {
  return text.replaceAll('\u0000', '\uFFFD');
}

function param(request: FastifyRequest, name: string): string | null {
  const params = request.params as Record<string, unknown> | undefined;
  const value = params?.[name];
  return typeof value === 'string' ? storable(value) : null;
}

/**
 * Registers the hooks on the root app; call it before the authentication hook, so that the arrival time
 * is taken even for a request that authentication refuses.
 */
export function registerAuditHooks(app: App, recorder: AuditRecorder): void {
  const arrivals = new WeakMap<FastifyRequest, number>();
  recorder.reportFailuresTo(app.log);

  // Both hooks with callbacks, not promises: their work is synchronous, and they run on every request.
  app.addHook('onRequest', (request, _reply, done) => {
    if (isOrderEntry(request)) arrivals.set(request, recorder.now());
    done();
  });

  app.addHook('onSend', (request, reply, payload, done) => {
    if (!isOrderEntry(request) || request.caller === null) return done(null, payload);
    const { code, orderId } = answerFacts(payload);
    // A call the per-user rate limit refused did nothing and is not recorded: otherwise a user could add
    // rows as fast as the server answers 429s. Its trace is the access log's line (with its request id).
    if (code === Errors.RATE_LIMITED.code) return done(null, payload);
    const path = capText(storable(request.url), AUDIT_PATH_MAX_BYTES);
    const whole = storedBody(request);
    const body = whole === null ? null : capText(whole, AUDIT_BODY_MAX_BYTES);
    recorder.record({
      at: arrivals.get(request) ?? recorder.now(),
      requestId: request.id,
      userId: request.caller.userId,
      clientAddress: request.ip ?? '',
      method: request.method,
      route: storable(request.routeOptions.url ?? request.url),
      path: path.text,
      pathCut: path.cut,
      statusCode: reply.statusCode,
      code,
      orderId: param(request, 'order_id') ?? orderId,
      ordercartId: param(request, 'ordercartId'),
      body: body?.text ?? null,
      bodyCut: body?.cut ?? null,
    });
    done(null, payload);
  });

  // After the server has stopped answering: the last records are written before the store closes.
  app.addHook('onClose', async () => {
    await recorder.close();
  });
}
