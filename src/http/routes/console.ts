/**
 * The web console at /console/: the files `scripts/build-console.ts` bundles into dist/console/, served by
 * @fastify/static. Its answers carry their own Content-Security-Policy (scripts, styles and calls from this
 * server only, no inline script); every other answer keeps the API's `default-src 'none'` from helmet.
 * index.html is revalidated on every load and names the assets by their content hash, so those are cached
 * for a year. None of it is in the OpenAPI document.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import fastifyStatic from '@fastify/static';
import { PACKAGE_ROOT } from '../../package-root.js';
import type { FastifyInstance } from 'fastify';

/** dist/console/ from both src/http/ (tsx) and dist/http/ (npm start). */
export const CONSOLE_ROOT = join(PACKAGE_ROOT, 'dist', 'console');

export const CONSOLE_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'self'; frame-ancestors 'none'; object-src 'none'";

/** esbuild names the bundled assets `app-<hash>.js`, `app-<hash>.css`: their name changes with their content. */
const HASHED_ASSET = /-[A-Z0-9]{8}\.(js|css)$/;

export async function consoleRoutes(app: FastifyInstance): Promise<void> {
  if (!existsSync(join(CONSOLE_ROOT, 'index.html'))) {
    app.log.warn({ root: CONSOLE_ROOT }, 'the web console is not built (npm run build): /console/ answers 404');
    return;
  }
  // In this plugin's scope only: after helmet's onRequest hook has set the API's policy.
  app.addHook('onSend', async (_request, reply) => {
    reply.header('content-security-policy', CONSOLE_CSP);
  });
  app.get('/console', { schema: { hide: true } }, (_request, reply) => reply.redirect('/console/', 301));
  await app.register(fastifyStatic, {
    root: CONSOLE_ROOT,
    prefix: '/console/',
    schemaHide: true,
    dotfiles: 'ignore',
    cacheControl: false,
    setHeaders(response, path) {
      response.setHeader('cache-control', HASHED_ASSET.test(path) ? 'public, max-age=31536000, immutable' : 'no-cache');
    },
  });
}
