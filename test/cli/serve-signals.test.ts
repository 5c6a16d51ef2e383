/**
 * A second signal while `serve` drains (Ctrl-C on `npm start`: the terminal and npm both send SIGINT; a
 * service manager or `timeout` signalling the whole group) is said and ignored: the drain goes on and the
 * process exits 0, instead of dying on the signal's default action half way through its shutdown.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../support/server-process.js';

const dir = mkdtempSync(join(tmpdir(), 'ordergate-signals-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The messages of the server's JSON log lines. */
const messages = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => (JSON.parse(line) as { msg?: string }).msg ?? '');

describe('signals while serve drains', () => {
  // Two of one signal sent at once may reach the process as one (a pending signal is not queued twice):
  // those cases check the one drain and the exit; two different ones are both delivered, and the second said.
  it.each([
    ['SIGINT', 'SIGINT'],
    ['SIGINT', 'SIGTERM'],
    ['SIGTERM', 'SIGINT'],
    ['SIGTERM', 'SIGTERM'],
  ] as const)('%s then %s at once: one drain, the second signal ignored, exit 0', async (first, second) => {
    const server = await startServer({ DATABASE_URL: `sqlite:${join(dir, `${first}-${second}.db`)}` });
    server.child.kill(first);
    server.child.kill(second);
    const exit = await server.exited;
    expect(exit, server.stderr()).toEqual({ code: 0, signal: null });
    const said = messages(server.stderr());
    expect(said.filter((m) => m === 'shutting down')).toHaveLength(1);
    if (first !== second) expect(said.some((m) => m.startsWith('already shutting down'))).toBe(true);
  });
});
