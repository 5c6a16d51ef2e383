// `npm run build` (and `prepack`, so that `npm pack` always ships code): dist/ afresh from src/ with
// tsconfig.build.json (ES modules, .d.ts declarations, source maps with their sources inlined), then a check
// that the main entry stays browser-safe: no module reachable from dist/index.js imports a `node:` module or
// anything outside the package (it has no dependencies). The webhook check, which needs node:crypto, is the
// separate entry dist/webhooks.js.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';

const PACKAGE = join(import.meta.dirname, '..');
const DIST = join(PACKAGE, 'dist');

rmSync(DIST, { recursive: true, force: true });
// The repository's TypeScript (the package has no dependencies of its own, dev ones included).
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const compiled = spawnSync(process.execPath, [tsc, '-p', join(PACKAGE, 'tsconfig.build.json')], { stdio: 'inherit' });
if (compiled.status !== 0) process.exit(compiled.status ?? 1);

/** The specifiers a module imports or re-exports, statically or dynamically. */
const specifiers = (code) => [...code.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)].map((m) => m[1]);

const seen = new Set();
const faults = [];
const visit = (file) => {
  if (seen.has(file)) return;
  seen.add(file);
  for (const specifier of specifiers(readFileSync(file, 'utf8'))) {
    const target = join(dirname(file), specifier);
    if (!specifier.startsWith('.')) faults.push(`${relative(PACKAGE, file)} imports '${specifier}'`);
    else if (!existsSync(target)) faults.push(`${relative(PACKAGE, file)} imports '${specifier}', which is not built`);
    else visit(target);
  }
};
visit(join(DIST, 'index.js'));
if (faults.length > 0) {
  process.stderr.write(`@ordergate/client: the browser entry must import no node: module:\n  ${faults.join('\n  ')}\n`);
  process.exit(1);
}
