/** examples/place-watch-settle.ts, run as a user runs it (tsx), against the real server: a bid from placement to holding. */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { demoOfsIssue } from '../../../src/cli/demo.js';
import { closedNow, importOfsIssues, ROOT, runNode } from '../../../test/cli/run-ordergate.js';
import { children, startServer, stopServer, type ServerProcess } from '../../../test/support/server-process.js';
import { seedDemo, workspace, type Demo } from './support/seed.js';

const EXAMPLE = join(ROOT, 'packages', 'client', 'examples', 'place-watch-settle.ts');
const space = workspace('example');
let server: ServerProcess;
let demo: Demo;

beforeAll(async () => {
  demo = await seedDemo(space);
  server = await startServer(space.env);
}, 60_000);

afterAll(async () => {
  if (server) await stopServer(server).catch(() => undefined);
  for (const child of children) child.kill('SIGKILL');
  space.remove();
});

/** The example as a user runs it: `node --import tsx`, with its settings in the environment. */
const runExample = (env: Record<string, string>, onStdout: (stdout: string) => void) =>
  runNode(['--import', 'tsx', EXAMPLE], 'the example', { env, timeoutMs: 50_000, onStdout });

it('places a cut-off bid on the demo issue, follows it to EXECUTED and waits for the holding', async () => {
  // The demo issue, its allotments settling 2 s after they are made; the operator closes its windows once
  // the example's bid is at the exchange (PENDING), as `--close-in` would have a little later.
  const issue = { ...demoOfsIssue(Date.now()), settlement_delay_seconds: 2 };
  await importOfsIssues([issue], space.env);
  let closing: Promise<void> | undefined;
  const result = await runExample(
    {
      ORDERGATE_URL: server.url,
      ORDERGATE_USER: demo.user_id,
      ORDERGATE_PASSWORD: demo.password,
      ORDERGATE_API_KEY: demo.api_key,
    },
    (stdout) => {
      if (closing === undefined && /^PENDING: /m.test(stdout)) closing = importOfsIssues([closedNow(issue)], space.env);
    },
  );
  await closing;
  expect(result.code, `${result.stdout}\n${result.stderr}`).toBe(0);
  const lines = result.stdout.trim().split('\n');
  expect(lines[0]).toMatch(/^placed \S+$/);
  expect(lines.filter((line) => /^[A-Z]+: /.test(line)).map((line) => line.split(':')[0])).toEqual([
    'OMSXMITTED',
    'EXXMITTED',
    'PENDING',
    'EXECUTED',
  ]);
  expect(lines).toContain('allotted 100 at 101.00');
  expect(lines.at(-1)).toBe('settled: holding 100 SBIN at 101.00');
}, 60_000);
