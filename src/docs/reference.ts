/**
 * The generated reference documents: the error catalog (docs/errors.md) and the OpenAPI document
 * (docs/openapi.json), both built from the code so that they cannot drift from it.
 */
import { buildApp } from '../app.js';
import { Errors } from '../domain/errors.js';
import { openStore } from '../store/sql/database.js';
import { migrateToLatest } from '../store/schema/migrations.js';
import { createServices } from '../wiring.js';

export function errorCatalogMarkdown(): string {
  const rows = Object.entries(Errors)
    .map(([name, kind]) => `| \`${kind.code}\` | ${kind.status} | \`${name}\` | ${kind.title.replace(/\|/g, '\\|')} |`)
    .join('\n');
  return `# Error catalog

Generated from \`src/domain/errors.ts\` by \`npm run docs\`; do not edit by hand.

Every failure answers with its HTTP status and this body:

\`\`\`json
{"status":"error","code":"e-NNN","message":"...","errors":[{"field":"...","message":"..."}],"request_id":"..."}
\`\`\`

\`code\` is stable: a client may branch on it. \`message\` is for people and may be reworded. \`errors\` lists
every field at fault (\`field\` is a dotted path such as \`scrip_info.symbol\` or \`orders[2].Price\`, or a
header name such as \`x-api-key\`); \`request_id\` equals the \`Request-Id\` response header and identifies
the request in the server's logs.

Rules that need only the request are checked first and answer 400; rules that need stored data (the OFS
registry, the cart and its owner) answer 403, 404, 409, 412 or 422 after them.

| code | HTTP | name | meaning |
| --- | --- | --- | --- |
${rows}
`;
}

/** The OpenAPI document exactly as GET /openapi.json serves it. */
export async function openApiJson(): Promise<string> {
  const store = openStore('sqlite::memory:');
  await migrateToLatest(store);
  const app = buildApp(createServices(store, { tokenTtlSeconds: 86400 }), { logger: false });
  await app.ready();
  const document = app.swagger();
  await app.close();
  await store.close();
  return `${JSON.stringify(document, null, 2)}\n`;
}
