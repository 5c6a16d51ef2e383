/** Regenerates packages/client/src/generated/ from docs/: `npx tsx packages/client/scripts/generate.ts`. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CLIENT_ROOT, generatedSources } from './generated-sources.js';

for (const [path, text] of Object.entries(await generatedSources())) {
  writeFileSync(join(CLIENT_ROOT, path), text);
  process.stdout.write(`wrote packages/client/${path}\n`);
}
