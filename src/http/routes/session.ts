/** POST / PUT / DELETE /authentication/v1/user/session: login, validate, logout. */
import type { FastifyRequest } from 'fastify';
import { Errors } from '../../domain/errors.js';
import { NoQuery } from '../../schemas/common.js';
import { ProfileResponse } from '../../schemas/ofs.js';
import { LoginRequest, LoginResponse, LogoutResponse, ValidateResponse } from '../../schemas/session.js';
import type { AuthService } from '../../services/auth.js';
import type { App } from '../app-type.js';
import { callerOf } from '../plugins/authentication.js';
import { BODY_ERRORS, errorResponses, success, TOKEN_ERRORS } from '../responses.js';

export const SESSION_PATH = '/authentication/v1/user/session';
export const PROFILE_PATH = '/authentication/v1/user/profile';
const tags = ['session'];
const bearer = [{ bearerAuth: [] }];

/** A Host header that can stand in a URL: a name or an IPv4 address, or an IPv6 one in brackets, and a port. */
const URL_HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?$/;

/**
 * The live order socket's URL: PUBLIC_URL when the operator set one (a server behind TLS or a proxy, which
 * this process cannot see), else as this caller reached the server: the login's protocol and Host header
 * (the socket listens on the same port), or the address the connection came in on when the Host is unusable.
 */
function messageSocketUrl(request: FastifyRequest, publicUrl: string | null): string {
  if (publicUrl !== null) return publicUrl;
  const host = request.host;
  if (URL_HOST.test(host)) return `${request.protocol}://${host}`;
  const address = request.socket.localAddress ?? '127.0.0.1';
  return `${request.protocol}://${address.includes(':') ? `[${address}]` : address}:${request.socket.localPort}`;
}

export function registerSessionRoutes(
  app: App,
  auth: AuthService,
  publicUrl: string | null = null,
  onLogout: () => void = () => undefined,
): void {
  app.post(
    SESSION_PATH,
    {
      schema: {
        tags,
        summary: 'Log in with a user id, a password and a second factor; answers an access token',
        body: LoginRequest,
        response: {
          200: LoginResponse,
          ...errorResponses(
            ...BODY_ERRORS,
            Errors.LOGIN_FAILED,
            Errors.SECOND_FACTOR_REQUIRED,
            Errors.SECOND_FACTOR_INVALID,
            Errors.SECOND_FACTOR_NOT_ENROLLED,
            Errors.SECOND_FACTOR_LOCKED,
            Errors.LOGIN_API_KEY_INVALID,
            Errors.LOGIN_API_KEY_REQUIRED,
            Errors.API_KEY_ADDRESS,
            Errors.USER_DISABLED,
            Errors.RATE_LIMITED,
          ),
        },
      },
    },
    async (request) => {
      const result = await auth.login(request.body, request.ip);
      return success('Login successful', {
        access_token: result.accessToken,
        token_type: 'Bearer' as const,
        user_id: result.userId,
        expires_at: new Date(result.expiresAt).toISOString(),
        others: { messageSocket: messageSocketUrl(request, publicUrl) },
      });
    },
  );

  app.put(
    SESSION_PATH,
    {
      config: { auth: 'token' },
      schema: {
        tags,
        summary: 'Check that the access token is valid',
        security: bearer,
        response: { 200: ValidateResponse, ...errorResponses(...TOKEN_ERRORS) },
      },
    },
    async (request) => {
      const caller = callerOf(request);
      return success('Session is valid', {
        user_id: caller.userId,
        expires_at: new Date(caller.expiresAt).toISOString(),
      });
    },
  );

  app.delete(
    SESSION_PATH,
    {
      config: { auth: 'token' },
      schema: {
        tags,
        summary: 'Log out: the access token is revoked at once',
        security: bearer,
        response: { 200: LogoutResponse, ...errorResponses(...TOKEN_ERRORS) },
      },
    },
    async (request) => {
      await auth.logout(callerOf(request));
      // This node's event streams and order sockets of the session end at once; the others' within a second.
      onLogout();
      return success('Logged out successfully', [{ message: 'success' }]);
    },
  );

  app.get(
    PROFILE_PATH,
    {
      config: { auth: 'token' },
      schema: {
        tags,
        summary: "The caller's user id, OFS categories, margin type and whether they are an operator",
        description:
          'A console reads it after login: `operator` says whether the operator book (GET /operator/v1/ofs/{exchange}/{scrip_token}/book) will answer.',
        security: bearer,
        querystring: NoQuery,
        response: { 200: ProfileResponse, ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_QUERY) },
      },
    },
    async (request) => {
      const profile = await auth.profile(callerOf(request));
      return success('Profile fetched successfully', {
        user_id: profile.userId,
        category: profile.category,
        offer_category: profile.offerCategory,
        margin_type: profile.marginType,
        operator: profile.operator,
      });
    },
  );
}
