/**
 * The client's generated sources, built from the server's generated reference documents so that its types
 * cannot drift from the API: the OpenAPI types (docs/openapi.json, by openapi-typescript) and the error
 * catalog (docs/errors.md). `scripts/generate.ts` writes them; a test fails when a written one is stale.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import openapiTS, { astToString, COMMENT_HEADER } from 'openapi-typescript';

export const CLIENT_ROOT = join(import.meta.dirname, '..');
const REPO_ROOT = join(CLIENT_ROOT, '..', '..');
const OPENAPI_DOCUMENT = join(REPO_ROOT, 'docs', 'openapi.json');
const ERROR_CATALOG = join(REPO_ROOT, 'docs', 'errors.md');

/** Paths (relative to packages/client) and their contents. */
export type GeneratedSources = Record<string, string>;

async function openApiTypes(): Promise<string> {
  const ast = await openapiTS(JSON.parse(readFileSync(OPENAPI_DOCUMENT, 'utf8')) as Parameters<typeof openapiTS>[0]);
  return `${COMMENT_HEADER}// From docs/openapi.json by \`npx tsx packages/client/scripts/generate.ts\`.\n\n${astToString(ast)}`;
}

/** The rows of docs/errors.md's table: | `e-101` | 400 | `MALFORMED_JSON` | meaning | */
function errorCatalog(): string {
  const rows = [
    ...readFileSync(ERROR_CATALOG, 'utf8').matchAll(/^\| `(e-\d{3})` \| (\d{3}) \| `([A-Z0-9_]+)` \| (.*) \|$/gm),
  ];
  if (rows.length === 0) throw new Error(`no error codes found in ${ERROR_CATALOG}`);
  const entries = rows.map(
    ([, code, status, name, meaning]) =>
      `  /** ${meaning!.replace(/\\\|/g, '|').replace(/\*\//g, '*\\/')} */\n  ${name}: { code: '${code}', status: ${status} },`,
  );
  return `/**
 * This file was generated from docs/errors.md by \`npx tsx packages/client/scripts/generate.ts\`.
 * Do not make direct changes to the file.
 */

/** Every error code of the server's catalog, by name, with its HTTP status. */
export const ERROR_CATALOG = {
${entries.join('\n')}
} as const;

export type ErrorName = keyof typeof ERROR_CATALOG;

/** A stable \`e-NNN\` code of the catalog: a client may branch on it. */
export type ErrorCode = (typeof ERROR_CATALOG)[ErrorName]['code'];
`;
}

export async function generatedSources(): Promise<GeneratedSources> {
  return {
    'src/generated/openapi.ts': await openApiTypes(),
    'src/generated/error-catalog.ts': errorCatalog(),
  };
}
