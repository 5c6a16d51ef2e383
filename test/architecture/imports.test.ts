/**
 * The layering of src/, read from the import statements themselves (`import type` included): no file
 * imports a file that imports it back, however long the circle; every file is in a layer and imports only
 * down the layers (LAYERS, every layer of src/ with no exception); the domain rules are plain functions
 * over plain data (nothing of the edge: no wire schema, no validator, no HTTP, no store, no database
 * driver), and the wire schemas build on the domain, never on what serves them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

/** Source files the graph does not read: a file of another kind would escape every check below. */
const UNREAD_SOURCE = /\.(tsx|mts|cts|js|mjs|cjs|jsx)$/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    if (UNREAD_SOURCE.test(path))
      throw new Error(`${relative(SRC, path)}: src/ holds .ts files only (the layering reads no other)`);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Each file of src/ with what it imports: files of src/ (resolved) and packages (by name). */
function importGraph(): Map<string, { files: string[]; packages: string[] }> {
  const files = sourceFiles(SRC);
  const known = new Set(files);
  const graph = new Map<string, { files: string[]; packages: string[] }>();
  for (const file of files) {
    const imports = ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((i) => i.fileName);
    const local = imports
      .filter((name) => name.startsWith('.'))
      .map((name) => resolve(dirname(file), name).replace(/\.js$/, '.ts'));
    const missing = local.filter((path) => !known.has(path));
    if (missing.length > 0)
      throw new Error(`${relative(SRC, file)} imports files that are not in src/: ${missing.join(', ')}`);
    graph.set(file, { files: local, packages: imports.filter((name) => !name.startsWith('.')) });
  }
  return graph;
}

/** The import circles: strongly connected components of more than one file, or a file importing itself. */
function importCircles(graph: Map<string, { files: string[] }>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const circles: string[][] = [];
  const visit = (file: string): void => {
    index.set(file, next);
    low.set(file, next);
    next += 1;
    stack.push(file);
    onStack.add(file);
    for (const target of graph.get(file)!.files) {
      if (!index.has(target)) {
        visit(target);
        low.set(file, Math.min(low.get(file)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(file, Math.min(low.get(file)!, index.get(target)!));
      }
    }
    if (low.get(file) !== index.get(file)) return;
    const component: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      component.push(relative(SRC, member));
    } while (member !== file);
    if (component.length > 1 || graph.get(file)!.files.includes(file)) circles.push(component.sort());
  };
  for (const file of graph.keys()) if (!index.has(file)) visit(file);
  return circles;
}

/**
 * The layers of src/, top first: a file may import files of its own layer and of the layers below it,
 * never above. Every top-level file and folder of src/ has a layer (a new one fails the test below until
 * it is placed). Layers of one rank (schemas/ and store/; services/ beside oms/ and webhooks/ is not one:
 * see below) may not import each other.
 */
const LAYERS: readonly (readonly string[])[] = [
  ['main.ts'],
  ['cli/'],
  ['server.ts', 'docs/'],
  ['wiring.ts'],
  ['app.ts'],
  // The HTTP edge: routes and plugins, over the services (never the store: what it needs of the database
  // comes through a service, or from the composition root, wiring.ts).
  ['http/'],
  // Use cases: order entry, carts, logins, reads. They start the webhook dispatcher's deliveries of a new
  // webhook's address check, so webhooks/ is below them. Beside them, and apart from them, the exchange
  // simulator: a process of its own, serving the simulated exchange's markets (oms/) and the store on its
  // own HTTP server (the composition root and the CLI start it).
  ['services/', 'exchange-sim/'],
  // Processes of their own beside the services: the OMS and the webhook dispatcher.
  ['oms/', 'webhooks/'],
  ['metrics/'],
  // Loading and writing, and the wire shapes (with their mappers from the domain): neither knows the other.
  ['store/', 'schemas/'],
  ['config.ts'],
  ['auth/', 'rate-limit/'],
  // Plain rules over plain data, and the leaves everything may use.
  ['domain/', 'ids.ts', 'logger.ts', 'package-root.ts'],
];

/** The layer of a path relative to src/ (its top-level file or folder), or undefined. */
function layerOf(path: string): { rank: number; name: string } | undefined {
  const name = path.includes('/') ? `${path.slice(0, path.indexOf('/'))}/` : path;
  const rank = LAYERS.findIndex((layer) => layer.includes(name));
  return rank < 0 ? undefined : { rank, name };
}

/**
 * Layers that one above them may not reach past the layer between: the HTTP edge goes through the
 * services (or is given what it needs by wiring.ts), never to the store itself.
 */
const NO_SKIPPING: readonly (readonly [string, string])[] = [['http/', 'store/']];

/** What a layer may not import by package name, whatever its rank. */
interface PackageRule {
  layer: string;
  forbiddenPackages: RegExp;
}

/** The database drivers and the web framework: the store's and the HTTP layer's, nobody else's below them. */
const DRIVERS_AND_FRAMEWORK = /^(kysely|pg|better-sqlite3|fastify|@fastify\/)/;

const PACKAGE_RULES: readonly PackageRule[] = [
  // Rules are plain functions over plain data: parsing and validation happen at the edge.
  {
    layer: 'domain/',
    forbiddenPackages: new RegExp(`${DRIVERS_AND_FRAMEWORK.source}|^(ajv|typebox|@sinclair\\/typebox)`),
  },
  // Wire shapes build on domain types and constants, never on what serves them.
  { layer: 'schemas/', forbiddenPackages: DRIVERS_AND_FRAMEWORK },
  // The store loads and writes; it answers no request.
  { layer: 'store/', forbiddenPackages: /^(fastify|@fastify\/)/ },
  // Use cases and processes know no framework: the HTTP layer translates.
  { layer: 'services/', forbiddenPackages: /^(fastify|@fastify\/)/ },
  { layer: 'oms/', forbiddenPackages: /^(fastify|@fastify\/)/ },
];

/** "from -> to" for every import that runs up the layers or across one rank, or that a package rule forbids; and files of no layer. */
function layerOffences(graph: Map<string, { files: string[]; packages: string[] }>): string[] {
  const offences: string[] = [];
  for (const [file, imports] of graph) {
    const from = relative(SRC, file);
    const fromLayer = layerOf(from);
    if (fromLayer === undefined) {
      offences.push(`${from}: in no layer`);
      continue;
    }
    for (const target of imports.files.map((path) => relative(SRC, path))) {
      const toLayer = layerOf(target);
      if (toLayer === undefined || toLayer.name === fromLayer.name) continue;
      if (toLayer.rank <= fromLayer.rank || NO_SKIPPING.some(([a, b]) => a === fromLayer.name && b === toLayer.name))
        offences.push(`${from} -> ${target}`);
    }
    for (const rule of PACKAGE_RULES.filter((r) => from.startsWith(r.layer))) {
      for (const name of imports.packages) if (rule.forbiddenPackages.test(name)) offences.push(`${from} -> ${name}`);
    }
  }
  return offences;
}

describe('imports of src/', () => {
  const graph = importGraph();

  it('finds the files and their imports (the check below reads a real graph)', () => {
    expect(graph.size).toBeGreaterThan(50);
    const app = graph.get(join(SRC, 'app.ts'))!;
    expect(app.files.length).toBeGreaterThan(3);
  });

  it('has no import circle', () => {
    expect(importCircles(graph)).toEqual([]);
  });

  it('finds a circle when there is one (the detector itself)', () => {
    const a = { files: ['b'], packages: [] };
    const b = { files: ['c'], packages: [] };
    const c = { files: ['a'], packages: [] };
    const d = { files: ['a'], packages: [] };
    expect(
      importCircles(
        new Map([
          ['a', a],
          ['b', b],
          ['c', c],
          ['d', d],
        ]),
      ).map((circle) => circle.length),
    ).toEqual([3]);
  });

  it('keeps each layer to what it may import', () => {
    expect(layerOffences(graph)).toEqual([]);
  });

  it('finds an import a layer may not make (the check itself)', () => {
    const file = (path: string) => join(SRC, path);
    const fake = new Map([
      [file('domain/a.ts'), { files: [file('schemas/b.ts'), file('domain/c.ts')], packages: ['typebox'] }],
      [
        file('schemas/b.ts'),
        { files: [file('services/d.ts'), file('domain/c.ts'), file('store/e.ts')], packages: ['typebox', 'ajv'] },
      ],
      [
        file('webhooks/f.ts'),
        { files: [file('services/d.ts'), file('store/e.ts'), file('metrics/g.ts')], packages: [] },
      ],
      [
        file('http/h.ts'),
        { files: [file('store/e.ts'), file('services/d.ts'), file('http/i.ts')], packages: ['fastify'] },
      ],
      [file('services/d.ts'), { files: [file('webhooks/f.ts')], packages: ['fastify'] }],
      [file('stray.ts'), { files: [], packages: [] }],
    ]);
    expect(layerOffences(fake)).toEqual([
      'domain/a.ts -> schemas/b.ts',
      'domain/a.ts -> typebox',
      'schemas/b.ts -> services/d.ts',
      'schemas/b.ts -> store/e.ts',
      'webhooks/f.ts -> services/d.ts',
      'http/h.ts -> store/e.ts',
      'services/d.ts -> fastify',
      'stray.ts: in no layer',
    ]);
  });
});
