/**
 * `ordergate exchange-sim`: the simulated exchange as an exchange of its own (src/exchange-sim/,
 * docs/design/exchange-sim.md): the e-OFS Web API's shape for NSE_EQ and BSE_EQ on HOST:PORT, over the
 * database `serve` uses (DATABASE_URL), taking its own allocation step, until SIGTERM or SIGINT; with
 * `--ibbs-*`, BSE's iBBS files on two folders as well (src/exchange-sim/ibbs-desk.ts).
 */
import { resolve } from 'node:path';
import { Command, Option } from 'commander';
import type { ApiUser } from '../exchange-sim/sessions.js';
import { CliError, readJsonFile, untilSignalled, writeFields, type CliIo } from './context.js';

const ENV_USER = ['EXCHANGE_SIM_MEMBER_CODE', 'EXCHANGE_SIM_LOGIN_ID', 'EXCHANGE_SIM_PASSWORD'] as const;

/** The API users of a users file: a JSON array of {memberCode, loginId, password}; a CliError naming what is wrong. */
async function usersOfFile(file: string): Promise<ApiUser[]> {
  const json = await readJsonFile(file);
  if (!Array.isArray(json) || json.length === 0)
    throw new CliError(`${file}: must be a JSON array of API users {"memberCode", "loginId", "password"}`);
  return json.map((entry: unknown, i) => {
    const user = (entry ?? {}) as Record<string, unknown>;
    for (const field of ['memberCode', 'loginId', 'password'] as const) {
      if (typeof user[field] !== 'string' || user[field] === '')
        throw new CliError(`${file}: [${i}].${field} must be a non-empty string`);
    }
    return {
      memberCode: user.memberCode as string,
      loginId: user.loginId as string,
      password: user.password as string,
    };
  });
}

/** The one API user of the environment, or null when none of its variables is set. */
function userOfEnvironment(env: NodeJS.ProcessEnv): ApiUser | null {
  const values = ENV_USER.map((name) => env[name] ?? '');
  if (values.every((value) => value === '')) return null;
  const missing = ENV_USER.filter((_, i) => values[i] === '');
  if (missing.length > 0) throw new CliError(`the API user of the environment lacks ${missing.join(', ')}`);
  const [memberCode, loginId, password] = values as [string, string, string];
  return { memberCode, loginId, password };
}

function portOf(text: string): number {
  const port = Number(text);
  if (!/^\d+$/.test(text) || port > 65_535) throw new CliError(`--port: ${text} is not a port from 0 to 65535`);
  return port;
}

/** The iBBS desk's options (all three flags or none), or null; a CliError for a part of them. */
function ibbsOf(options: {
  ibbsMember?: string;
  ibbsUploadDir?: string;
  ibbsDownloadDir?: string;
}): { memberCode: string; uploadDir: string; downloadDir: string } | null {
  const { ibbsMember, ibbsUploadDir, ibbsDownloadDir } = options;
  if (ibbsMember === undefined && ibbsUploadDir === undefined && ibbsDownloadDir === undefined) return null;
  if (ibbsMember === undefined || ibbsUploadDir === undefined || ibbsDownloadDir === undefined)
    throw new CliError('--ibbs-member, --ibbs-upload-dir and --ibbs-download-dir go together: give all three');
  if (!/^[0-9A-Z]{1,12}$/.test(ibbsMember))
    throw new CliError(`--ibbs-member: "${ibbsMember}" is not a member code of 1 to 12 of [0-9A-Z]`);
  if (resolve(ibbsUploadDir) === resolve(ibbsDownloadDir))
    throw new CliError('--ibbs-upload-dir and --ibbs-download-dir must be two folders');
  return { memberCode: ibbsMember, uploadDir: resolve(ibbsUploadDir), downloadDir: resolve(ibbsDownloadDir) };
}

export function exchangeSimCommand(io: CliIo): Command {
  return new Command('exchange-sim')
    .description(
      'serve the simulated exchange over the e-OFS Web API shape (NSE_EQ and BSE_EQ under /<exchange>/api) over DATABASE_URL, with its own allocation step, until SIGTERM or SIGINT',
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--port <port>', 'port to listen on (0: a free one)', '9400')
    .option(
      '--users-file <file>',
      'a JSON array of the API users that may log in: [{"memberCode", "loginId", "password"}]',
    )
    .addOption(
      new Option('--token-ttl-seconds <seconds>', "a session token's lifetime (answered as expiresIn)").default('600'),
    )
    .option('--ibbs-member <code>', "serve BSE's iBBS files for this trading member (with the two folders below)")
    .option('--ibbs-upload-dir <dir>', "the member's uploads (the bse-ibbs link's outbox), read by the desk")
    .option('--ibbs-download-dir <dir>', "the exchange's downloads (the bse-ibbs link's inbox), written by the desk")
    .addHelpText(
      'after',
      [
        '',
        'Without --users-file, one API user from EXCHANGE_SIM_MEMBER_CODE, EXCHANGE_SIM_LOGIN_ID and',
        'EXCHANGE_SIM_PASSWORD. Passwords are never logged.',
        '',
        'Prints on stdout once it listens:',
        '  url: http://<host>:<port>',
        '  NSE_EQ: <url>/NSE_EQ/api',
        '  BSE_EQ: <url>/BSE_EQ/api',
        'and with --ibbs-member, --ibbs-upload-dir and --ibbs-download-dir (all three or none):',
        '  ibbs-uploads: <dir>',
        '  ibbs-downloads: <dir>',
        'Logs are JSON lines on stderr.',
      ].join('\n'),
    )
    .action(
      async (options: {
        host: string;
        port: string;
        usersFile?: string;
        tokenTtlSeconds: string;
        ibbsMember?: string;
        ibbsUploadDir?: string;
        ibbsDownloadDir?: string;
      }) => {
        // From the start: a signal that comes while the store opens still ends the command cleanly.
        const signalled = untilSignalled();
        const port = portOf(options.port);
        const ttl = Number(options.tokenTtlSeconds);
        if (!/^\d+$/.test(options.tokenTtlSeconds) || ttl < 60 || ttl > 86_400)
          throw new CliError(`--token-ttl-seconds: ${options.tokenTtlSeconds} is not a whole number from 60 to 86400`);
        const ibbs = ibbsOf(options);
        const fromEnv = userOfEnvironment(io.env);
        const users = options.usersFile !== undefined ? await usersOfFile(options.usersFile) : fromEnv ? [fromEnv] : [];
        if (users.length === 0) {
          throw new CliError(
            `no API user: give --users-file or set ${ENV_USER.join(', ')} (see ordergate exchange-sim --help)`,
          );
        }
        // Loaded only here, so that the other commands start fast.
        const [
          { loadConfig },
          { createLogger },
          { openStore, SERVER_SQLITE_BUSY_TIMEOUT_MS },
          { migrateToLatest },
          { createExchangeSim },
          { SIM_EXCHANGES },
        ] = await Promise.all([
          import('../config.js'),
          import('../logger.js'),
          import('../store/sql/database.js'),
          import('../store/schema/migrations.js'),
          import('../exchange-sim/exchange-sim.js'),
          import('../exchange-sim/wire.js'),
        ]);
        const config = loadConfig(io.env);
        const logger = createLogger(config.logLevel);
        // As `serve` opens it: a call waits less than a second for another process's SQLite write lock.
        const store = openStore(config.databaseUrl, { sqliteBusyTimeoutMs: SERVER_SQLITE_BUSY_TIMEOUT_MS });
        try {
          await migrateToLatest(store);
          let sim;
          try {
            sim = await createExchangeSim({
              store,
              users,
              host: options.host,
              port,
              tokenTtlSeconds: ttl,
              logger: logger.child({ component: 'exchange-sim' }),
              ...(ibbs !== null && { ibbs }),
            });
          } catch (error) {
            throw new CliError(`cannot start: ${error instanceof Error ? error.message : String(error)}`);
          }
          writeFields(io, [
            ['url', sim.url],
            ...SIM_EXCHANGES.map((exchange): [string, string] => [exchange, sim.baseUrl(exchange)]),
            ...(ibbs === null
              ? []
              : ([
                  ['ibbs-uploads', ibbs.uploadDir],
                  ['ibbs-downloads', ibbs.downloadDir],
                ] as [string, string][])),
          ]);
          const signal = await signalled;
          logger.info({ signal }, 'exchange simulator shutting down');
          await sim.close();
        } finally {
          await store.close();
        }
      },
    );
}
