/** The OpenAPI document's frame; @fastify/swagger fills in the paths from the route schemas. */
import { Errors } from '../../domain/errors.js';

const catalogTable = Object.values(Errors)
  .map((kind) => `| ${kind.code} | ${kind.status} | ${kind.title.replace(/\|/g, '\\|')} |`)
  .join('\n');

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'ordergate',
    version: '0.1.0',
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
