import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';
import LongFirstSequencer from './test/support/sequencer.js';
import { tcpReachable } from './test/support/tcp-probe.js';

const postgresUrl = new URL(process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres');

// Every test process and every process it spawns hashes passwords at the test-only cost, and spawned servers
// do not shed on event-loop delay, as in-process test servers do not (docs/testing.md, "Load shedding").
const env = { PASSWORD_HASH_COST: 'test-only-insecure', SHED_EVENT_LOOP_DELAY_MS: '0' };

const shared = {
  testTimeout: 30_000,
  hookTimeout: 60_000,
  pool: 'forks' as const,
  // A worker runs file after file in one process, importing the app once (each file starts its own servers
  // over its own databases, and closes them: no file sees another's data). docs/testing.md says why.
  isolate: false,
  // dist/ for the CLI and end-to-end tests, built once per run, and the migrated template database.
  globalSetup: ['test/support/global-setup.ts'],
};

/**
 * Fault tests about PostgreSQL alone (several nodes on one database, a database behind a proxy, a stalled
 * commit, the HA topology's failover).
 */
const POSTGRES_ONLY = [
  'test/faults/multi-node.test.ts',
  'test/faults/db-outage.test.ts',
  'test/faults/health.test.ts',
  'test/faults/overload.test.ts',
  'test/faults/failover.test.ts',
];

/** Fault tests whose subject is no database (Redis going away): once is enough. */
const FAULTS_SQLITE_ONLY = ['test/faults/redis-outage.test.ts'];

/**
 * HTTP tests whose subject runs no SQL of its own, or only SQL that other files run on both databases
 * (docs/testing.md says which for each): the request parsing, headers, logs, timeouts, the OpenAPI text, and
 * the limits kept in memory or Redis (call rates, login back-off, cart pacing, stream and socket caps, the
 * event loop's load shedding). They run on SQLite only.
 */
const HTTP_SQLITE_ONLY = [
  'body-parsing',
  'fuzz-regressions',
  'openapi-text',
  'logging',
  'proxy-and-headers',
  'public-url',
  'slow-clients',
  'rate-limit',
  'login-backoff',
  'cart-pacing',
  'stream-limits',
  'socket-connection-cap',
  'load-shedding',
  'duplicate-headers',
].map((name) => `test/http/${name}.test.ts`);

export default defineConfig(async () => {
  const reachable = await tcpReachable(postgresUrl, 5432);
  // What runs SQL that differs between the dialects runs again on PostgreSQL: the store, the OMS, the fault
  // tests, the HTTP contract but for HTTP_SQLITE_ONLY, the two end-to-end tests over two nodes, and the fuzz
  // campaign. Under CI
  // a PostgreSQL that cannot be reached fails the run (its tests cannot connect); elsewhere that run is left
  // out, and this says so.
  const withPostgres = reachable || process.env.CI === 'true';
  if (!withPostgres) {
    process.stderr.write(
      `\nPostgreSQL is not reachable at ${postgresUrl.host}: the PostgreSQL run of test/http, test/store, test/oms, test/faults and the two-node end-to-end tests is SKIPPED.\n\n`,
    );
  }
  return {
    test: {
      // Most files wait on servers, processes and clocks: one worker more than the cores keeps them busy.
      maxWorkers: availableParallelism() + 1,
      sequence: { sequencer: LongFirstSequencer },
      // `npm run coverage`: the lines of src/ the tests run in their own processes (not those of the
      // processes they spawn), kept from falling between changes (docs/testing.md).
      coverage: {
        provider: 'v8' as const,
        include: ['src/**'],
        reporter: ['text-summary', 'json-summary'],
        reportOnFailure: true,
      },
      projects: [
        {
          test: {
            ...shared,
            name: 'sqlite',
            include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
            exclude: ['**/node_modules/**', ...POSTGRES_ONLY],
            env: { ...env, ORDERGATE_TEST_DIALECT: 'sqlite' },
          },
        },
        ...(withPostgres
          ? [
              {
                test: {
                  ...shared,
                  name: 'postgres',
                  include: [
                    'test/http/**/*.test.ts',
                    'test/store/**/*.test.ts',
                    'test/oms/**/*.test.ts',
                    'test/faults/**/*.test.ts',
                    // The exchange simulator over HTTP: its book, its stream's horizon (but its CLI: SQLite).
                    'test/exchange-sim/**/*.test.ts',
                    'test/e2e/message-socket.test.ts',
                    'test/e2e/odin-client.test.ts',
                    // NUL, lone surrogates and overlong strings in every field: PostgreSQL refuses what SQLite keeps.
                    'test/fuzz/api-fuzz.test.ts',
                  ],
                  exclude: [
                    '**/node_modules/**',
                    ...HTTP_SQLITE_ONLY,
                    ...FAULTS_SQLITE_ONLY,
                    'test/exchange-sim/cli.test.ts',
                  ],
                  env: { ...env, ORDERGATE_TEST_DIALECT: 'postgres' },
                },
              },
            ]
          : []),
      ],
    },
  };
});
