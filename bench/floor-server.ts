/**
 * The latency floor (issue 26, target 3), run in its own child process like the bare server: bare Fastify
 * answering the bid's POST with the same envelope as bench/servers.ts, each answer sent only once that bid's
 * rows are durable. The rows are those ordergate wrote for one bid (bench/floor.ts, FloorScript), the next
 * bid's for each request: the requests that arrive while a batch is written are written together in the
 * next one, in one transaction (a group commit, as ordergate's order entry: one batch at a time on SQLite,
 * up to four on PostgreSQL, ordergate's write lanes), and the OMS's rows by a pass every pollMs, as
 * ordergate's embedded OMS writes them: each recorded pass once the bids it took are written. On SQLite the WAL is synced
 * off the event loop after each commit, as ordergate syncs it (src/store/sql/wal-sync.ts). Nothing else: no
 * authentication, no validation, no reads, no logs.
 *
 *   node --import tsx bench/floor-server.ts SCRIPT.json [POLL_MS]
 *
 * It prints one JSON line on stdout: {url}. A request for which the script has no bid left is answered 500
 * (the benchmark fails on it): the script must hold as many bids as the load sends.
 */
import { readFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import Fastify from 'fastify';
import pg from 'pg';
import { WalSync } from '../src/store/sql/wal-sync.js';
import type { FloorScript, Write } from './floor.js';

type Script = Pick<FloorScript, 'dialect' | 'url' | 'entries' | 'entryUsers' | 'passes'>;

const [scriptFile, pollArgument = '50'] = process.argv.slice(2);
const pollMs = Number(pollArgument);
if (scriptFile === undefined || !Number.isInteger(pollMs) || pollMs < 1) {
  process.stderr.write(
    'usage: node --import tsx bench/floor-server.ts SCRIPT.json [POLL_MS, a whole number of at least 1]\n',
  );
  process.exit(2);
}
let script: Script;
try {
  script = JSON.parse(readFileSync(scriptFile, 'utf8')) as Script;
} catch (error) {
  process.stderr.write(
    `floor-server: cannot read the script ${scriptFile}: ${error instanceof Error ? error.message : String(error)}\n`,
  );
  process.exit(2);
}
if (
  (script.dialect !== 'sqlite' && script.dialect !== 'postgres') ||
  !Array.isArray(script.entries) ||
  !Array.isArray(script.passes)
) {
  process.stderr.write(`floor-server: ${scriptFile} is not a latency floor script (bench/floor.ts, FloorScript)\n`);
  process.exit(2);
}
/** Order entry's batches in flight at once: ordergate's write lanes (Store.writeLanes). */
const LANES = script.dialect === 'sqlite' ? 1 : 4;

/** How the floor writes: a batch of bids' entries in one transaction, and one OMS pass's transactions. */
interface Writer {
  /** A batch's entries, in the order of their bidders. */
  writeEntries(entries: readonly { writes: Write[]; user: string }[]): Promise<void>;
  writePass(transactions: readonly Write[][]): Promise<void>;
}

function sqliteWriter(url: string): Writer {
  const file = url.replace(/^sqlite:/, '');
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  // FULL less the sync after each commit, which walSync makes off the event loop (as ordergate's store does).
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('wal_autocheckpoint = 10000');
  const walSync = new WalSync(`${file}-wal`);
  const prepared = new Map<string, Database.Statement>();
  const run = (write: Write) => {
    let statement = prepared.get(write.sql);
    if (statement === undefined) prepared.set(write.sql, (statement = db.prepare(write.sql)));
    if (statement.reader) statement.all(...write.args);
    else statement.run(...write.args);
  };
  const begin = db.prepare('begin immediate');
  const commit = db.prepare('commit');
  return {
    writeEntries(entries) {
      begin.run();
      for (const entry of entries) for (const write of entry.writes) run(write);
      commit.run();
      return walSync.durable();
    },
    writePass(transactions) {
      for (const transaction of transactions) for (const write of transaction) run(write);
      return walSync.durable();
    },
  };
}

/** The numbers n of a statement's array parameters (its `$n::type[]` casts: ordergate's multi-row statements). */
function arrayParameters(sql: string): Set<number> {
  return new Set([...sql.matchAll(/\$(\d+)::\w+\[\]/g)].map((match) => Number(match[1]) - 1));
}

/** A PostgreSQL array literal's elements, as written ('{a,b}' -> 'a,b'). */
const elementsOf = (literal: unknown) => String(literal).slice(1, -1);

/**
 * One statement for the same statement of several bids (ordergate's multi-row statements, each recorded for
 * one bid): its array parameters joined, its other parameters the first bid's. Correct for bids of distinct
 * bidders (each bidder's counters and totals appear once), which the caller ensures.
 */
function merged(writes: readonly Write[]): Write {
  const [first] = writes;
  if (writes.length === 1) return first!;
  const arrays = arrayParameters(first!.sql);
  const [values, ...rest] = first!.args as [unknown[], ...unknown[]];
  const joined = values.map((value, i) => {
    if (!arrays.has(i)) return value;
    const elements = writes.map((write) => elementsOf((write.args[0] as unknown[])[i])).filter((inner) => inner !== '');
    return `{${elements.join(',')}}`;
  });
  return { sql: first!.sql, args: [joined, ...rest], changes: 0 };
}

/**
 * A batch's entries as ordergate's one transaction writes them: bids of distinct bidders together, each
 * statement once for all of them (merged); a bidder seen again starts the next group.
 */
function batchStatements(entries: readonly { writes: Write[]; user: string }[]): Write[] {
  const groups: { writes: Write[]; user: string }[][] = [[]];
  for (const entry of entries) {
    if (groups.at(-1)!.some((other) => other.user === entry.user)) groups.push([]);
    groups.at(-1)!.push(entry);
  }
  return groups.flatMap((group) => {
    const shapes = new Set(group.map((entry) => entry.writes.map((write) => write.sql).join('\u0000')));
    if (shapes.size !== 1) return group.flatMap((entry) => entry.writes);
    return group[0]!.writes.map((_, j) => merged(group.map((entry) => entry.writes[j]!)));
  });
}

function postgresWriter(url: string): Writer {
  // Pipelined, as ordergate's connections are: a transaction's statements go out together, one round trip.
  const entryClients = Array.from({ length: LANES }, () => new pg.Client({ connectionString: url, pipeline: true }));
  const free = [...entryClients];
  const oms = new pg.Client({ connectionString: url, pipeline: true });
  const connected = Promise.all([...entryClients, oms].map((client) => client.connect()));
  const query = (client: pg.Client, write: Write) => {
    const [values, name] = write.args as [unknown[], string | undefined];
    return client.query(name === undefined ? { text: write.sql, values } : { name, text: write.sql, values });
  };
  return {
    async writeEntries(entries) {
      await connected;
      const client = free.pop()!;
      try {
        await Promise.all([
          client.query('begin'),
          ...batchStatements(entries).map((write) => query(client, write)),
          client.query('commit'),
        ]);
      } finally {
        free.push(client);
      }
    },
    async writePass(transactions) {
      await connected;
      await Promise.all(transactions.flat().map((write) => query(oms, write)));
    },
  };
}

const writer = script.dialect === 'sqlite' ? sqliteWriter(script.url) : postgresWriter(script.url);

// Order entry's group commit: every request that arrives while the lanes are busy goes in the next batch.
let waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
let inFlight = 0;
let scheduled = false;
let entriesTaken = 0;
/** Whether a batch has failed (the first failure is reported on stderr). */
let failed = false;
/** The bids whose entries are all written, from the first (batches on several lanes end in any order). */
let entriesWritten = 0;
/** Batches written beyond entriesWritten: each one's first bid, and the next batch's. */
const writtenAhead = new Map<number, number>();

function schedule(): void {
  if (scheduled || waiting.length === 0 || inFlight >= LANES) return;
  scheduled = true;
  // After the poll phase, as ordergate's group commit: the requests of this turn of the loop share the batch.
  setImmediate(() => {
    scheduled = false;
    const batch = waiting;
    waiting = [];
    if (batch.length === 0) return;
    const first = entriesTaken;
    // In the order of their bidders, as ordergate locks them: two batches (or a batch and the OMS) never deadlock.
    const entries = script.entries
      .slice(first, first + batch.length)
      .map((writes, i) => ({ writes, user: script.entryUsers[first + i]! }))
      .sort((a, b) => (a.user < b.user ? -1 : a.user > b.user ? 1 : 0));
    entriesTaken += batch.length;
    inFlight += 1;
    const written =
      entries.length < batch.length
        ? Promise.reject(
            new Error(`the latency floor's script holds ${script.entries.length} bids; the load sent more`),
          )
        : writer.writeEntries(entries);
    written
      .then(
        () => {
          writtenAhead.set(first, first + batch.length);
          for (
            let next = writtenAhead.get(entriesWritten);
            next !== undefined;
            next = writtenAhead.get(entriesWritten)
          ) {
            writtenAhead.delete(entriesWritten);
            entriesWritten = next;
          }
          for (const request of batch) request.resolve();
        },
        (error: Error) => {
          if (!failed) process.stderr.write(`latency floor: a batch failed: ${String(error)}\n`);
          failed = true;
          for (const request of batch) request.reject(error);
        },
      )
      .finally(() => {
        inFlight -= 1;
        schedule();
      });
    schedule();
  });
}

// The OMS's passes: each recorded pass written once the bids it took are (as ordergate's pass takes what has committed).
let nextPass = 0;
function omsPass(): void {
  const due: Write[][] = [];
  while (nextPass < script.passes.length && script.passes[nextPass]!.after <= entriesWritten)
    due.push(...script.passes[nextPass++]!.transactions);
  const done = due.length === 0 ? Promise.resolve() : writer.writePass(due);
  done.then(
    () => setTimeout(omsPass, pollMs),
    (error: unknown) => {
      process.stderr.write(`latency floor: an OMS pass failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
setTimeout(omsPass, pollMs);

const app = Fastify({ logger: false });
let n = 0;
app.post('/transactional/v1/orders/regular', async () => {
  await new Promise<void>((resolve, reject) => {
    waiting.push({ resolve, reject });
    schedule();
  });
  return { status: 'success', code: 's-101', message: 'Order Entry Sent to OMS', data: { orderId: String(++n) } };
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ url })}\n`);
process.once('SIGTERM', () => process.exit(0));
