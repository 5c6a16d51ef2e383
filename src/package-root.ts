/**
 * The package's root folder (where its package.json is), found from this module's own folder by walking up:
 * the same from src/ (tsx, the tests), from dist/ as tsc writes it and from the bundled dist/ (npm start,
 * the ordergate bin), whose chunks sit at another depth.
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = findRoot(import.meta.dirname);
