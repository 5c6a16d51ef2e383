/**
 * One value per header that names the caller or the request. Node keeps the first of two `Authorization`
 * headers and joins two `Idempotency-Key`s with ", ": a proxy or log that reads the other one would
 * disagree about who called, or which request this is. Such a request is refused (400 e-121) before
 * anything else reads its headers.
 */
import { ApiError, Errors } from '../../domain/errors.js';
import type { App } from '../app-type.js';

/** The headers that must come once (lower case). */
export const SINGLE_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'x-api-key',
  'idempotency-key',
  'last-event-id',
  'if-match',
  'content-type',
]);

/**
 * The lengths of SINGLE_HEADERS' names. A header name is a token of ASCII characters, so lower-casing keeps
 * its length: most of a request's headers (host, content-length, user-agent...) are passed over without
 * being lower-cased, one of the request path's larger string costs.
 */
const SINGLE_HEADER_LENGTHS: ReadonlySet<number> = new Set([...SINGLE_HEADERS].map((name) => name.length));

/** The first header of SINGLE_HEADERS that the raw header list (name, value, name, value, ...) holds more than once. */
export function repeatedHeader(rawHeaders: readonly string[]): string | undefined {
  let seen: Set<string> | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const raw = rawHeaders[i]!;
    if (!SINGLE_HEADER_LENGTHS.has(raw.length)) continue;
    const name = raw.toLowerCase();
    if (!SINGLE_HEADERS.has(name)) continue;
    if (seen?.has(name)) return name;
    (seen ??= new Set()).add(name);
  }
  return undefined;
}

/** A hook with a callback, not a promise: it runs on every request, and mostly finds nothing. */
export function registerDuplicateHeaderCheck(app: App): void {
  app.addHook('onRequest', (request, _reply, done) => {
    const name = repeatedHeader(request.raw.rawHeaders);
    if (name === undefined) return done();
    const message = `The ${name} header is sent more than once; send it once`;
    done(new ApiError(Errors.DUPLICATE_HEADER, message, [{ field: name, message: 'sent more than once' }]));
  });
}
