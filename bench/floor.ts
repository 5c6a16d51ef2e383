/**
 * The write floor of issue 26: what the rows a bid writes until PENDING cost at the least, written by a bare
 * driver loop with no ordergate code, on the same schema and indexes, in transactions of the batches order
 * entry's group commit and the OMS take.
 *
 * Capture: ordergate's own app (the HTTP pipeline through `inject`, order entry, the OMS worker) places
 * about a thousand bids, on a copy of a seed database that already holds the bids of a load (FloorSeed), in
 * the batches the benchmark's nodes reached under the load
 * (each entry batch's bids arriving together: one group commit; an OMS pass after every few of them, as
 * large as the OMS's passes were), and the OMS takes them to PENDING. Every
 * statement that changes the database is recorded with its parameters and the rows it changed (for
 * SQLite, better-sqlite3's Statement#run; for PostgreSQL, pg's Client#query, per connection), and the reads
 * are counted. Replay: the recorded writes run again, transaction by transaction as they committed, on a
 * copy of the database as it was before the capture, through a bare better-sqlite3 connection (WAL,
 * synchronous=FULL, prepared statements) or one bare `pg` client; the replay's CPU (this process; on
 * PostgreSQL also the backend's, from /proc) divided by the bids is the floor. The replay runs REPLAYS times,
 * each on its own copy, and the floor is their median: a thousand bids' writes are a fifth of a second of
 * CPU, and one replay alone moved by up to 2x between runs on the shared machine. The replays also time
 * each commit: their p99 is the disk's commit time in the same run.
 */
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import pino from 'pino';
import { sql } from 'kysely';
import { buildApp } from '../src/app.js';
import { RATE_LIMITS_OFF } from '../src/http/plugins/rate-limit.js';
import { openStore, type Store } from '../src/store/sql/database.js';
import { migrateToLatest } from '../src/store/schema/migrations.js';
import { createOmsWorker, createServices } from '../src/wiring.js';
import { BID_BODY, createBidders, createIssue, PLACE_PATH, type Bidder } from './fixture.js';
import { percentile } from './stats.js';

/** Replays of one capture, each on a fresh copy of the database; the floor is their median. */
const REPLAYS = 3;
const CLOCK_TICKS_PER_SECOND = 100;

/** One recorded write: its SQL, its parameters as given to the driver, and the rows it changed. */
export interface Write {
  sql: string;
  args: unknown[];
  changes: number;
}

/** What the rows of one bid are, per table, and what writing them cost at the least. */
export interface WriteFloor {
  dialect: 'sqlite' | 'postgres';
  bids: number;
  /** The batches it wrote in: bids per order-entry commit, and per OMS pass. */
  entry_batch: number;
  oms_batch: number;
  /** Rows inserted and updated per bid, per table. */
  rows_per_bid: Record<string, { inserted: number; updated: number; deleted: number }>;
  /** All rows changed per bid. */
  row_changes_per_bid: number;
  /** The statements ordergate ran per bid (writes, reads) and its commits per bid. */
  statements_per_bid: { writes: number; reads: number; commits: number };
  /** The floor: the replay's CPU per bid, in this process (and, on PostgreSQL, the backend's). */
  client_cpu_us_per_bid: number;
  backend_cpu_us_per_bid: number | null;
  /** The disk's commit time in the replay: median and p99 of its commits, ms. */
  commit_p50_ms: number;
  commit_p99_ms: number;
}

const tableOf = (sql: string): { kind: 'inserted' | 'updated' | 'deleted'; table: string } | null => {
  const match = /^\s*(insert\s+(?:or\s+\w+\s+)?into|update|delete\s+from)\s+"?([a-z_]+)"?/i.exec(sql);
  if (match === null) return null;
  const verb = match[1]!.toLowerCase();
  return { kind: verb.startsWith('insert') ? 'inserted' : verb === 'update' ? 'updated' : 'deleted', table: match[2]! };
};

const isControl = (sql: string) => /^\s*(begin|commit|rollback|savepoint|release)\b/i.test(sql);
const isCommit = (sql: string) => /^\s*commit\b/i.test(sql);

const median = (values: number[]) => percentile(values, 50);

/** The rows and statements per bid of these writes (in any grouping: they are counted one by one). */
function summarizeWrites(recorded: readonly Write[], bids: number, reads: number) {
  const rows: WriteFloor['rows_per_bid'] = {};
  let writes = 0;
  let commits = 0;
  let changes = 0;
  for (const write of recorded) {
    if (isControl(write.sql)) {
      if (isCommit(write.sql)) commits++;
      continue;
    }
    writes++;
    const target = tableOf(write.sql);
    if (target === null) continue;
    rows[target.table] ??= { inserted: 0, updated: 0, deleted: 0 };
    rows[target.table]![target.kind] += write.changes;
    changes += write.changes;
  }
  const perBid = (n: number) => Number((n / bids).toFixed(2));
  for (const counts of Object.values(rows)) {
    counts.inserted = perBid(counts.inserted);
    counts.updated = perBid(counts.updated);
    counts.deleted = perBid(counts.deleted);
  }
  return {
    rows_per_bid: rows,
    row_changes_per_bid: perBid(changes),
    statements_per_bid: { writes: perBid(writes), reads: perBid(reads), commits: perBid(commits) },
  };
}

/**
 * The batches a floor writes in: `entry` bids committed together by order entry, `oms` taken together by
 * an OMS pass (a whole number of entry batches), `bids` in all (rounded up to whole entry batches).
 */
export interface Batching {
  entry: number;
  oms: number;
  bids: number;
}

/** Where a capture stood after a step of placeBatches: an entry batch answered, or an OMS pass done. */
interface Mark {
  step: 'entry' | 'oms';
  /** How much the recorder had recorded by then. */
  at: number;
}

/** What records a capture: switched on for placeBatches' bids alone, and how much it has recorded. */
interface Recorder {
  recording(on: boolean): void;
  recorded(): number;
}

const NO_RECORDER: Recorder = { recording: () => undefined, recorded: () => 0 };

/**
 * Places the bids in batches of `batching.entry` arriving at once through the app, and runs an OMS pass
 * after every `batching.oms` of them; every bid must end PENDING. Answers the batches it made, and where
 * the recorder stood after each step.
 */
async function placeBatches(
  store: Store,
  bidders: Bidder[],
  batching: Batching,
  recorder: Recorder,
): Promise<{ placed: Batching; marks: Mark[] }> {
  const batch = Math.max(1, Math.round(batching.entry));
  const batches = Math.ceil(batching.bids / batch);
  const omsEvery = Math.max(1, Math.round(batching.oms / batch));
  const services = createServices(store, { tokenTtlSeconds: 86_400 });
  const app = buildApp(services, { logger: false, rateLimits: RATE_LIMITS_OFF, publicUrl: null, trustProxy: false });
  await app.ready();
  const oms = createOmsWorker(store, { logger: pino({ level: 'silent' }) });
  try {
    const before = await store.db
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'PENDING')
      .executeTakeFirstOrThrow();
    const marks: Mark[] = [];
    const mark = (step: Mark['step']) => marks.push({ step, at: recorder.recorded() });
    recorder.recording(true);
    for (let b = 0; b < batches; b++) {
      const answers = await Promise.all(
        Array.from({ length: batch }, (_, i) => {
          // The bidders in turn across the batches, as the load sends them.
          const bidder = bidders[(b * batch + i) % bidders.length]!;
          return app.inject({
            method: 'POST',
            url: PLACE_PATH,
            headers: {
              'content-type': 'application/json',
              authorization: `Bearer ${bidder.token}`,
              'x-api-key': bidder.apiKey,
            },
            payload: BID_BODY,
          });
        }),
      );
      for (const answer of answers)
        if (answer.statusCode !== 200)
          throw new Error(`write floor: a bid was answered ${answer.statusCode}: ${answer.body}`);
      mark('entry');
      if ((b + 1) % omsEvery === 0 || b === batches - 1) {
        while ((await oms.runOnce()) > 0);
        mark('oms');
      }
    }
    recorder.recording(false);
    const pending = await store.db
      .selectFrom('orders')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'PENDING')
      .executeTakeFirstOrThrow();
    const placed = Number(pending.n) - Number(before.n);
    if (placed !== batch * batches)
      throw new Error(`write floor: ${placed} of ${batch * batches} bids reached PENDING`);
    return { placed: { entry: batch, oms: batch * omsEvery, bids: batch * batches }, marks };
  } finally {
    await app.close();
  }
}

/**
 * What every capture of a run starts from: a database with the bidders, the issue and `preload` bids they
 * placed through the app and the OMS took to PENDING, so that the floor writes into tables and indexes of
 * the size the load's database has (a load of a few rounds holds tens of thousands of bids; the same writes
 * into a nearly empty database cost less). Made once per run and dialect; `dispose` removes it.
 */
export interface FloorSeed {
  dialect: 'sqlite' | 'postgres';
  /** The SQLite file, or the PostgreSQL template database's name. */
  location: string;
  bidders: Bidder[];
  dispose(): Promise<void>;
}

/** Bids placed into a floor's database before its capture (see FloorSeed). */
export const FLOOR_PRELOAD_BIDS = 20_000;

/** The bids of the preload, in the batches the first floor is taken in. */
async function preloadBids(store: Store, bidders: Bidder[], batching: Batching, bids: number): Promise<void> {
  if (bids > 0) await placeBatches(store, bidders, { ...batching, bids }, NO_RECORDER);
}

/** A SQLite floor seed: a file of its own, in a directory of its own. */
export async function sqliteFloorSeed(
  bidderCount: number,
  batching: Batching,
  preload = FLOOR_PRELOAD_BIDS,
): Promise<FloorSeed> {
  const dir = mkdtempSync(join(tmpdir(), 'ordergate-floor-seed-'));
  const location = join(dir, 'seed.db');
  const seed = openStore(`sqlite:${location}`);
  try {
    await migrateToLatest(seed);
    const bidders = await createBidders(seed, bidderCount, 'floor');
    await createIssue(seed);
    await preloadBids(seed, bidders, batching, preload);
    await sql`pragma wal_checkpoint(truncate)`.execute(seed.db);
    return { dialect: 'sqlite', location, bidders, dispose: async () => rmSync(dir, { recursive: true, force: true }) };
  } finally {
    await seed.close();
  }
}

/** SQLite: capture through better-sqlite3's Statement#run, replay on a copy with a bare connection. */
export async function sqliteWriteFloor(seed: FloorSeed, batching: Batching): Promise<WriteFloor> {
  const dir = mkdtempSync(join(tmpdir(), 'ordergate-floor-'));
  try {
    const base = join(dir, 'base.db');
    const files = [base, ...Array.from({ length: REPLAYS }, (_, i) => join(dir, `replay-${i}.db`))];
    for (const file of files)
      for (const suffix of ['', '-wal'])
        if (existsSync(seed.location + suffix)) copyFileSync(seed.location + suffix, file + suffix);
    const replayFiles = files.slice(1);
    // One connection: the writes are in commit order already, and are replayed as they ran.
    const { writes, reads, placed } = await captureSqlite(base, seed.bidders, batching, { synced: true });

    const commitMs: number[] = [];
    const cpuUs = replayFiles.map((replayFile) => replaySqlite(replayFile, writes, commitMs));
    const { bids } = placed;
    return {
      dialect: 'sqlite',
      bids,
      entry_batch: placed.entry,
      oms_batch: placed.oms,
      ...summarizeWrites(writes, bids, reads),
      client_cpu_us_per_bid: Math.round(median(cpuUs) / bids),
      backend_cpu_us_per_bid: null,
      commit_p50_ms: Number(percentile(commitMs, 50).toFixed(2)),
      commit_p99_ms: Number(percentile(commitMs, 99).toFixed(2)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** What a capture recorded: the writes in the order they ran, the reads counted, the batches placed. */
interface SqliteCapture {
  writes: Write[];
  reads: number;
  placed: Batching;
  /** After each step of placeBatches, how many writes had been recorded. */
  marks: Mark[];
}

/**
 * Places the bids through the app on this SQLite file (placeBatches) with every statement recorded:
 * better-sqlite3's Statement#run (every connection goes through the prototype), and all/get for a write
 * with RETURNING (an upsert that answers the new value); other reads are counted.
 */
async function captureSqlite(
  file: string,
  bidders: Bidder[],
  batching: Batching,
  options: { synced: boolean },
): Promise<SqliteCapture> {
  const probe = new Database(':memory:');
  const prototype = Object.getPrototypeOf(probe.prepare('select 1')) as {
    run(...args: unknown[]): Database.RunResult;
    all(...args: unknown[]): unknown[];
    get(...args: unknown[]): unknown;
  };
  probe.close();
  const original = { run: prototype.run, all: prototype.all, get: prototype.get };
  const writes: Write[] = [];
  let reads = 0;
  let on = false;
  prototype.run = function (this: Database.Statement, ...args: unknown[]) {
    const result = original.run.apply(this, args);
    if (on) writes.push({ sql: this.source, args: structuredClone(args), changes: result.changes });
    return result;
  };
  prototype.all = function (this: Database.Statement, ...args: unknown[]) {
    const rows = original.all.apply(this, args);
    if (on && tableOf(this.source) !== null)
      writes.push({ sql: this.source, args: structuredClone(args), changes: rows.length });
    else if (on) reads++;
    return rows;
  };
  prototype.get = function (this: Database.Statement, ...args: unknown[]) {
    const row = original.get.apply(this, args);
    if (on && tableOf(this.source) !== null)
      writes.push({ sql: this.source, args: structuredClone(args), changes: row === undefined ? 0 : 1 });
    else if (on) reads++;
    return row;
  };
  // Unsynced, the capture's commits are faster, and the writes the same; but the request audit's batches,
  // written every 20 ms, then take more bids each (the write floor keeps the synced capture's).
  const store = openStore(`sqlite:${file}`, options.synced ? {} : { sqliteDataSync: async () => undefined });
  try {
    const { placed, marks } = await placeBatches(store, bidders, batching, {
      recording: (value) => (on = value),
      recorded: () => writes.length,
    });
    return { writes, reads, placed, marks };
  } finally {
    Object.assign(prototype, original);
    await store.close();
  }
}

/**
 * Runs the writes on this database file through one bare connection, as ordergate's connection is set up
 * (WAL, synchronous=FULL), each statement prepared once beforehand; adds each commit's time (ms) to
 * `commitMs` and answers the CPU the writes took (us, this process: fsync's system time included).
 */
function replaySqlite(file: string, writes: readonly Write[], commitMs: number[]): number {
  const replay = new Database(file);
  try {
    replay.pragma('journal_mode = WAL');
    replay.pragma('synchronous = FULL');
    replay.pragma('foreign_keys = ON');
    replay.pragma('wal_autocheckpoint = 10000');
    const prepared = new Map<string, Database.Statement>();
    for (const write of writes) if (!prepared.has(write.sql)) prepared.set(write.sql, replay.prepare(write.sql));
    const cpu = process.cpuUsage();
    for (const write of writes) {
      const replayed = prepared.get(write.sql)!;
      if (isCommit(write.sql)) {
        const started = performance.now();
        replayed.run(...write.args);
        commitMs.push(performance.now() - started);
      } else if (replayed.reader) replayed.all(...write.args);
      else replayed.run(...write.args);
    }
    // The rows are in the database file only once the WAL is checkpointed: the server's connection does it
    // inside a commit every wal_autocheckpoint pages (a load of thousands of bids does); a replay of a
    // thousand bids' writes does not get that far, so it checkpoints here, within the CPU measured.
    replay.pragma('wal_checkpoint(TRUNCATE)');
    const used = process.cpuUsage(cpu);
    return used.user + used.system;
  } finally {
    replay.close();
  }
}

/** User + system CPU seconds of a process so far. */
export function cpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/stat`);
}

/** The CPU seconds so far (user and system) of a process's main thread: its event loop, for Node. */
export function mainThreadCpuSeconds(pid: number): number {
  return statCpuSeconds(`/proc/${pid}/task/${pid}/stat`);
}

function statCpuSeconds(path: string): number {
  const stat = readFileSync(path, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/**
 * A PostgreSQL floor seed: a database of its own, the template of every capture's and replay's database.
 * `admin(statement)` runs a statement on the server's maintenance database; `urlOf(name)` is a database's URL.
 */
export async function postgresFloorSeed(
  admin: (statement: string) => Promise<void>,
  urlOf: (name: string) => string,
  bidderCount: number,
  batching: Batching,
  preload = FLOOR_PRELOAD_BIDS,
): Promise<FloorSeed> {
  const location = `ordergate_floor_seed_${process.pid}`;
  await admin(`drop database if exists ${location} with (force)`);
  await admin(`create database ${location}`);
  const dispose = () => admin(`drop database if exists ${location} with (force)`);
  const seed = openStore(urlOf(location));
  let made = false;
  try {
    await migrateToLatest(seed);
    const bidders = await createBidders(seed, bidderCount, 'floor');
    await createIssue(seed);
    await preloadBids(seed, bidders, batching, preload);
    await sql`vacuum analyze`.execute(seed.db);
    await sql`checkpoint`.execute(seed.db);
    made = true;
    return { dialect: 'postgres', location, bidders, dispose };
  } finally {
    await seed.close();
    if (!made) await dispose();
  }
}

/**
 * PostgreSQL: capture through pg's Client#query (each connection's statements apart, a transaction taken
 * whole at its COMMIT) on a database made from the seed, replay on others made from it with one bare client.
 */
export async function postgresWriteFloor(
  admin: (statement: string) => Promise<void>,
  urlOf: (name: string) => string,
  seed: FloorSeed,
  batching: Batching,
): Promise<WriteFloor> {
  const base = `ordergate_floor_base_${process.pid}`;
  const replayNames = Array.from({ length: REPLAYS }, (_, i) => `ordergate_floor_replay_${process.pid}_${i}`);
  for (const name of [base, ...replayNames]) {
    await admin(`drop database if exists ${name} with (force)`);
    await admin(`create database ${name} template ${seed.location}`);
  }
  try {
    const { transactions, reads, placed } = await capturePostgres(urlOf(base), seed.bidders, batching);

    const commitMs: number[] = [];
    const replays: { clientUs: number; backendUs: number }[] = [];
    for (const name of replayNames) replays.push(await replayPostgres(urlOf(name), transactions, commitMs));
    // The rows each table took, from the statistics of the last replay's database (a multi-row statement with
    // CTEs writes several tables): the database is new, so its counts are the replay's.
    const client = new pg.Client({ connectionString: urlOf(replayNames.at(-1)!) });
    await client.connect();
    const stats = await client.query<{ relname: string; ins: string; upd: string; del: string }>(
      'select relname, n_tup_ins as ins, n_tup_upd as upd, n_tup_del as del from pg_stat_user_tables where n_tup_ins + n_tup_upd + n_tup_del > 0',
    );
    await client.end();
    const { bids } = placed;
    const summary = summarizeWrites(transactions.flat(), bids, reads);
    const perBid = (n: string) => Number((Number(n) / bids).toFixed(2));
    summary.rows_per_bid = Object.fromEntries(
      stats.rows.map((row) => [
        row.relname,
        { inserted: perBid(row.ins), updated: perBid(row.upd), deleted: perBid(row.del) },
      ]),
    );
    summary.row_changes_per_bid = Number(
      stats.rows.reduce((sum, row) => sum + (Number(row.ins) + Number(row.upd) + Number(row.del)) / bids, 0).toFixed(2),
    );
    return {
      dialect: 'postgres',
      bids,
      entry_batch: placed.entry,
      oms_batch: placed.oms,
      ...summary,
      client_cpu_us_per_bid: Math.round(median(replays.map((replay) => replay.clientUs)) / bids),
      backend_cpu_us_per_bid: Math.round(median(replays.map((replay) => replay.backendUs)) / bids),
      commit_p50_ms: Number(percentile(commitMs, 50).toFixed(2)),
      commit_p99_ms: Number(percentile(commitMs, 99).toFixed(2)),
    };
  } finally {
    for (const name of [...replayNames, base]) await admin(`drop database if exists ${name} with (force)`);
  }
}

/** What a PostgreSQL capture recorded: each transaction whole at its COMMIT (a write outside one alone), in commit order. */
interface PostgresCapture {
  transactions: Write[][];
  reads: number;
  placed: Batching;
  /** After each step of placeBatches, how many transactions had been recorded. */
  marks: Mark[];
}

/**
 * Places the bids through the app on this database (placeBatches) with every statement recorded through
 * pg's Client#query, each connection's apart, a transaction taken whole at its COMMIT.
 */
async function capturePostgres(url: string, bidders: Bidder[], batching: Batching): Promise<PostgresCapture> {
  type Query = (this: pg.Client, ...args: unknown[]) => unknown;
  const prototype = pg.Client.prototype as unknown as { query: Query };
  const original = prototype.query;
  const open = new Map<pg.Client, Write[]>();
  const transactions: Write[][] = [];
  let reads = 0;
  let on = false;
  prototype.query = function (this: pg.Client, ...args: unknown[]) {
    // (text, values), or a named prepared statement's { name, text, values } (kept as it is for the replay).
    const [first, second] = args;
    const config =
      typeof first === 'object' && first !== null && typeof (first as { text?: unknown }).text === 'string'
        ? (first as pg.QueryConfig)
        : null;
    const sql = config?.text ?? first;
    if (!on || typeof sql !== 'string' || typeof args.at(-1) === 'function') return original.apply(this, args);
    const pending = original.apply(this, args) as Promise<pg.QueryResult>;
    const values = config === null ? second : config.values;
    return pending.then((result) => {
      const write: Write = {
        sql,
        args: [
          values === undefined ? [] : structuredClone(values),
          ...(config?.name === undefined ? [] : [config.name]),
        ],
        changes: result.rowCount ?? 0,
      };
      const mine = open.get(this) ?? [];
      if (/^\s*begin\b/i.test(sql)) open.set(this, [write]);
      else if (isCommit(sql)) {
        transactions.push([...mine, write]);
        open.delete(this);
      } else if (/^\s*rollback\b/i.test(sql)) open.delete(this);
      else if (tableOf(sql) !== null || /^\s*with\b/i.test(sql)) {
        if (open.has(this)) mine.push(write);
        else transactions.push([write]);
      } else reads++;
      return result;
    });
  };
  const store = openStore(url);
  try {
    const { placed, marks } = await placeBatches(store, bidders, batching, {
      recording: (value) => (on = value),
      recorded: () => transactions.length,
    });
    return { transactions, reads, placed, marks };
  } finally {
    prototype.query = original;
    await store.close();
  }
}

/**
 * Runs the transactions on this database through one bare `pg` client (named statements as they were
 * named); adds each commit's time (ms) to `commitMs` and answers the CPU (us) of this process and of the
 * client's backend, with the statistics of the writes flushed for reading.
 */
async function replayPostgres(
  url: string,
  transactions: readonly Write[][],
  commitMs: number[],
): Promise<{ clientUs: number; backendUs: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const backend = Number((await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid);
    const backendBefore = cpuSeconds(backend);
    const cpu = process.cpuUsage();
    for (const transaction of transactions) {
      for (const write of transaction) {
        if (isCommit(write.sql)) {
          const started = performance.now();
          await client.query(write.sql);
          commitMs.push(performance.now() - started);
        } else {
          const [values, name] = write.args as [unknown[], string | undefined];
          await client.query(name === undefined ? { text: write.sql, values } : { name, text: write.sql, values });
        }
      }
    }
    const used = process.cpuUsage(cpu);
    const backendUs = (cpuSeconds(backend) - backendBefore) * 1e6;
    await client.query('select pg_stat_force_next_flush()');
    await client.query('select 1');
    return { clientUs: used.user + used.system, backendUs };
  } finally {
    await client.end();
  }
}

/**
 * The latency floor's script (issue 26, target 3; bench/floor-server.ts serves it): the rows ordergate writes
 * for each bid, recorded one bid at a time, and those of the OMS's passes, so that a bare server can write
 * exactly them, in the batches its own load makes, and answer each bid after its rows are durable.
 */
export interface FloorScript {
  dialect: 'sqlite' | 'postgres';
  /** The database the floor server writes into: as the capture's was before it (a SQLite file, or a PostgreSQL URL). */
  url: string;
  /**
   * Each bid's order-entry writes: its transaction's statements without BEGIN and COMMIT, and whatever else
   * was written before the next bid was placed (the request audit's batch, written beside the request).
   */
  entries: Write[][];
  /** Each entry's bidder: a batch writes its entries in the order of their bidders' ids, as ordergate takes its locks. */
  entryUsers: string[];
  /** The OMS's passes in order, each due once `after` bids' entries are written: its transactions as they ran. */
  passes: { after: number; transactions: Write[][] }[];
  /** The rows the script's bids write, per bid (SQLite; null for PostgreSQL, whose statements write several tables), and the OMS's batches. */
  row_changes_per_bid: number | null;
  oms_batch: number;
  /** Removes the floor server's database. */
  dispose(): Promise<void>;
}

/** A capture's writes cut at its marks: each entry mark closes a bid's writes, each OMS mark a pass's. */
function scriptOf(
  transactions: Write[][],
  marks: readonly Mark[],
  bidders: readonly Bidder[],
): Pick<FloorScript, 'entries' | 'entryUsers' | 'passes'> {
  const entries: Write[][] = [];
  const passes: FloorScript['passes'] = [];
  let from = 0;
  for (const { step, at } of marks) {
    const segment = transactions.slice(from, at);
    from = at;
    if (step === 'entry') entries.push(segment.flat().filter((write) => !isControl(write.sql)));
    else passes.push({ after: entries.length, transactions: segment });
  }
  // One bid a batch: the k-th bid is the k-th bidder's in turn (placeBatches).
  return { entries, entryUsers: entries.map((_, k) => bidders[k % bidders.length]!.userId), passes };
}

/** SQLite's recorded writes, in order, cut into transactions: BEGIN to COMMIT, or a statement alone. */
function sqliteTransactions(writes: readonly Write[]): Write[][] {
  const transactions: Write[][] = [];
  let open: Write[] | null = null;
  for (const write of writes) {
    if (open !== null) {
      open.push(write);
      if (isCommit(write.sql) || /^\s*rollback\b/i.test(write.sql)) open = null;
    } else if (/^\s*begin\b/i.test(write.sql)) transactions.push((open = [write]));
    else transactions.push([write]);
  }
  return transactions;
}

/**
 * Records the script of `bids` bids (placed one at a time through the app, an OMS pass after every
 * `omsBatch` of them) on a copy of the seed, and makes a second copy as the seed was: the floor server's.
 */
export async function latencyFloorScript(
  seed: FloorSeed,
  bids: number,
  omsBatch: number,
  postgres?: { admin: (statement: string) => Promise<void>; urlOf: (name: string) => string },
): Promise<FloorScript> {
  const batching: Batching = { entry: 1, oms: Math.max(1, Math.round(omsBatch)), bids };
  if (seed.dialect === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'ordergate-latency-floor-'));
    const dispose = async () => rmSync(dir, { recursive: true, force: true });
    try {
      const [capture, serve] = [join(dir, 'capture.db'), join(dir, 'serve.db')];
      for (const file of [capture, serve])
        for (const suffix of ['', '-wal'])
          if (existsSync(seed.location + suffix)) copyFileSync(seed.location + suffix, file + suffix);
      const { writes, reads, placed, marks } = await captureSqlite(capture, seed.bidders, batching, { synced: false });
      for (const suffix of ['', '-wal', '-shm']) rmSync(capture + suffix, { force: true });
      const transactions = sqliteTransactions(writes);
      // The marks count writes; the script is cut by transactions (those that had ended by each mark).
      let ended = 0;
      let written = 0;
      const cut = marks.map(({ step, at }) => {
        while (ended < transactions.length && written + transactions[ended]!.length <= at)
          written += transactions[ended++]!.length;
        return { step, at: ended };
      });
      const { row_changes_per_bid } = summarizeWrites(writes, placed.bids, reads);
      return {
        dialect: 'sqlite',
        url: `sqlite:${serve}`,
        ...scriptOf(transactions, cut, seed.bidders),
        row_changes_per_bid,
        oms_batch: placed.oms,
        dispose,
      };
    } catch (error) {
      await dispose();
      throw error;
    }
  }
  if (postgres === undefined) throw new Error('a PostgreSQL latency floor needs its administrator');
  const { admin, urlOf } = postgres;
  const [capture, serve] = [`ordergate_latency_capture_${process.pid}`, `ordergate_latency_floor_${process.pid}`];
  const dispose = () => admin(`drop database if exists ${serve} with (force)`);
  for (const name of [capture, serve]) {
    await admin(`drop database if exists ${name} with (force)`);
    await admin(`create database ${name} template ${seed.location}`);
  }
  // The capture's commits need not wait for the disk (its database is thrown away): its writes are the same.
  await admin(`alter database ${capture} set synchronous_commit = off`);
  try {
    const { transactions, marks, placed } = await capturePostgres(urlOf(capture), seed.bidders, batching);
    return {
      dialect: 'postgres',
      url: urlOf(serve),
      ...scriptOf(transactions, marks, seed.bidders),
      row_changes_per_bid: null,
      oms_batch: placed.oms,
      dispose,
    };
  } catch (error) {
    await dispose();
    throw error;
  } finally {
    await admin(`drop database if exists ${capture} with (force)`);
  }
}
