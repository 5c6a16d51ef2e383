/**
 * `ordergate oms` as an operator runs it: the built bin as real processes over a real SQLite file, placed
 * orders picked up, a clean exit on SIGTERM; two of them on one database share the work without doing any
 * of it twice. Also the start-up errors of OMS_EMBEDDED and OMS_POLL_MS.
 */
import { spawn } from 'node:child_process';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CLI, cleanEnv, ROOT, runOrdergate } from '../cli/run-ordergate.js';
import { HOUR, OmsBench, sleep } from './fixture.js';

interface OmsProcess {
  stderr(): string;
  stdout(): string;
  stop(): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const running = new Set<() => void>();

function startOms(env: Record<string, string>): OmsProcess {
  const child = spawn(process.execPath, [CLI, 'oms'], {
    cwd: ROOT,
    env: cleanEnv({ LOG_LEVEL: 'info', OMS_POLL_MS: '20', ...env }),
  });
  let stderr = '';
  let stdout = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  const kill = () => child.kill('SIGKILL');
  running.add(kill);
  return {
    stderr: () => stderr,
    stdout: () => stdout,
    async stop() {
      child.kill('SIGTERM');
      const timeout = sleep(10_000).then(() => ({ code: null, signal: 'timeout' as NodeJS.Signals }));
      const result = await Promise.race([exited, timeout]);
      running.delete(kill);
      return result;
    },
  };
}

let bench: OmsBench;
beforeEach(async () => {
  bench = await OmsBench.open();
  // The processes run on the real clock.
  bench.clock.now = Date.now();
  await bench.registerIssue({
    nonRetailOpensAt: bench.clock.now - HOUR,
    nonRetailClosesAt: bench.clock.now + HOUR,
    retailOpensAt: bench.clock.now - HOUR,
    retailClosesAt: bench.clock.now + HOUR,
  });
});
afterEach(async () => {
  for (const kill of running) kill();
  running.clear();
  await bench.close();
});

/** Polls until every order has left the given statuses, for at most `ms`. */
async function untilSettled(ids: readonly string[], away: readonly string[], ms = 15_000): Promise<string[]> {
  const deadline = Date.now() + ms;
  let statuses = await Promise.all(ids.map((id) => bench.status(id)));
  while (statuses.some((status) => away.includes(status)) && Date.now() < deadline) {
    await sleep(50);
    statuses = await Promise.all(ids.map((id) => bench.status(id)));
  }
  return statuses;
}

describe('ordergate oms', () => {
  it('processes the orders placed in its database and exits 0 on SIGTERM', async () => {
    const first = await bench.placeOrder({ quantity: 7 });
    const oms = startOms({ DATABASE_URL: bench.databaseUrl });

    expect(await untilSettled([first], ['OMSXMITTED', 'EXXMITTED'])).toEqual(['PENDING']);
    // An order placed while it runs is picked up too.
    const second = await bench.placeOrder({ quantity: 8 });
    expect(await untilSettled([second], ['OMSXMITTED', 'EXXMITTED'])).toEqual(['PENDING']);

    expect(await oms.stop()).toEqual({ code: 0, signal: null });
    expect(oms.stdout()).toBe('');
    const messages = oms
      .stderr()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toEqual(
      expect.arrayContaining(['ordergate oms running', 'OMS worker started', 'shutting down', 'OMS worker stopped']),
    );
    for (const id of [first, second]) expect((await bench.exchangeBid(id))!.transmissions).toBe(1);
  });

  it('shares one database between two processes: every order sent once, the issue allocated once', async () => {
    const ids = [];
    for (let i = 0; i < 30; i += 1) {
      ids.push(
        await bench.placeOrder({
          userId: i % 3 === 0 ? 'inst1' : 'retail1',
          quantity: 10 + i,
          pricePaise: i % 3 === 0 ? 10_200 : 10_150,
        }),
      );
    }
    const processes = [startOms({ DATABASE_URL: bench.databaseUrl }), startOms({ DATABASE_URL: bench.databaseUrl })];

    expect(await untilSettled(ids, ['OMSXMITTED', 'EXXMITTED'])).toEqual(ids.map(() => 'PENDING'));
    // Both windows close now; the next poll of either process allocates.
    const now = Date.now();
    await bench.registerIssue({
      nonRetailOpensAt: now - HOUR,
      nonRetailClosesAt: now,
      retailOpensAt: now - HOUR,
      retailClosesAt: now,
    });
    const finals = await untilSettled(ids, ['PENDING']);
    expect(finals.every((status) => status === 'EXECUTED')).toBe(true);

    for (const oms of processes) expect(await oms.stop()).toEqual({ code: 0, signal: null });
    for (const id of ids) {
      expect(await bench.statusTrail(id), id).toEqual(['OMSXMITTED', 'EXXMITTED', 'PENDING', 'EXECUTED']);
      expect((await bench.exchangeBid(id))!.transmissions, id).toBe(1);
    }
    expect(await bench.events()).toHaveLength(30);
    expect(await bench.openOutbox()).toBe(0);
  });

  it('refuses to start with a bad OMS_POLL_MS, in one line', async () => {
    const result = await runOrdergate(['oms'], { env: { DATABASE_URL: bench.databaseUrl, OMS_POLL_MS: 'often' } });
    expect(result.code).toBe(1);
    expect(result.stderr).toBe('ordergate: OMS_POLL_MS must be a whole number, got "often"\n');
  });
});

describe('OMS_EMBEDDED', () => {
  it('stops `ordergate serve` at start-up with a clear reason when it is neither true nor false', async () => {
    const result = await runOrdergate(['serve'], {
      env: { DATABASE_URL: bench.databaseUrl, PORT: '0', OMS_EMBEDDED: 'yes' },
    });
    expect(result.code).toBe(1);
    expect(result.stdout).toBe('');
    expect(result.stderr).toBe('ordergate: OMS_EMBEDDED must be true or false, got "yes"\n');
  });
});
