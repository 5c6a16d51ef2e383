/**
 * The security headers of every answer (Content-Security-Policy, X-Content-Type-Options, X-Frame-Options,
 * Strict-Transport-Security and the rest), as helmet sets them for its options, worked out by helmet once at
 * start-up and then given to each reply as one fixed set.
 *
 * @fastify/helmet, which this replaced, rebuilds helmet's middleware from its options for every request and
 * sets each header on the raw response: 4.6 % of a SQLite node's CPU at saturation (CPU profile, 2026-11-28),
 * for headers that never change. Per-route policies are the routes' own: the docs page (@fastify/swagger-ui's
 * `staticCSP`) and the web console (its onSend hook) set their Content-Security-Policy over this one.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import helmet, { type HelmetOptions } from 'helmet';
import type { FastifyInstance } from 'fastify';

/** The headers (lower-case names) that helmet's middleware sets for `options`. */
export function securityHeaders(options: Readonly<HelmetOptions>): Readonly<Record<string, string>> {
  // A directive given as a function (a nonce) is helmet's one per-request header: a fixed set cannot hold it.
  const csp = options.contentSecurityPolicy;
  const directives = typeof csp === 'object' && csp !== null ? Object.values(csp.directives ?? {}) : [];
  if (
    directives.some(
      (value) =>
        typeof value === 'function' || (Array.isArray(value) && value.some((part) => typeof part === 'function')),
    )
  ) {
    throw new Error(
      'securityHeaders: a Content-Security-Policy directive given as a function changes per request; a fixed set cannot carry it',
    );
  }
  const headers: Record<string, string> = {};
  const response = {
    setHeader(name: string, value: string | number) {
      headers[name.toLowerCase()] = String(value);
    },
    // X-Powered-By, which Fastify never sets.
    removeHeader() {},
  };
  let failure: unknown = undefined;
  helmet(options)({} as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    failure = error;
  });
  // eslint-disable-next-line @typescript-eslint/only-throw-error -- helmet's error (an Error), as it came
  if (failure !== undefined) throw failure;
  return Object.freeze(headers);
}

/** Every answer carries `securityHeaders(options)`: first among the hooks, so that a refusal by a later one does too. */
export function registerSecurityHeaders(app: FastifyInstance, options: Readonly<HelmetOptions>): void {
  const headers = securityHeaders(options);
  app.addHook('onRequest', (_request, reply, done) => {
    reply.headers(headers);
    done();
  });
}
