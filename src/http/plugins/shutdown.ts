/**
 * A graceful shutdown (SIGTERM, app.close()): requests already running finish; a new one on a kept-alive
 * connection is turned away with 503 e-503 and Retry-After (Fastify adds Connection: close), and the
 * client retries on another node or later. Fastify's own 503 body is turned off (return503OnClosing).
 */
import { ApiError, Errors } from '../../domain/errors.js';
import type { OrderEventsService } from '../../services/order-events.js';
import type { App } from '../app-type.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from './errors.js';

export function registerShutdown(app: App, orderEvents: OrderEventsService): void {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  // Open event streams are not idle connections: end them before the server waits for its connections.
  app.addHook('preClose', async () => {
    await orderEvents.close();
  });
  // An answer sent once the shutdown has begun closes its connection: a kept-alive connection would
  // otherwise hold the server open (close() waits for it) until the client's keep-alive runs out.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('Connection', 'close');
    done(null, payload);
  });
  app.addHook('onRequest', (_request, _reply, done) => {
    if (!closing) return done();
    done(
      new ApiError(Errors.UNAVAILABLE, 'The server is shutting down; retry shortly', [], {
        'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
      }),
    );
  });
}
