/** pino, with every secret the service handles redacted wherever it might appear in a log line. */
import pino, { type Logger } from 'pino';

export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers.cookie',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.password',
  '*.second_auth',
  '*.api_key',
  '*.access_token',
  'password',
  'api_key',
  'access_token',
];

export function createLogger(level: string, destination: pino.DestinationStream = pino.destination(2)): Logger {
  return pino({ level, redact: { paths: REDACTED_PATHS, censor: '[redacted]' } }, destination);
}
