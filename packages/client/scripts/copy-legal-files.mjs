// `prepack`: the repository's LICENSE and NOTICE into the package, so that the tarball carries them (Apache-2.0
// asks a distribution to carry both; packages/client/LICENSE and NOTICE are build products, ignored by git).
// Either missing at the repository's root, the package is packed without it, and this says so.
import { copyFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';

const PACKAGE = join(import.meta.dirname, '..');
const ROOT = join(PACKAGE, '..', '..');

for (const name of ['LICENSE', 'NOTICE']) {
  if (existsSync(join(ROOT, name))) copyFileSync(join(ROOT, name), join(PACKAGE, name));
  else process.stderr.write(`@ordergate/client: no ${join(ROOT, name)}; packing without a ${name} file\n`);
}
