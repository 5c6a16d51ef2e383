/** POST / PUT / DELETE /authentication/v1/user/session: login, validate, logout. */
import { Errors } from '../domain/errors.js';
import { LoginRequest, LoginResponse, LogoutResponse, ValidateResponse } from '../schemas/session.js';
import type { AuthService } from '../services/auth.js';
import type { App } from './app-type.js';
import { callerOf } from './authentication.js';
import { BODY_ERRORS, errorResponses, success, TOKEN_ERRORS } from './responses.js';

export const SESSION_PATH = '/authentication/v1/user/session';
const tags = ['session'];
const bearer = [{ bearerAuth: [] }];

export function registerSessionRoutes(app: App, auth: AuthService): void {
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
            Errors.LOGIN_API_KEY_INVALID,
            Errors.RATE_LIMITED,
          ),
        },
      },
    },
    async (request) => {
      const result = await auth.login(request.body);
      return success('Login successful', {
        access_token: result.accessToken,
        token_type: 'Bearer' as const,
        user_id: result.userId,
        expires_at: new Date(result.expiresAt).toISOString(),
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
      return success('Session is valid', { user_id: caller.userId, expires_at: new Date(caller.expiresAt).toISOString() });
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
      return success('Logged out successfully', [{ message: 'success' }]);
    },
  );
}
