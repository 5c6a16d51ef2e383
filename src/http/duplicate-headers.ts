/**
 * One value per header that names the caller or the request. Node keeps the first of two `Authorization`
 * headers and joins two `Idempotency-Key`s with ", ": a proxy or log that reads the other one would
 * disagree about who called, or which request this is. Such a request is refused (400 e-121) before
 * anything else reads its headers.
 */
import { ApiError, Errors } from '../domain/errors.js';
import type { App } from './app-type.js';

/** The headers that must come once (lower case). */
export const SINGLE_HEADERS: ReadonlySet<string> = new Set(['authorization', 'x-api-key', 'idempotency-key', 'last-event-id', 'if-match', 'content-type']);

/** The first header of SINGLE_HEADERS that the raw header list (name, value, name, value, ...) holds more than once. */
export function repeatedHeader(rawHeaders: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i]!.toLowerCase();
    if (!SINGLE_HEADERS.has(name)) continue;
    if (seen.has(name)) return name;
    seen.add(name);
  }
  return undefined;
}

export function registerDuplicateHeaderCheck(app: App): void {
  app.addHook('onRequest', async (request) => {
    const name = repeatedHeader(request.raw.rawHeaders);
    if (name === undefined) return;
    const message = `The ${name} header is sent more than once; send it once`;
    throw new ApiError(Errors.DUPLICATE_HEADER, message, [{ field: name, message: 'sent more than once' }]);
  });
}
