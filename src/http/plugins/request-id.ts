/**
 * Every answer carries its request's id in the Request-Id header (an error envelope also in `request_id`),
 * so that a client can quote it and the logs and the audit trail can be searched by it.
 */
import type { App } from '../app-type.js';

export const REQUEST_ID_HEADER = 'Request-Id';

/** Sets the header first thing, so that an answer refused by any later hook carries it too. */
export function registerRequestIdHeader(app: App): void {
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    done();
  });
  // Node answers a request whose Expect header is not 100-continue by itself: 417, with no id and no body.
  // Such a request goes through Fastify like any other instead (RFC 9110 lets a server ignore an
  // expectation it does not know), so that its answer has an id, and the envelope when it is an error.
  app.server.on('checkExpectation', (request, response) => app.server.emit('request', request, response));
}
