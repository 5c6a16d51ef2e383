/** Wire shapes of /authentication/v1/user/session (ODIN login, validate, logout). */
import Type, { type Static } from 'typebox';
import { Errors } from '../domain/errors.js';
import { MessageList, SuccessEnvelope, withCode } from './common.js';

const OptionalText = (description: string) =>
  Type.Optional(Type.Union([Type.String({ maxLength: 256 }), Type.Null()], { description }));

export const LoginRequest = Type.Object(
  {
    user_id: Type.String({ minLength: 1, maxLength: 64 }),
    login_type: withCode(
      Errors.INVALID_VALUE,
      Type.Literal('PASSWORD', { description: 'Only PASSWORD is supported.' }),
    ),
    password: Type.String({ minLength: 1, maxLength: 256 }),
    second_auth_type: OptionalText('e.g. TOTP; may be absent, empty or null for a user without TOTP.'),
    second_auth: OptionalText('The 6-digit TOTP code for a user enrolled in TOTP.'),
    api_key: OptionalText('When sent and not empty, must be an active API key of this user.'),
    source: Type.Optional(Type.String({ maxLength: 64, description: 'Any client label, e.g. WEBAPI.' })),
  },
  {
    additionalProperties: false,
    description: 'ODIN login body.',
    // The demo user of `ordergate demo`; api_key is the key it prints.
    examples: [
      {
        user_id: 'demo',
        login_type: 'PASSWORD',
        password: 'ordergate-demo',
        second_auth_type: '',
        second_auth: '',
        api_key: 'the api_key printed by ordergate demo',
        source: 'WEBAPI',
      },
    ],
  },
);
export type LoginRequest = Static<typeof LoginRequest>;

export const SessionData = Type.Object(
  {
    access_token: Type.String({ description: 'Send as Authorization: Bearer <access_token>.' }),
    token_type: Type.Literal('Bearer'),
    user_id: Type.String(),
    expires_at: Type.String({ format: 'date-time' }),
    others: Type.Object(
      {
        messageSocket: Type.String({
          format: 'uri',
          description:
            'The base URL of the live order socket: connect Socket.IO (websocket transport, default path /socket.io/) to it, then emit `loginAPI` with `{"jToken": "<access_token>"}`; your order changes arrive as `MSG:DATA` messages under ODIN\'s field names and codes. The same host and port as this call.',
          examples: ['http://127.0.0.1:8080'],
        }),
      },
      { additionalProperties: false, description: 'Where to receive live order updates, as ODIN names it.' },
    ),
  },
  { additionalProperties: false },
);

export const LoginResponse = SuccessEnvelope(SessionData, 'Login successful');

export const ValidateResponse = SuccessEnvelope(
  Type.Object(
    { user_id: Type.String(), expires_at: Type.String({ format: 'date-time' }) },
    { additionalProperties: false },
  ),
  'Session is valid',
);

export const LogoutResponse = SuccessEnvelope(MessageList, 'Logged out successfully');
