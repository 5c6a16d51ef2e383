/**
 * Who is calling: each route names the credentials it needs (`config.auth`), and an onRequest hook checks
 * them and sets `request.caller` before anything else reads the request. A route handler takes the caller
 * with `callerOf(request)`.
 */
import type { FastifyRequest } from 'fastify';
import { ApiError, Errors } from '../../domain/errors.js';
import type { AuthService, Caller } from '../../services/auth.js';
import type { App } from '../app-type.js';

/** Who may call a route: nobody in particular, a logged-in user, or a user with token and API key. */
export type AuthLevel = 'none' | 'token' | 'order-entry';

declare module 'fastify' {
  interface FastifyContextConfig {
    auth?: AuthLevel;
  }
  interface FastifyRequest {
    caller: Caller | null;
  }
}

/** The caller of an authenticated route; the auth hook has set it. */
export function callerOf(request: FastifyRequest): Caller {
  if (request.caller === null) throw new ApiError(Errors.TOKEN_MISSING);
  return request.caller;
}

/** The auth hook: a refused credential throws its 401/403 before the body is read. */
export function registerAuthentication(app: App, auth: AuthService): void {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request) => {
    const level = request.routeOptions.config.auth ?? 'none';
    if (level === 'none') return;
    if (level === 'order-entry') {
      const apiKey = request.headers['x-api-key'];
      request.caller = await auth.authenticateWithApiKey(
        request.headers.authorization,
        Array.isArray(apiKey) ? apiKey[0] : apiKey,
        request.ip,
      );
    } else {
      request.caller = await auth.authenticate(request.headers.authorization);
    }
  });
}
