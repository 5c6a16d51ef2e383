/**
 * Builds what `npm start` and the `ordergate` bin run: src/main.ts into dist/main.js and src/cli/index.ts
 * into dist/cli/index.js, bundled by esbuild with the code they share in dist/chunks/ (a command loads the
 * HTTP stack only when it serves, as the sources say with their dynamic imports).
 *
 * Bundled with our code: the dependencies made of hundreds of small ES modules (typebox, kysely), which
 * Node 20 loads one file at a time: as tsc's output plus node_modules, `ordergate --help` took 0.7 s and a
 * server 1 s to start on an idle 2-core machine; bundled, about half. Every other dependency stays in
 * node_modules, loaded as it ships (native addons, files read from their package folder, worker threads).
 *
 * Usage: `tsx scripts/build-server.ts` (part of `npm run build`, after the type check).
 */
import { mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';

const ROOT = join(import.meta.dirname, '..');
const OUT = join(ROOT, 'dist');
/** The dependencies bundled into dist/; the rest are imported from node_modules at run time. */
const BUNDLED = new Set(['typebox', 'kysely']);

export async function buildServer(outDir = OUT): Promise<string[]> {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  const external = Object.keys(manifest.dependencies)
    .filter((name) => !BUNDLED.has(name))
    .flatMap((name) => [name, `${name}/*`]);
  // Everything in dist/ but the console (scripts/build-console.ts writes that) is this build's.
  mkdirSync(outDir, { recursive: true });
  for (const entry of readdirSync(outDir, { withFileTypes: true }).filter((e) => e.name !== 'console')) {
    rmSync(join(outDir, entry.name), { recursive: true, force: true });
  }
  const result = await build({
    absWorkingDir: ROOT,
    entryPoints: [join(ROOT, 'src', 'main.ts'), join(ROOT, 'src', 'cli', 'index.ts')],
    outbase: join(ROOT, 'src'),
    outdir: outDir,
    chunkNames: 'chunks/[name]-[hash]',
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    // The oldest Node kept working (docs/development.md, "Node.js versions"); the output runs on 22 and 24 too.
    target: 'node20',
    external,
    sourcemap: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  return Object.keys(result.metafile.outputs).filter((file) => file.endsWith('.js'));
}

if (process.argv[1] !== undefined && import.meta.filename === process.argv[1]) {
  const files = await buildServer();
  process.stderr.write(
    `build-server: wrote ${files.length} files to ${OUT} (dist/main.js, dist/cli/index.js and their chunks)\n`,
  );
}
