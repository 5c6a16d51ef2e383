/**
 * Builds the web console into dist/console/ (served at /console/ by src/http/routes/console.ts): console/src/main.ts
 * and the CSS it imports are bundled by esbuild into app-<hash>.js and app-<hash>.css, and console/index.html
 * is written with those names. Everything the page needs is in those three files: nothing is fetched from
 * elsewhere at run time. The names change with the content, so browsers may cache them for a year.
 *
 * Usage: `tsx scripts/build-console.ts` (part of `npm run build`).
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { build } from 'esbuild';

const ROOT = join(import.meta.dirname, '..');
const SOURCE = join(ROOT, 'console');
const OUT = join(ROOT, 'dist', 'console');

export async function buildConsole(outDir = OUT): Promise<string[]> {
  // Built beside the old folder, then swapped in: a running server never serves a half-written console.
  const staging = `${outDir}.building-${process.pid}`;
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: { app: join(SOURCE, 'src', 'main.ts') },
    outdir: staging,
    entryNames: '[name]-[hash]',
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['chrome111', 'firefox111', 'safari16.4'],
    minify: true,
    sourcemap: 'linked',
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((file) => basename(file));
  const js = outputs.find((file) => /^app-[A-Z0-9]+\.js$/.test(file));
  const css = outputs.find((file) => /^app-[A-Z0-9]+\.css$/.test(file));
  if (js === undefined || css === undefined)
    throw new Error(`build-console: esbuild did not write app-<hash>.js and .css (it wrote ${outputs.join(', ')})`);
  const html = readFileSync(join(SOURCE, 'index.html'), 'utf8').replace('%APP_JS%', js).replace('%APP_CSS%', css);
  writeFileSync(join(staging, 'index.html'), html);
  rmSync(outDir, { recursive: true, force: true });
  renameSync(staging, outDir);
  return ['index.html', ...outputs];
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const files = await buildConsole();
  process.stderr.write(`build-console: wrote ${files.join(', ')} to ${OUT}\n`);
}
