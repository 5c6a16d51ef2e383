/**
 * `ordergate exchange-sim --ibbs-*` as an operator runs it (the built bin, dist/): it says where its iBBS
 * folders are, answers an upload dropped into the upload folder with a download in the download folder
 * (here a rejection: the file's CP code names no order of the database), and refuses a part of the flags.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, watch, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseDownload, uploadFileName } from '../../src/oms/links/bse-ibbs/mapping.js';
import { CLI, cleanEnv, expectOneLineFailure, ROOT, runOrdergate } from '../cli/run-ordergate.js';
import { createMigratedSqliteFile, testDialect } from '../support/databases.js';

let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergate-ibbs-cli-'));
  await createMigratedSqliteFile(join(dir, 'ordergate.db'));
  env = {
    DATABASE_URL: `sqlite:${join(dir, 'ordergate.db')}`,
    LOG_LEVEL: 'info',
    EXCHANGE_SIM_MEMBER_CODE: 'M0001',
    EXCHANGE_SIM_LOGIN_ID: 'api-one',
    EXCHANGE_SIM_PASSWORD: 'a-password-of-the-test',
  };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// The bin over a SQLite file, as cli.test.ts (which the postgres project leaves out): once, on SQLite's run.
describe.skipIf(testDialect() === 'postgres')(
  'ordergate exchange-sim --ibbs-member --ibbs-upload-dir --ibbs-download-dir',
  () => {
    it('prints its folders, and answers an upload in the download folder', async () => {
      const uploads = join(dir, 'outbox');
      const downloads = join(dir, 'inbox');
      mkdirSync(uploads);
      mkdirSync(downloads);
      const name = uploadFileName('M0001', Date.now(), 1);
      writeFileSync(join(uploads, name), 'ACME,NII,OGZZZZZZ,NII001,,10,101.00,2,0,N\r\n');
      const answer = name.replace(/^OFSBID_/, 'REJECT_');
      // Resolves once the desk has renamed its answer into the folder (watched: no polling).
      const answered = new Promise<void>((resolve) => {
        const watcher = watch(downloads, (_event, file) => {
          if (file === answer) {
            watcher.close();
            resolve();
          }
        });
      });
      const child = spawn(
        process.execPath,
        [CLI, 'exchange-sim', '--port', '0', '--ibbs-member', 'M0001', '--ibbs-upload-dir', uploads].concat([
          '--ibbs-download-dir',
          downloads,
        ]),
        { cwd: ROOT, env: cleanEnv(env), stdio: 'pipe' },
      );
      let stdout = '';
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
      const printed = new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          stdout += chunk;
          if (/^ibbs-downloads: .*\n/m.test(stdout)) resolve();
        });
        void exited.then((code) => reject(new Error(`exited ${code}: ${stderr}`)));
      });
      try {
        await printed;
        expect(stdout).toContain(`ibbs-uploads: ${uploads}\n`);
        expect(stdout).toContain(`ibbs-downloads: ${downloads}\n`);
        await answered;
        const parsed = parseDownload('rejection', readFileSync(join(downloads, answer), 'utf8'));
        expect(parsed.rows.map((row) => [row.reference, row.error])).toEqual([
          ['OGZZZZZZ', 'Unknown client/CP code OGZZZZZZ'],
        ]);
      } finally {
        child.kill('SIGTERM');
      }
      expect(await exited).toBe(0);
      expect(stderr).not.toContain('a-password-of-the-test');
    });

    it('refuses a part of the flags, or one folder for both, in one line', async () => {
      expectOneLineFailure(
        await runOrdergate(['exchange-sim', '--port', '0', '--ibbs-member', 'M0001'], { env }),
        /--ibbs-member, --ibbs-upload-dir and --ibbs-download-dir go together/,
      );
      expectOneLineFailure(
        await runOrdergate(
          [
            'exchange-sim',
            '--port',
            '0',
            '--ibbs-member',
            'M0001',
            '--ibbs-upload-dir',
            dir,
            '--ibbs-download-dir',
            dir,
          ],
          { env },
        ),
        /must be two folders/,
      );
      expectOneLineFailure(
        await runOrdergate(
          ['exchange-sim', '--port', '0', '--ibbs-member', 'm-1', '--ibbs-upload-dir', 'a', '--ibbs-download-dir', 'b'],
          { env },
        ),
        /--ibbs-member: "m-1" is not a member code/,
      );
    });
  },
);
