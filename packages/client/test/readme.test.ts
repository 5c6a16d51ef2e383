/**
 * The README examples are code: every ```ts block of packages/client/README.md and of docs/api.md's
 * "TypeScript client" section is type-checked, as its own module importing `@ordergate/client` (and
 * `@ordergate/client/webhooks`), against the package's source with the repository's compiler settings. A block
 * that opens with `// In a browser` is checked as a browser compiles it: the DOM's types and none of
 * Node.js's, the main entry only, so that neither it nor the sources it reaches lean on Node.js.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const CLIENT = join(ROOT, 'packages', 'client');
const ROOT_SECTION = '## TypeScript client';

function tsBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1]!);
}

/** The client section of docs/api.md: from its heading to the next heading of the same level. */
function rootSection(): string | undefined {
  const readme = readFileSync(join(ROOT, 'docs', 'api.md'), 'utf8');
  const start = readme.indexOf(`\n${ROOT_SECTION}\n`);
  if (start < 0) return undefined;
  const end = readme.indexOf('\n## ', start + 1);
  return readme.slice(start, end < 0 ? undefined : end);
}

const BROWSER = '// In a browser';

/** The diagnostics of the blocks, each compiled as packages/client/readme-<n>.ts (in a browser: readme-<n>.ts, the DOM, no Node). */
function typeCheck(blocks: string[], where: 'node' | 'browser' = 'node'): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(ROOT, 'tsconfig.json'),
    {},
    {
      ...ts.sys,
      onUnRecoverableConfigFileDiagnostic: (d) => {
        throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
      },
    },
  )!;
  const options: ts.CompilerOptions = {
    ...config.options,
    noEmit: true,
    baseUrl: ROOT,
    paths: {
      '@ordergate/client': ['packages/client/src/index.ts'],
      ...(where === 'node' ? { '@ordergate/client/webhooks': ['packages/client/src/webhooks.ts'] } : {}),
    },
    ...(where === 'browser' ? { lib: ['lib.es2023.d.ts', 'lib.dom.d.ts', 'lib.dom.iterable.d.ts'], types: [] } : {}),
  };
  // A browser's blocks outside the package, where '@ordergate/client/...' cannot resolve to the package itself
  // (its own name, through its exports, to dist/).
  const dir = where === 'browser' ? ROOT : CLIENT;
  const files = new Map(blocks.map((text, index) => [join(dir, `readme-${index + 1}.ts`), text]));
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, language, ...rest) => {
    const text = files.get(name);
    return text === undefined
      ? getSourceFile(name, language, ...rest)
      : ts.createSourceFile(name, text, language, true);
  };
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => files.has(name) || fileExists(name);
  const readFile = host.readFile.bind(host);
  host.readFile = (name) => files.get(name) ?? readFile(name);
  const program = ts.createProgram([...files.keys()], options, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const where =
      diagnostic.file && diagnostic.start !== undefined
        ? diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start)
        : undefined;
    const name = diagnostic.file ? diagnostic.file.fileName.slice(ROOT.length + 1) : '';
    return `${name}${where ? `:${where.line + 1}:${where.character + 1}` : ''} ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n')}`;
  });
}

describe('README examples type-check against the client', () => {
  it('packages/client/README.md', () => {
    const blocks = tsBlocks(readFileSync(join(CLIENT, 'README.md'), 'utf8'));
    const browser = blocks.filter((block) => block.startsWith(BROWSER));
    expect(blocks.length).toBeGreaterThanOrEqual(3);
    expect(browser.length).toBeGreaterThanOrEqual(1);
    expect(typeCheck(blocks.filter((block) => !block.startsWith(BROWSER)))).toEqual([]);
    expect(typeCheck(browser, 'browser')).toEqual([]);
  }, 60_000);

  it(`the "${ROOT_SECTION}" section of docs/api.md`, () => {
    const section = rootSection();
    expect(section, `docs/api.md has no "${ROOT_SECTION}" section`).toBeDefined();
    const blocks = tsBlocks(section!);
    expect(blocks.length).toBeGreaterThanOrEqual(1);
    expect(typeCheck(blocks)).toEqual([]);
  }, 60_000);

  it('a wrong example fails (the check is real)', () => {
    const errors = typeCheck([
      `import { OrdergateClient } from '@ordergate/client';\nconst client = new OrdergateClient({ baseUrl: 'x' });\nawait client.place({ price: 'ten' });\n`,
    ]);
    expect(errors.join('\n')).toMatch(/readme-1\.ts:3/);
  }, 60_000);

  it('a browser block that leans on Node.js fails', () => {
    const errors = typeCheck(
      [
        `import { verifyWebhook } from '@ordergate/client/webhooks';\nconsole.log(verifyWebhook, process.env.HOME);\n`,
        `import { verifyWebhook } from '@ordergate/client';\nconsole.log(verifyWebhook, document.title);\n`,
      ],
      'browser',
    );
    expect(errors.join('\n')).toMatch(/readme-1\.ts:1:.*'@ordergate\/client\/webhooks'/);
    expect(errors.join('\n')).toMatch(/readme-1\.ts:2:.*'process'/);
    expect(errors.join('\n')).toMatch(/readme-2\.ts:1:.*verifyWebhook/);
  }, 60_000);
});
