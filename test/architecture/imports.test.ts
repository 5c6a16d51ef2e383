/**
 * The layering of src/, read from the import statements themselves (`import type` included): no file
 * imports a file that imports it back, however long the circle; the domain rules are plain functions over
 * plain data (nothing of the edge: no wire schema, no validator, no HTTP, no store, no database driver),
 * and the wire schemas build on the domain, never on what serves them.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = resolve(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
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
    const local = imports.filter((name) => name.startsWith('.')).map((name) => resolve(dirname(file), name).replace(/\.js$/, '.ts'));
    const missing = local.filter((path) => !known.has(path));
    if (missing.length > 0) throw new Error(`${relative(SRC, file)} imports files that are not in src/: ${missing.join(', ')}`);
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

/** What a layer (a folder of src/) may not import: folders of src/, and packages by name. */
interface LayerRule {
  layer: string;
  forbiddenFolders: readonly string[];
  forbiddenPackages: RegExp;
}

/** The database drivers and the web framework: the store's and the HTTP layer's, nobody else's below them. */
const DRIVERS_AND_FRAMEWORK = /^(kysely|pg|better-sqlite3|fastify|@fastify\/)/;

const LAYER_RULES: readonly LayerRule[] = [
  // Rules are plain functions over plain data: parsing and validation happen at the edge.
  {
    layer: 'domain/',
    forbiddenFolders: ['schemas/', 'http/', 'services/', 'store/', 'oms/'],
    forbiddenPackages: new RegExp(`${DRIVERS_AND_FRAMEWORK.source}|^(ajv|typebox|@sinclair\\/typebox)`),
  },
  // Wire shapes build on domain types and constants, never on what serves them.
  { layer: 'schemas/', forbiddenFolders: ['http/', 'services/', 'store/', 'oms/'], forbiddenPackages: DRIVERS_AND_FRAMEWORK },
  // The store loads and writes: it is driven from above (services, the OMS), never drives them.
  {
    layer: 'store/',
    forbiddenFolders: ['schemas/', 'http/', 'services/', 'oms/', 'webhooks/', 'metrics/', 'cli/'],
    forbiddenPackages: /^(fastify|@fastify\/)/,
  },
];

/** "from -> to" for every import that a layer rule forbids. */
function layerOffences(graph: Map<string, { files: string[]; packages: string[] }>): string[] {
  const offences: string[] = [];
  for (const [file, imports] of graph) {
    const from = relative(SRC, file);
    for (const rule of LAYER_RULES.filter((r) => from.startsWith(r.layer))) {
      for (const target of imports.files.map((path) => relative(SRC, path))) {
        if (rule.forbiddenFolders.some((folder) => target.startsWith(folder))) offences.push(`${from} -> ${target}`);
      }
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
      [file('schemas/b.ts'), { files: [file('services/d.ts'), file('domain/c.ts')], packages: ['typebox', 'ajv'] }],
    ]);
    expect(layerOffences(fake)).toEqual(['domain/a.ts -> schemas/b.ts', 'domain/a.ts -> typebox', 'schemas/b.ts -> services/d.ts']);
  });
});
