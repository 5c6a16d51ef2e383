/**
 * The package as a user gets it: `npm pack` of packages/client (its `prepack` builds dist/), the tarball
 * installed into a fresh project, an example type-checked there against the installed typings with the
 * repository's TypeScript (a Node program with nodenext resolution, a browser module with bundler resolution,
 * the DOM library and no Node types), then the Node program's compiled JavaScript run against the real server
 * process: it logs in, places an OFS bid, reads the order book and verifies a webhook signature with the
 * Node-only entry. The main entry's built graph imports no `node:` module, and a browser bundle of it builds.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ROOT, runNode } from '../../../test/cli/run-ordergate.js';
import { children, startServer, stopServer, type ServerProcess } from '../../../test/support/server-process.js';
import { seedDemo, workspace, type Demo } from './support/seed.js';

const CLIENT = join(ROOT, 'packages', 'client');
const TSC = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
const space = workspace('pack');
const PROJECT = join(space.dir, 'project');
const INSTALLED = join(PROJECT, 'node_modules', '@ordergate', 'client');
let server: ServerProcess;
let demo: Demo;
let packed: { filename: string; files: { path: string }[] };

const exec = promisify(execFile);

/** npm as a user runs it: not with the settings of the npm (npx, npm test) this test may run under. */
function npm(args: string[], cwd: string) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)));
  return exec('npm', args, { cwd, env, maxBuffer: 16 * 1024 * 1024, timeout: 90_000 });
}

/** `tsc -p <config>` in the fresh project, with the repository's compiler: its diagnostics, '' when none. */
async function tsc(config: string): Promise<string> {
  try {
    await exec(process.execPath, [TSC, '-p', config, '--pretty', 'false'], { cwd: PROJECT });
    return '';
  } catch (error) {
    const { stdout, stderr } = error as { stdout: string; stderr: string };
    return `${stdout}${stderr}` || String(error);
  }
}

function write(file: string, text: string | object) {
  mkdirSync(dirname(join(PROJECT, file)), { recursive: true });
  writeFileSync(join(PROJECT, file), typeof text === 'string' ? text : `${JSON.stringify(text, null, 2)}\n`);
}

/** The relative modules each built module reaches from `entry`, and every specifier that is not relative. */
function graph(entry: string): { modules: string[]; external: string[] } {
  const modules: string[] = [];
  const external: string[] = [];
  const visit = (file: string) => {
    if (modules.includes(file)) return;
    modules.push(file);
    const code = readFileSync(file, 'utf8');
    for (const [, specifier] of code.matchAll(/\b(?:from|import)\s*\(?\s*['"]([^'"]+)['"]/g)) {
      if (specifier!.startsWith('.')) visit(join(dirname(file), specifier!));
      else external.push(specifier!);
    }
  };
  visit(entry);
  return { modules: modules.map((file) => file.slice(INSTALLED.length + 1)), external };
}

// The Node program: log in, place an OFS bid on the demo issue, read it in the order book, see a bid refused
// with a typed error, and verify a webhook delivery signed as the server signs one.
const NODE_EXAMPLE = `
import { createHmac } from 'node:crypto';
import { OrdergateClient, OrdergateError, type Order, type PlaceBid } from '@ordergate/client';
import { verifyWebhook, WEBHOOK_HEADERS, type WebhookHeaders } from '@ordergate/client/webhooks';

const client = new OrdergateClient({ baseUrl: process.env.ORDERGATE_URL! });
const login = await client.login({
  userId: process.env.ORDERGATE_USER!,
  password: process.env.ORDERGATE_PASSWORD!,
  apiKey: process.env.ORDERGATE_API_KEY!,
});
console.log(\`logged in \${login.data.token_type}\`);

const bid: PlaceBid = {
  scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF' },
  transaction_type: 'BUY',
  product_type: 'OFS',
  order_type: 'RL',
  quantity: '10',
  price: 101.5,
};
const placed = await client.place(bid);
console.log(\`placed \${placed.data.orderId}\`);

const book = await client.orderBook({ order_id: placed.data.orderId });
const order: Order | undefined = book.data[0];
console.log(\`book \${book.data.length} \${order?.order_id} \${order?.symbol} \${order?.total_quantity} at \${order?.order_price}\`);

try {
  await client.place({ ...bid, quantity: '0' });
} catch (error) {
  if (!(error instanceof OrdergateError)) throw error;
  console.log(\`refused \${error.status} \${error.code}\`);
}

const secret = 'whsec_example';
const body = JSON.stringify({ event_id: 1, order_id: placed.data.orderId });
const timestamp = String(Math.floor(Date.now() / 1000));
const signature = \`sha256=\${createHmac('sha256', secret).update(\`\${timestamp}.\${body}\`).digest('hex')}\`;
const headers: WebhookHeaders = { [WEBHOOK_HEADERS.timestamp]: timestamp, [WEBHOOK_HEADERS.signature]: signature };
console.log(\`webhook genuine \${verifyWebhook(secret, headers, body)} tampered \${verifyWebhook(secret, headers, \`\${body} \`)}\`);

await client.logout();

// The typings are real: a price is a number.
export function wrong() {
  // @ts-expect-error
  return client.place({ ...bid, price: 'ten' });
}
`;

// The browser module: the main entry alone, with the DOM's types and none of Node's.
const BROWSER_EXAMPLE = `
import { OrdergateClient, OrdergateError, type OrderEvent } from '@ordergate/client';

export async function show(list: HTMLUListElement, baseUrl: string, token: string, apiKey: string): Promise<void> {
  const client = new OrdergateClient({ baseUrl }).withToken(token, apiKey);
  const line = (text: string) => list.append(Object.assign(document.createElement('li'), { textContent: text }));
  try {
    for (const order of (await client.orderBook()).data) line(\`\${order.order_id} \${order.status}\`);
    const handle = (event: OrderEvent) => line(\`\${event.order_id} \${event.status}\`);
    for await (const event of client.events({ signal: AbortSignal.timeout(60_000) })) handle(event);
  } catch (error) {
    if (error instanceof OrdergateError) line(\`\${error.code} \${error.message}\`);
    else throw error;
  }
}
`;

beforeAll(async () => {
  const [seeded, pack] = await Promise.all([
    seedDemo(space),
    npm(['pack', '--json', '--pack-destination', space.dir], CLIENT),
  ]);
  demo = seeded;
  packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;
  server = await startServer(space.env);
  // A fresh project, the tarball installed into it as a user installs it.
  mkdirSync(PROJECT);
  await npm(['init', '-y'], PROJECT);
  await npm(['pkg', 'set', 'type=module'], PROJECT);
  await npm(['install', '--no-audit', '--no-fund', join(space.dir, packed.filename)], PROJECT);
}, 180_000);

afterAll(async () => {
  if (server) await stopServer(server).catch(() => undefined);
  for (const child of children) child.kill('SIGKILL');
  space.remove();
});

describe('the packed @ordergate/client', () => {
  it('holds the built JavaScript, its typings, the README and a publishable package.json', () => {
    const files = packed.files.map((file) => file.path).sort();
    for (const name of ['index', 'webhooks', 'client', 'errors', 'events', 'sse', 'transport', 'types']) {
      expect(files).toContain(`dist/${name}.js`);
      expect(files).toContain(`dist/${name}.d.ts`);
    }
    expect(files).toContain('dist/generated/error-catalog.js');
    expect(files).toContain('dist/generated/openapi.d.ts');
    expect(files).toContain('README.md');
    expect(files).toContain('package.json');
    // The repository's LICENSE and NOTICE, copied at pack time (each once the repository has it).
    for (const name of ['LICENSE', 'NOTICE']) expect(files.includes(name), name).toBe(existsSync(join(ROOT, name)));
    expect(files.filter((file) => !/^dist\/.+\.(js|d\.ts|js\.map)$/.test(file)).sort()).toEqual(
      ['LICENSE', 'NOTICE', 'README.md', 'package.json'].filter((file) => files.includes(file)),
    );

    const manifest = JSON.parse(readFileSync(join(INSTALLED, 'package.json'), 'utf8')) as Record<string, unknown>;
    expect(manifest.private).toBeUndefined();
    expect(manifest).toMatchObject({
      name: '@ordergate/client',
      license: 'Apache-2.0',
      type: 'module',
      sideEffects: false,
      types: './dist/index.d.ts',
      engines: { node: '>=20' },
      exports: {
        '.': { types: './dist/index.d.ts', default: './dist/index.js' },
        './webhooks': { types: './dist/webhooks.d.ts', default: './dist/webhooks.js' },
      },
    });
    expect(manifest.dependencies).toBeUndefined();
  });

  it("keeps the main entry browser-safe: its graph imports no node: module; the webhooks' entry is Node's", async () => {
    const main = graph(join(INSTALLED, 'dist', 'index.js'));
    expect(main.modules).toEqual(expect.arrayContaining(['dist/index.js', 'dist/client.js', 'dist/sse.js']));
    expect(main.modules).not.toContain('dist/webhooks.js');
    expect(main.external).toEqual([]);
    expect(graph(join(INSTALLED, 'dist', 'webhooks.js')).external).toEqual(['node:crypto']);

    // A browser bundle of the main entry builds; one of the webhooks' entry does not (node:crypto).
    write('bundle/main.js', `export * from '@ordergate/client';\n`);
    write('bundle/webhooks.js', `export * from '@ordergate/client/webhooks';\n`);
    const bundle = (entry: string) =>
      build({
        entryPoints: [join(PROJECT, entry)],
        bundle: true,
        write: false,
        format: 'esm',
        platform: 'browser',
        logLevel: 'silent',
      });
    const browser = (await bundle('bundle/main.js')).outputFiles[0]!.text;
    expect(/^export \{[^}]*\bOrdergateClient\b/m.test(browser), 'the bundle exports OrdergateClient').toBe(true);
    expect(browser.match(/.{0,60}\bnode:.{0,60}/)?.[0]).toBeUndefined();
    await expect(bundle('bundle/webhooks.js')).rejects.toThrow(/node:crypto/);
  }, 60_000);

  it('type-checks a Node program and a browser module against the installed typings', async () => {
    write('example.ts', NODE_EXAMPLE);
    write('browser.ts', BROWSER_EXAMPLE);
    const strict = { strict: true, noUncheckedIndexedAccess: true, skipLibCheck: false, target: 'ES2022' };
    // Node: nodenext resolution, Node's types (the repository's @types/node), compiled to out/.
    write('tsconfig.json', {
      compilerOptions: {
        ...strict,
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        lib: ['ES2023'],
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        outDir: 'out',
      },
      files: ['example.ts'],
    });
    // A browser: bundler resolution, the DOM, no Node types at all.
    write('tsconfig.browser.json', {
      compilerOptions: {
        ...strict,
        module: 'ESNext',
        moduleResolution: 'Bundler',
        lib: ['ES2022', 'DOM', 'DOM.Iterable'],
        types: [],
        noEmit: true,
      },
      files: ['browser.ts'],
    });
    expect(await tsc('tsconfig.json')).toBe('');
    expect(await tsc('tsconfig.browser.json')).toBe('');
    // The check is real: the main entry has no webhook verifier (it is the Node-only entry's).
    write('browser-wrong.ts', `import { verifyWebhook } from '@ordergate/client';\nexport const v = verifyWebhook;\n`);
    write('tsconfig.browser-wrong.json', { extends: './tsconfig.browser.json', files: ['browser-wrong.ts'] });
    expect(await tsc('tsconfig.browser-wrong.json')).toMatch(
      /browser-wrong\.ts.*has no exported member.*verifyWebhook/,
    );
  }, 120_000);

  it('runs the compiled program against the server: login, an OFS bid, the order book, a webhook signature', async () => {
    const result = await runNode([join(PROJECT, 'out', 'example.js')], 'the packed example', {
      env: {
        ORDERGATE_URL: server.url,
        ORDERGATE_USER: demo.user_id,
        ORDERGATE_PASSWORD: demo.password,
        ORDERGATE_API_KEY: demo.api_key,
      },
      timeoutMs: 30_000,
    });
    expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
    const lines = result.stdout.trim().split('\n');
    expect(lines[0]).toBe('logged in Bearer');
    const orderId = /^placed (\S+)$/.exec(lines[1]!)?.[1];
    expect(orderId, lines[1]).toBeDefined();
    expect(lines[2]).toBe(`book 1 ${orderId} SBIN 10 at 101.50`);
    expect(lines[3]).toMatch(/^refused 4\d\d e-\d{3}$/);
    expect(lines[4]).toBe('webhook genuine true tampered false');
    expect(lines).toHaveLength(5);
  }, 60_000);
});
