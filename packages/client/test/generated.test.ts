/** The client's types come from the server's documents: a stale generated file fails here. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { CLIENT_ROOT, generatedSources } from '../scripts/generated-sources.js';

it('src/generated/ is what docs/openapi.json and docs/errors.md give (run `npx tsx packages/client/scripts/generate.ts` after `npm run docs`)', async () => {
  for (const [path, text] of Object.entries(await generatedSources())) {
    expect(readFileSync(join(CLIENT_ROOT, path), 'utf8'), path).toBe(text);
  }
});
