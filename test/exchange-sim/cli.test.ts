/**
 * `ordergate exchange-sim` as an operator runs it (the built bin, dist/): it listens, says where on stdout,
 * takes logins of its API users (from the environment or a users file), never logs a password, and exits 0
 * on SIGTERM or SIGINT; without an API user it refuses to start in one line.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, expectOneLineFailure, ROOT, runOrdergate } from '../cli/run-ordergate.js';
import { createMigratedSqliteFile } from '../support/databases.js';

const PASSWORD = 'env-password-not-to-log';
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ordergate-exchange-sim-'));
  await createMigratedSqliteFile(join(dir, 'ordergate.db'));
  env = { DATABASE_URL: `sqlite:${join(dir, 'ordergate.db')}`, LOG_LEVEL: 'info' };
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Starts the command; resolves with its stdout's fields once it has printed where it listens. */
function start(args: string[], extraEnv: Record<string, string>) {
  const child = spawn(process.execPath, [CLI, 'exchange-sim', ...args], {
    cwd: ROOT,
    env: cleanEnv({ ...env, ...extraEnv }),
    stdio: 'pipe',
  });
  let stdout = '';
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const listening = new Promise<Record<string, string>>((resolve, reject) => {
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
      if (/^BSE_EQ: .*\n/m.test(stdout))
        resolve(
          Object.fromEntries(
            stdout
              .trim()
              .split('\n')
              .map((line) => line.split(': ') as [string, string]),
          ),
        );
    });
    void exited.then((code) => reject(new Error(`exited ${code} before listening: ${stderr}`)));
  });
  return { child, listening, exited, stderr: () => stderr };
}

async function login(base: string, user: Record<string, string>): Promise<number> {
  const response = await fetch(`${base}/auth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(user),
  });
  await response.body?.cancel();
  return response.status;
}

function stop(child: ChildProcess, signal: NodeJS.Signals) {
  child.kill(signal);
}

describe('ordergate exchange-sim', () => {
  it('serves the API user of the environment on a free port, logs no password, and exits 0 on SIGTERM', async () => {
    const user = { memberCode: 'M0001', loginId: 'api-env', password: PASSWORD };
    const run = start(['--port', '0'], {
      EXCHANGE_SIM_MEMBER_CODE: user.memberCode,
      EXCHANGE_SIM_LOGIN_ID: user.loginId,
      EXCHANGE_SIM_PASSWORD: user.password,
    });
    const fields = await run.listening;
    expect(fields.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fields.NSE_EQ).toBe(`${fields.url}/NSE_EQ/api`);
    expect(await login(fields.NSE_EQ!, user)).toBe(200);
    expect(await login(fields.BSE_EQ!, { ...user, password: 'wrong' })).toBe(401);
    stop(run.child, 'SIGTERM');
    expect(await run.exited).toBe(0);
    expect(run.stderr()).toContain('exchange simulator listening');
    expect(run.stderr()).not.toContain(PASSWORD);
  });

  it('serves the API users of a users file, and exits 0 on SIGINT', async () => {
    const users = [
      { memberCode: 'M0001', loginId: 'one', password: 'file-pass-one' },
      { memberCode: 'M0002', loginId: 'two', password: 'file-pass-two' },
    ];
    const file = join(dir, 'users.json');
    writeFileSync(file, JSON.stringify(users));
    const run = start(['--port', '0', '--users-file', file], {});
    const fields = await run.listening;
    for (const user of users) expect(await login(fields.NSE_EQ!, user)).toBe(200);
    stop(run.child, 'SIGINT');
    expect(await run.exited).toBe(0);
    expect(run.stderr()).not.toContain('file-pass');
  });

  it('refuses to start without an API user, with half of one, or with a users file that holds none', async () => {
    expectOneLineFailure(await runOrdergate(['exchange-sim', '--port', '0'], { env }), /no API user/);
    expectOneLineFailure(
      await runOrdergate(['exchange-sim', '--port', '0'], { env: { ...env, EXCHANGE_SIM_LOGIN_ID: 'x' } }),
      /lacks EXCHANGE_SIM_MEMBER_CODE, EXCHANGE_SIM_PASSWORD/,
    );
    const file = join(dir, 'bad-users.json');
    writeFileSync(file, JSON.stringify([{ memberCode: 'M1', loginId: 'x' }]));
    expectOneLineFailure(
      await runOrdergate(['exchange-sim', '--users-file', file], { env }),
      /bad-users\.json: \[0\]\.password must be a non-empty string/,
    );
    expectOneLineFailure(await runOrdergate(['exchange-sim', '--port', '70000'], { env }), /--port: 70000/);
  });
});
