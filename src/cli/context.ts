/**
 * What every `ordergate` command shares: where it reads and writes (stdin, stdout for the result, stderr for
 * hints), and the store it works on, opened from DATABASE_URL, migrated first and always closed, so that
 * the command exits as soon as its work is done.
 */
import { readFile } from 'node:fs/promises';
import { loadConfig, type Config } from '../config.js';
import { authOptions, AuthService } from '../services/auth.js';
import { AdminService } from '../services/admin.js';
import { OfsOfferRepository } from '../store/ofs/offers.js';
import { FundsService } from '../services/funds.js';
import { openStore, type Store } from '../store/sql/database.js';
import { FundsRepository } from '../store/funds/funds.js';
import { migrateToLatest } from '../store/schema/migrations.js';
import { OfsIssueRepository } from '../store/ofs/issues.js';
import { TradingHolidayRepository } from '../store/ofs/trading-holidays.js';
import { UserRepository } from '../store/access/users.js';
import { passwordHasherFor } from '../auth/credentials.js';

export interface CliIo {
  stdin: NodeJS.ReadableStream;
  /** The result, for scripts to read. */
  stdout: { write(text: string): unknown };
  /** Hints and logs. */
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

export const processIo = (): CliIo => ({
  stdin: process.stdin,
  stdout: process.stdout,
  stderr: process.stderr,
  env: process.env,
});

/** A failure the operator can fix; its message is the one-line reason the command prints. */
export class CliError extends Error {
  override name = 'CliError';

  /** The exit code (1 unless said otherwise: 2, the command did part of its work, as it printed). */
  constructor(
    message: string,
    readonly exitCode: number = 1,
  ) {
    super(message);
  }
}

/** A text file's content; a CliError naming the file when it cannot be read. */
export async function readTextFile(file: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new CliError(`${file}: ${code === 'ENOENT' ? 'no such file' : (error as Error).message}`);
  }
}

export interface Workspace {
  config: Config;
  store: Store;
  users: UserRepository;
  issues: OfsIssueRepository;
  offers: OfsOfferRepository;
  admin: AdminService;
  funds: FundsService;
  /** Logins as the server takes them: every rule of the settings (second factor, daily end, API key). */
  auth: AuthService;
}

export async function withWorkspace<T>(io: CliIo, work: (workspace: Workspace) => Promise<T>): Promise<T> {
  const config = loadConfig(io.env);
  const store = openStore(config.databaseUrl);
  try {
    await migrateToLatest(store);
    const users = new UserRepository(store.db, store.dialect);
    const issues = new OfsIssueRepository(store.db);
    const funds = new FundsService(store, new FundsRepository(store.db, store.dialect), users);
    const offers = new OfsOfferRepository(store.db);
    return await work({
      config,
      store,
      users,
      issues,
      offers,
      admin: new AdminService(
        users,
        offers,
        Date.now,
        passwordHasherFor(config.passwordHashCost),
        new TradingHolidayRepository(store.db),
      ),
      auth: new AuthService(
        users,
        config.tokenTtlSeconds * 1000,
        Date.now,
        authOptions(config.limits, config.sessionDailyEnd, passwordHasherFor(config.passwordHashCost)),
      ),
      funds,
    });
  } finally {
    await store.close();
  }
}

/** Writes `name: value` lines, the format of every command's result that is not JSON. */
export function writeFields(io: CliIo, fields: [name: string, value: string][]): void {
  io.stdout.write(fields.map(([name, value]) => `${name}: ${value}\n`).join(''));
}

/** An instant as ISO 8601 in UTC, without milliseconds when they are zero. */
export function isoInstant(ms: number): string {
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** The JSON of an operator's file, or a CliError naming the file and what is wrong with it. */
export async function readJsonFile(file: string): Promise<unknown> {
  const text = await readTextFile(file);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new CliError(`${file}: not valid JSON: ${(error as Error).message}`);
  }
}

/** Resolves on the first SIGTERM or SIGINT. */
export function untilSignalled(): Promise<NodeJS.Signals> {
  return new Promise((resolve) => {
    const onSignal = (signal: NodeJS.Signals) => {
      process.off('SIGTERM', onSignal);
      process.off('SIGINT', onSignal);
      resolve(signal);
    };
    process.on('SIGTERM', onSignal);
    process.on('SIGINT', onSignal);
  });
}
