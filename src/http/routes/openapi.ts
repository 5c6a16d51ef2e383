/** The OpenAPI document's frame; @fastify/swagger fills in the paths from the route schemas. */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Errors } from '../../domain/errors.js';
import { packageVersion } from '../../package-root.js';

/** The tag @fastify/swagger-ui's page lacks: without it a phone lays the page out 980 px wide and shrinks it. */
const VIEWPORT_META = '<meta name="viewport" content="width=device-width, initial-scale=1">';

/**
 * An onSend hook for the docs page's routes (registered beside @fastify/swagger-ui, in its own context):
 * the page's HTML, and it alone, gets the viewport tag after its charset. Its static files are streams and
 * pass untouched.
 */
export async function addViewportMeta(
  _request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
): Promise<unknown> {
  const type = reply.getHeader('content-type');
  if (typeof payload !== 'string' || typeof type !== 'string' || !type.startsWith('text/html')) return payload;
  if (payload.includes('name="viewport"')) return payload;
  return payload.replace(/<meta charset="UTF-8">/i, (charset) => `${charset}\n      ${VIEWPORT_META}`);
}

const catalogTable = Object.values(Errors)
  .map((kind) => `| ${kind.code} | ${kind.status} | ${kind.title.replace(/\|/g, '\\|')} |`)
  .join('\n');

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'ordergate',
    version: packageVersion(), // package.json's, as `ordergate --version` prints it
    description: [
      "OFS order entry and order carts, wire-compatible with the ODIN Cloud REST conventions. Log in (`POST /authentication/v1/user/session`), then send `Authorization: Bearer <access_token>`, and for order entry `x-api-key` too; the examples are the README's, on the demo issue of `ordergate demo`.",
      '',
      'Every failure answers `{"status":"error","code":"e-NNN","message":...,"errors":[{"field":...,"message":...}],"request_id":...}`; every code is listed below (collapsed: open it when you need it).',
      '',
      '<details><summary>Error codes (e-NNN)</summary>',
      '',
      '| code | HTTP | meaning |',
      '| --- | --- | --- |',
      catalogTable,
      '',
      '</details>',
    ].join('\n'),
  },
  components: {
    securitySchemes: {
      bearerAuth: { type: 'http', scheme: 'bearer', description: 'The access_token from the login call.' },
      apiKey: {
        type: 'apiKey',
        in: 'header',
        name: 'x-api-key',
        description: 'An API key from `ordergate apikeys create`.',
      },
    },
  },
} as const;
