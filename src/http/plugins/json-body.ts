/**
 * The one body parser: JSON only, within BODY_LIMIT_BYTES (Fastify also parses text/plain by default,
 * which our contract does not accept; any other media type answers 415). The text as it arrived is kept
 * in `request.rawBody` for the audit trail.
 */
import { isUtf8 } from 'node:buffer';
import { ApiError, Errors } from '../../domain/errors.js';
import { prototypeKeyIn } from '../../domain/json-safety.js';
import type { App } from '../app-type.js';

export const BODY_LIMIT_BYTES = 64 * 1024;

/** How deep a body may nest objects and arrays. Our bodies nest two or three levels. */
export const MAX_BODY_DEPTH = 32;

declare module 'fastify' {
  interface FastifyRequest {
    /** The JSON body as it arrived, once it parsed (the audit trail keeps it). */
    rawBody: string | null;
  }
}

/** Transfer-Encoding codings that frame a body: chunked must be the last one. */
const CHUNKED_LAST = /(?:^|,)[ \t]*chunked[ \t]*$/i;

export function registerJsonBodyParser(app: App): void {
  app.removeAllContentTypeParsers();
  app.decorateRequest('rawBody', null);
  // A Transfer-Encoding whose last coding is not chunked leaves the body's length unknown: Node then reads
  // the body until the client closes the connection, and the client, waiting for an answer, gets none
  // until the request timeout. RFC 9112 (6.3) has the server refuse such a request with 400 and close.
  app.addHook('preParsing', async (request, _reply, payload) => {
    const codings = request.headers['transfer-encoding'];
    if (codings === undefined || CHUNKED_LAST.test(codings)) return payload;
    const message = 'Transfer-Encoding must end with chunked; or send the body with a Content-Length';
    throw new ApiError(Errors.BAD_REQUEST, message, [{ field: 'transfer-encoding', message }], { Connection: 'close' });
  });
  // Fastify's parser (secure-json-parse) refuses a "__proto__" key and a "constructor" object holding
  // "prototype", at any depth, so that no later merge of the body can pollute a prototype.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  // A call without a body (validate, logout, delete) may still carry Content-Type: application/json, as
  // many clients send it on every call; a route that needs a body then answers e-102 from its schema.
  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (request, body, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== undefined && !UTF8.has(charset)) {
      const message = `The Content-Type names the charset ${JSON.stringify(charset)}; send the JSON body in UTF-8 (charset=utf-8, or no charset)`;
      return done(new ApiError(Errors.BODY_CHARSET, message, [{ field: 'content-type', message }]));
    }
    const bytes = body as Buffer;
    // Decoding would put U+FFFD in place of each bad byte, and the body would be stored other than sent.
    if (!isUtf8(bytes))
      return done(
        new ApiError(
          Errors.BODY_NOT_UTF8,
          'The body is not valid UTF-8: it holds a byte sequence UTF-8 does not allow',
        ),
      );
    const text = bytes.toString('utf8');
    if (text === '') return done(null, undefined);
    // Refused before parsing, so that nothing after it (the prototype-key report, the audit trail's
    // redaction, validation) walks a body deep enough to overflow the stack: one check for all of them.
    if (nestsDeeperThan(text, MAX_BODY_DEPTH)) {
      return done(
        new ApiError(Errors.BODY_TOO_DEEP, `The body nests objects and arrays more than ${MAX_BODY_DEPTH} levels deep`),
      );
    }
    // Fastify's own JSON parser answers through the callback (its type allows a promise; it returns none).
    void parseJson(request, text, (error: Error | null, value?: unknown) => {
      if (error !== null) return done(prototypeKeyRefusal(text) ?? error);
      request.rawBody = text;
      done(null, value);
    });
  });
}

/** The names UTF-8 goes by in a Content-Type's charset parameter. */
const UTF8 = new Set(['utf-8', 'utf8']);

/** The charset parameter of a Content-Type, lower-cased and unquoted; undefined when there is none. */
function charsetOf(contentType: string | undefined): string | undefined {
  const match = /;\s*charset\s*=\s*("?)([^";\s]*)\1/i.exec(contentType ?? '');
  return match === null ? undefined : match[2]!.toLowerCase();
}

/** Whether the text opens more than `limit` objects or arrays inside one another (strings skipped). */
function nestsDeeperThan(text: string, limit: number): boolean {
  // A text with no more than `limit` brackets cannot nest deeper: counted by indexOf (a few calls for a
  // bid's body), where the walk below takes about 20 instructions a character.
  if (bracketsAtMost(text, limit)) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // a backslash escapes the next character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x7b || c === 0x5b) {
      if (++depth > limit) return true;
    } else if (c === 0x7d || c === 0x5d) depth--;
  }
  return false;
}

/** Whether the text holds at most `limit` opening brackets (`{` and `[`, in strings or not). */
function bracketsAtMost(text: string, limit: number): boolean {
  let count = 0;
  for (const bracket of ['{', '[']) {
    for (let at = text.indexOf(bracket); at !== -1; at = text.indexOf(bracket, at + 1))
      if (++count > limit) return false;
  }
  return true;
}

/**
 * Fastify reports a body refused for a prototype key as invalid JSON. When the text is valid JSON, that key
 * was the cause: the refusal names it and where it is.
 */
function prototypeKeyRefusal(text: string): ApiError | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const field = prototypeKeyIn(value, '');
  if (field === undefined) return undefined;
  const message = `The body holds the key "${field}", which is refused (prototype pollution)`;
  return new ApiError(Errors.PROTOTYPE_KEY, message, [{ field, message: `${field} is refused (prototype pollution)` }]);
}
