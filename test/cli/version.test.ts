/**
 * The version is written once, in package.json (issue 52): `ordergate --version` prints it, from the built
 * bin run in any folder (an operator's cwd is not the package's), and the OpenAPI document the server serves
 * carries it as `info.version`, as does the committed docs/openapi.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestServer } from '../support/server.js';
import { CLI, cleanEnv, ROOT } from './run-ordergate.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

const elsewhere = mkdtempSync(join(tmpdir(), 'ordergate-version-'));
afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));

describe('the version', () => {
  it("package.json's is a semantic version", () => {
    expect(VERSION).toMatch(/^\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/);
  });

  it.each([['--version'], ['-V']])(
    "`ordergate %s` prints package.json's version, run from another folder, and touches no database",
    (flag) => {
      const run = spawnSync(process.execPath, [CLI, flag], {
        cwd: elsewhere,
        env: cleanEnv({ DATABASE_URL: `sqlite:${join(elsewhere, 'never', 'ordergate.db')}` }),
        encoding: 'utf8',
        timeout: 20_000,
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toBe(`${VERSION}\n`);
      expect(run.stderr).toBe('');
      expect(readdirSync(elsewhere)).toEqual([]);
    },
  );

  it("GET /openapi.json says package.json's version in info.version", async () => {
    const server = await startTestServer();
    try {
      const res = await server.call('GET', '/openapi.json');
      expect(res.status).toBe(200);
      expect(res.body.info.version).toBe(VERSION);
    } finally {
      await server.close();
    }
  });

  it('docs/openapi.json, as `npm run docs` writes it, says the same version', () => {
    const committed = JSON.parse(readFileSync(join(ROOT, 'docs', 'openapi.json'), 'utf8')) as {
      info: { version: string };
    };
    expect(committed.info.version).toBe(VERSION);
  });
});
