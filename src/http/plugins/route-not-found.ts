/**
 * A call that matches no route: 405 e-113 with an Allow header when its path is known (with another
 * method), else 404 e-109.
 */
import { Errors } from '../../domain/errors.js';
import type { App } from '../app-type.js';
import { sendError } from './errors.js';

/** Call it before any route is registered: it records which methods each path answers as routes are added. */
export function registerRouteNotFound(app: App): void {
  const routePatterns: { pattern: RegExp; method: string }[] = [];
  app.addHook('onRoute', (route) => {
    const pattern = new RegExp(
      `^${route.url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z_]+/g, '[^/]+')}$`,
    );
    for (const method of [route.method].flat()) routePatterns.push({ pattern, method });
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0] ?? '';
    const allowed = [...new Set(routePatterns.filter((r) => r.pattern.test(path)).map((r) => r.method))];
    if (allowed.length > 0) {
      reply.header('Allow', allowed.join(', '));
      return sendError(
        request,
        reply,
        Errors.METHOD_NOT_ALLOWED,
        `${path} does not accept ${request.method}; it accepts ${allowed.join(', ')}`,
      );
    }
    return sendError(request, reply, Errors.ROUTE_NOT_FOUND, `No endpoint for ${request.method} ${path}`);
  });
}
