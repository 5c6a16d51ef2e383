/**
 * One rule for every request (docs/design/security.md): a string no store keeps as sent (NUL, a lone UTF-16
 * surrogate: src/domain/json-safety.ts) is refused with 400 e-125 wherever it comes, the path's parameters,
 * the query or the body, before any route reads it. PostgreSQL refuses NUL in text and fails the whole
 * transaction, which order entry shares between users (the group commit): one user's byte must never cost
 * another a bid, and SQLite, which would keep it, answers the same.
 */
import { ApiError, Errors } from '../../domain/errors.js';
import { unstorableCharacterIn, unstorableStringIn } from '../../domain/json-safety.js';
import type { App } from '../app-type.js';

function refusal(field: string, where: string, character: string): ApiError {
  const message = `${where} holds ${character}, which is not taken: send the text without it`;
  return new ApiError(Errors.STRING_NOT_STORABLE, message, [{ field, message }]);
}

/** The first parameter or query value with an unstorable character, as a refusal; undefined when none. */
function inStrings(values: unknown, part: 'path' | 'query'): ApiError | undefined {
  if (values === null || typeof values !== 'object') return undefined;
  for (const [name, value] of Object.entries(values)) {
    for (const text of [name, ...(Array.isArray(value) ? value : [value])]) {
      if (typeof text !== 'string') continue;
      const character = unstorableCharacterIn(text);
      if (character !== null) return refusal(name, `the ${part} parameter ${name}`, character);
    }
  }
  return undefined;
}

export function registerStorableStrings(app: App): void {
  app.addHook('preValidation', (request, _reply, done) => {
    const refused = inStrings(request.params, 'path') ?? inStrings(request.query, 'query');
    if (refused !== undefined) return done(refused);
    // A JSON text can hold either character only as a \u escape: a body without one needs no walk.
    if (request.rawBody?.includes('\\u') === true) {
      const found = unstorableStringIn(request.body);
      if (found !== undefined)
        return done(refusal(found.field, found.field === '' ? 'the body' : found.field, found.character));
    }
    done();
  });
}
