/** `npm run docs`: rewrites docs/errors.md and docs/openapi.json from the code. */
import { writeFileSync } from 'node:fs';
import { errorCatalogMarkdown, openApiJson } from '../src/docs/reference.js';

writeFileSync('docs/errors.md', errorCatalogMarkdown());
writeFileSync('docs/openapi.json', await openApiJson());
process.stderr.write('wrote docs/errors.md and docs/openapi.json\n');
