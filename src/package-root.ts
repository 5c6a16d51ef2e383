/**
 * The package's root folder (where its package.json is), found from this module's own folder by walking up:
 * the same from src/ (tsx, the tests), from dist/ as tsc writes it and from the bundled dist/ (npm start,
 * the ordergate bin), whose chunks sit at another depth.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

function findRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
    if (dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const PACKAGE_ROOT = findRoot(import.meta.dirname);

let version: string | undefined;

/**
 * The package's version, package.json's `version` (the one place it is written): what `ordergate --version`
 * prints and the OpenAPI document's `info.version`. Read once, at run time, wherever the process was started.
 */
export function packageVersion(): string {
  if (version === undefined) {
    const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version?: unknown };
    if (typeof manifest.version !== 'string' || manifest.version === '') {
      throw new Error(`${join(PACKAGE_ROOT, 'package.json')} has no version`);
    }
    version = manifest.version;
  }
  return version;
}
