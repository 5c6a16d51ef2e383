/**
 * Every answer carries its request's id in the Request-Id header (an error envelope also in `request_id`),
 * so that a client can quote it and the logs and the audit trail can be searched by it.
 */
import type { App } from './app-type.js';

export const REQUEST_ID_HEADER = 'Request-Id';

/** Sets the header first thing, so that an answer refused by any later hook carries it too. */
export function registerRequestIdHeader(app: App): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
}
