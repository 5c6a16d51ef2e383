/**
 * `npm run bench:instructions`: the instructions a bid costs, counted by valgrind's callgrind, so that a
 * change worth a few percent can be measured on this shared machine, where `npm run bench`'s CPU per bid
 * moves by more than that between rounds (docs/design/performance.md, "Instructions per bid").
 *
 * ordergate as `npm start` runs it (SQLite, the OMS embedded) and the bare Fastify server of the HTTP
 * floor each run under callgrind with instrumentation off; after a warm-up (the JIT's tiers reached,
 * every bidder's rows present; the optimizing compiler still runs for thousands of bids, so the default is
 * 6,000) it is switched on (`callgrind_control -i on`), a fixed number of bids is
 * sent in waves of one bid per connection, the run waits until the OMS has taken every bid to `PENDING`,
 * and the counts are dumped (`callgrind_control -d`), then split by where they ran (SQLite, V8's
 * optimizing compiler, its collector, its builtins, the JIT's code, the rest of Node and V8, libc) from
 * `callgrind_annotate`. Counted: every instruction the process ran in user
 * space on every thread (JavaScript, V8's compilers and collector, SQLite, libuv's pool), not the
 * kernel's (fsync, the sockets). The same build counts within about a percent from run to run (the OMS's
 * timers and the batches the waves make are the residue); an instruction is not a fixed time (cache
 * misses are not counted), so this tells which of two builds does less work, not how fast either is.
 *
 *   npm run bench:instructions                         1,000 bids after 6,000, in waves of 20, twice
 *   npm run bench:instructions -- --bids 2000 --runs 3 --no-bare
 *   npm run bench:instructions -- --postgres --no-bare    the node on PostgreSQL (the backends not counted)
 *
 * Needs valgrind (Debian's package) and a built dist/ (`npm run build`). Prints one line per run and the
 * median, and writes bench-results/instructions-<time>.json.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Command } from 'commander';
import { openStore, type Store } from '../src/store/sql/database.js';
import { migrateToLatest } from '../src/store/schema/migrations.js';
import { BID_BODY, createBidders, createIssue, PLACE_PATH, type Bidder } from './fixture.js';
import {
  freePort,
  postgresAdmin,
  postgresUrlOf,
  ROOT,
  startNodeFlags,
  stopChild,
  waitUntilAnswering,
  wholeNumber,
} from './processes.js';
import { median } from './stats.js';

const options = new Command('bench:instructions')
  .option('--bids <n>', 'bids counted per run', wholeNumber, 1000)
  .option('--warmup <n>', 'bids sent before counting starts (the JIT still optimizes for thousands)', wholeNumber, 6000)
  .option('--wave <n>', 'bids sent together (one per connection, each by another bidder)', wholeNumber, 20)
  .option('--runs <n>', 'runs of each target (each a new server and database)', wholeNumber, 2)
  .option('--no-bare', 'skip the bare Fastify server (the HTTP floor in instructions)')
  .option(
    '--postgres',
    "serve from a new PostgreSQL database (BENCH_POSTGRES_URL's server) instead of SQLite; the node's instructions alone are counted",
  )
  .option('--keep', 'keep the callgrind dumps (and the databases) for callgrind_annotate')
  .option(
    '--jit-names',
    "name the JIT's code by its JavaScript function (node --perf-basic-prof) and list ordergate's functions by inclusive instructions; the counts differ from a run without it",
  )
  .parse()
  .opts<{
    bids: number;
    warmup: number;
    wave: number;
    runs: number;
    bare: boolean;
    keep?: boolean;
    jitNames?: boolean;
    postgres?: boolean;
  }>();

const log = (line: string) => process.stderr.write(`${line}\n`);

interface Counted {
  process: ChildProcess;
  pid: number;
  url: string;
  outDir: string;
}

function valgrindArguments(outDir: string): string[] {
  return ['--tool=callgrind', '--instr-atstart=no', `--callgrind-out-file=${join(outDir, 'callgrind.out.%p')}`];
}

async function startOrdergate(databaseUrl: string, outDir: string, logFile: string): Promise<Counted> {
  const port = await freePort();
  // --perf-basic-prof also opens V8's log (isolate-*-v8.log in the working directory): kept in outDir.
  const jitFlags = options.jitNames
    ? [
        '--perf-basic-prof',
        '--interpreted-frames-native-stack',
        `--logfile=${join(outDir, 'v8.log')}`,
        '--no-logfile-per-isolate',
      ]
    : [];
  const child = spawn(
    'valgrind',
    [...valgrindArguments(outDir), process.execPath, ...startNodeFlags(), ...jitFlags, join(ROOT, 'dist', 'main.js')],
    {
      cwd: ROOT,
      env: {
        // This environment, so that valgrind and callgrind_control agree on where vgdb's pipes are, but no
        // HOST (ordergate binds 127.0.0.1 by default): valgrind names the pipes after $HOST, and
        // callgrind_control, looking for them under the machine's name, would never reach the server. No
        // NODE_OPTIONS either: what is counted is what `npm start` runs.
        ...Object.fromEntries(
          Object.entries(process.env).filter(([name]) => name !== 'HOST' && name !== 'NODE_OPTIONS'),
        ),
        DATABASE_URL: databaseUrl,
        PORT: String(port),
        RATE_LIMIT_ORDERS_PER_SECOND: '0',
        // Everything runs tens of times slower under callgrind: the load shedder's thresholds and the request
        // timeout, set for real time, would refuse bids that are only slow.
        SHED_EVENT_LOOP_DELAY_MS: '0',
        SHED_COMMIT_WAIT_MS: '0',
        REQUEST_TIMEOUT_MS: '600000',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  const output: string[] = [];
  child.stderr!.on('data', (chunk: Buffer) => output.push(chunk.toString()));
  child.once('exit', () => writeFileSync(logFile, output.join('')));
  const url = `http://127.0.0.1:${port}`;
  // Under callgrind (instrumentation off) the start takes several times its usual second.
  await waitUntilAnswering(`${url}/health/live`, child, 300_000);
  return { process: child, pid: child.pid!, url, outDir };
}

async function startBare(outDir: string): Promise<Counted> {
  const child = spawn(
    'valgrind',
    [...valgrindArguments(outDir), process.execPath, '--import', 'tsx', join(ROOT, 'bench', 'servers.ts'), 'bare'],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  const { url } = JSON.parse(line) as { url: string };
  return { process: child, pid: child.pid!, url, outDir };
}

function callgrindControl(pid: number, ...command: string[]): void {
  const result = spawnSync('callgrind_control', [...command, String(pid)], { encoding: 'utf8' });
  if (result.status !== 0 || !/OK\./.test(result.stdout))
    throw new Error(`callgrind_control ${command.join(' ')} ${pid}: ${result.stderr || result.stdout}`);
}

/**
 * The instructions of `pid`'s first dump (`callgrind_control -d`): the `summary:` line of its file. The
 * guest writes it when it next runs, so this waits for the file to be whole.
 */
async function dumpedInstructions(outDir: string, pid: number): Promise<{ file: string; instructions: number }> {
  const file = join(outDir, `callgrind.out.${pid}.1`);
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline) {
    if (readdirSync(outDir).includes(`callgrind.out.${pid}.1`)) {
      const line = /^summary: (\d+)$/m.exec(readFileSync(file, 'utf8'));
      if (line !== null) return { file, instructions: Number(line[1]) };
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`no callgrind dump ${file} within 120 s`);
}

/** Where a function of callgrind_annotate's listing ran, by its name and its object file. */
const COMPONENTS: readonly (readonly [string, RegExp])[] = [
  ['sqlite', /better_sqlite3\.node\]$/],
  ['v8 optimizing compiler', /v8::internal::(compiler|maglev|turboshaft)::/],
  [
    'v8 garbage collector',
    /v8::internal::(Heap|Scavenger|MarkCompact|Sweeper|Marking|Evacuat|ConcurrentMarking|MinorMarkCompact|heap::)/,
  ],
  ['v8 builtins', /:Builtins_/],
  ['jit code', /^\?\?\?:0x[0-9a-f]+ \[\?\?\?\]$/],
  ['libc', /libc\.so\.6\]$/],
  ['node and v8 runtime', /\/node\]$/],
];

/** The instructions of a dump by component (see COMPONENTS), from callgrind_annotate's self counts. */
function componentsOf(file: string): Record<string, number> {
  const result = spawnSync('callgrind_annotate', ['--inclusive=no', '--threshold=100', file], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (result.status !== 0) throw new Error(`callgrind_annotate ${file}: ${result.stderr}`);
  const totals: Record<string, number> = {};
  for (const line of result.stdout.split('\n')) {
    const match = /^\s*([\d,]+) \([\s\d.]+%\)\s+(.+)$/.exec(line);
    if (match === null || match[2] === 'PROGRAM TOTALS') continue;
    const name = COMPONENTS.find(([, pattern]) => pattern.test(match[2]!))?.[0] ?? 'other';
    totals[name] = (totals[name] ?? 0) + Number(match[1]!.replaceAll(',', ''));
  }
  return totals;
}

/**
 * With --jit-names: the dump's functions by inclusive instructions per bid, the JIT's code named from the
 * map node's --perf-basic-prof wrote (/tmp/perf-PID.map: start, size and name of each code object).
 */
function jitNamed(file: string, pid: number, top = 50): string[] {
  // The map only grows: V8 reuses the space of code it has thrown away, so an address can lie in several
  // entries, and the last one written is the code that was there at the end (the counted bids').
  const ranges = readFileSync(`/tmp/perf-${pid}.map`, 'utf8')
    .split('\n')
    .map((line) => /^([0-9a-f]+) ([0-9a-f]+) (.*)$/.exec(line))
    .filter((match) => match !== null)
    .map((match, written) => ({
      start: BigInt(`0x${match![1]}`),
      end: BigInt(`0x${match![1]}`) + BigInt(`0x${match![2]}`),
      name: match![3]!,
      written,
    }))
    .sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const longest = ranges.reduce((most, range) => (range.end - range.start > most ? range.end - range.start : most), 0n);
  const nameOf = (address: bigint): string | undefined => {
    // The last range that starts at or before the address, then back over every one that could still cover it.
    let low = 0;
    let high = ranges.length - 1;
    while (low <= high) {
      const middle = (low + high) >> 1;
      if (ranges[middle]!.start <= address) low = middle + 1;
      else high = middle - 1;
    }
    let found: (typeof ranges)[number] | undefined;
    for (let i = high; i >= 0 && address - ranges[i]!.start < longest; i--) {
      const range = ranges[i]!;
      if (address < range.end && (found === undefined || range.written > found.written)) found = range;
    }
    return found?.name;
  };
  const result = spawnSync('callgrind_annotate', ['--inclusive=yes', '--threshold=99.9', file], {
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  if (result.status !== 0) throw new Error(`callgrind_annotate ${file}: ${result.stderr}`);
  // A JIT function's code is entered at several addresses (each a "function" to callgrind): the largest
  // inclusive count of a name stands for it, since its entries call one another.
  const byName = new Map<string, number>();
  for (const line of result.stdout.split('\n')) {
    const match = /^\s*([\d,]+) \([\s\d.]+%\)\s+(.+)$/.exec(line);
    if (match === null || match[2] === 'PROGRAM TOTALS') continue;
    const address = /^\?\?\?:(0x[0-9a-f]+) \[\?\?\?\]$/.exec(match[2]!);
    const name = address === null ? match[2]!.replace(/^\?\?\?:/, '') : (nameOf(BigInt(address[1]!)) ?? match[2]!);
    const value = Number(match[1]!.replaceAll(',', ''));
    byName.set(name, Math.max(byName.get(name) ?? 0, value));
  }
  // JavaScript functions alone (node's --perf-basic-prof names them "JS:<tier><name> <file>:<line>:<col>"):
  // the builtins and V8's C++ above them (the call trampolines, the microtask loop) say nothing by name.
  return [...byName]
    .filter(([name]) => name.startsWith('JS:'))
    .map(
      ([name, value]) =>
        [name.replace(`file://${ROOT}/`, '').replace(`${ROOT}/`, '').replace(/^JS:/, ''), value] as const,
    )
    .sort(([, a], [, b]) => b - a)
    .slice(0, top)
    .map(
      ([name, value]) =>
        `${Math.round(value / options.bids)
          .toLocaleString('en')
          .padStart(10)}  ${name.slice(0, 160)}`,
    );
}

/** Under callgrind a server's shutdown (and its final dump) takes tens of times its usual time. */
function stop(counted: Counted): Promise<void> {
  return stopChild(counted.process, 60_000);
}

/** `bids` bids in waves of `wave`, each wave's bids together, by bidders in turn. Answers the statuses not 2xx. */
async function sendBids(
  url: string,
  bidders: readonly (Bidder | null)[],
  bids: number,
  wave: number,
): Promise<number[]> {
  const refused: number[] = [];
  for (let sent = 0; sent < bids; sent += wave) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(wave, bids - sent) }, async (_, i) => {
        const bidder = bidders[(sent + i) % bidders.length]!;
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (bidder !== null)
          Object.assign(headers, { authorization: `Bearer ${bidder.token}`, 'x-api-key': bidder.apiKey });
        const response = await fetch(`${url}${PLACE_PATH}`, { method: 'POST', headers, body: BID_BODY });
        await response.arrayBuffer();
        return response.status;
      }),
    );
    refused.push(...answers.filter((status) => status < 200 || status > 299));
  }
  return refused;
}

/** Waits until no outbox entry is open: every acknowledged bid was taken to PENDING by the OMS. */
async function untilSettled(store: Store): Promise<void> {
  const deadline = Date.now() + 600_000;
  while (Date.now() < deadline) {
    const open = await store.db
      .selectFrom('outbox')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('done_at', 'is', null)
      .executeTakeFirstOrThrow();
    if (Number(open.n) === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the OMS did not settle the bids within 600 s');
}

async function pendingCount(store: Store): Promise<{ pending: number; all: number }> {
  const row = await store.db
    .selectFrom('orders')
    .select((eb) => [
      eb.fn.countAll<number>().as('all'),
      eb.fn.count<number>(eb.case().when('status', '=', 'PENDING').then(1).end()).as('pending'),
    ])
    .executeTakeFirstOrThrow();
  return { pending: Number(row.pending), all: Number(row.all) };
}

interface Run {
  target: 'ordergate' | 'bare';
  instructionsPerBid: number;
  /**
   * Less V8's optimizing compiler: what is left of the warm-up varies from run to run (147-191 thousand per
   * bid after 6,000 bids), more than a small change moves the rest.
   */
  withoutCompiler: number;
  /** The instructions per bid by where they ran (see COMPONENTS). */
  components: Record<string, number>;
  seconds: number;
}

function runOf(target: Run['target'], dump: { file: string; instructions: number }, seconds: number): Run {
  const perBid = (value: number) => Math.round(value / options.bids);
  const components = Object.fromEntries(
    Object.entries(componentsOf(dump.file))
      .sort(([, a], [, b]) => b - a)
      .map(([name, value]) => [name, perBid(value)]),
  );
  const compiler = components['v8 optimizing compiler'] ?? 0;
  return {
    target,
    instructionsPerBid: dump.instructions / options.bids,
    withoutCompiler: dump.instructions / options.bids - compiler,
    components,
    seconds,
  };
}

async function countOrdergate(work: string, run: number): Promise<Run> {
  const dir = mkdtempSync(join(work, `ordergate-${run}-`));
  const database = options.postgres ? `ordergate_instructions_${process.pid}_${run}` : null;
  if (database !== null) {
    await postgresAdmin(`drop database if exists ${database} with (force)`);
    await postgresAdmin(`create database ${database}`);
  }
  const url = database === null ? `sqlite:${join(dir, 'bench.db')}` : postgresUrlOf(database);
  const store = openStore(url);
  let server: Counted | undefined;
  try {
    await migrateToLatest(store);
    const bidders = await createBidders(store, Math.max(options.wave, 20));
    await createIssue(store);
    server = await startOrdergate(url, dir, join(dir, 'server.log'));
    const warmRefused = await sendBids(server.url, bidders, options.warmup, options.wave);
    await untilSettled(store);
    if (warmRefused.length > 0)
      throw new Error(
        `${warmRefused.length} of the warm-up's bids were refused: ${[...new Set(warmRefused)].join(', ')}`,
      );
    const started = Date.now();
    callgrindControl(server.pid, '-i', 'on');
    const refused = await sendBids(server.url, bidders, options.bids, options.wave);
    await untilSettled(store);
    callgrindControl(server.pid, '-d');
    const seconds = (Date.now() - started) / 1000;
    if (refused.length > 0)
      throw new Error(`${refused.length} of the counted bids were refused: ${[...new Set(refused)].join(', ')}`);
    const { pending, all } = await pendingCount(store);
    if (pending !== all || all !== options.warmup + options.bids)
      throw new Error(`${pending} of ${all} orders PENDING, ${options.warmup + options.bids} sent`);
    const dump = await dumpedInstructions(dir, server.pid);
    if (options.jitNames) {
      log(
        `ordergate's JavaScript functions by inclusive instructions per bid (callees included):\n${jitNamed(dump.file, server.pid).join('\n')}`,
      );
      if (!options.keep) rmSync(`/tmp/perf-${server.pid}.map`, { force: true });
    }
    return runOf('ordergate', dump, seconds);
  } finally {
    if (server !== undefined) await stop(server);
    await store.close();
    if (database !== null && !options.keep) await postgresAdmin(`drop database if exists ${database} with (force)`);
  }
}

async function countBare(work: string, run: number): Promise<Run> {
  const dir = mkdtempSync(join(work, `bare-${run}-`));
  const server = await startBare(dir);
  try {
    const none = Array.from({ length: options.wave }, () => null);
    await sendBids(server.url, none, options.warmup, options.wave);
    const started = Date.now();
    callgrindControl(server.pid, '-i', 'on');
    await sendBids(server.url, none, options.bids, options.wave);
    callgrindControl(server.pid, '-d');
    const seconds = (Date.now() - started) / 1000;
    return runOf('bare', await dumpedInstructions(dir, server.pid), seconds);
  } finally {
    await stop(server);
  }
}

async function main(): Promise<void> {
  if (spawnSync('valgrind', ['--version']).status !== 0)
    throw new Error('valgrind is not installed (Debian: apt-get install valgrind)');
  const work = mkdtempSync(join(tmpdir(), 'ordergate-instructions-'));
  const runs: Run[] = [];
  try {
    for (let run = 1; run <= options.runs; run++) {
      for (const target of options.bare ? (['bare', 'ordergate'] as const) : (['ordergate'] as const)) {
        const counted = target === 'bare' ? await countBare(work, run) : await countOrdergate(work, run);
        runs.push(counted);
        const split = Object.entries(counted.components)
          .map(([name, value]) => `${name} ${value.toLocaleString('en')}`)
          .join(', ');
        log(
          `run ${run}/${options.runs} ${target}: ${Math.round(counted.instructionsPerBid).toLocaleString('en')} instructions per bid, ` +
            `${Math.round(counted.withoutCompiler).toLocaleString('en')} without the optimizing compiler (${counted.seconds.toFixed(0)} s): ${split}`,
        );
      }
    }
  } finally {
    if (options.keep === undefined) rmSync(work, { recursive: true, force: true });
    else log(`the dumps are in ${work} (callgrind_annotate --inclusive=yes FILE, or kcachegrind)`);
  }
  const ofTarget = (target: Run['target']) =>
    runs.filter((run) => run.target === target).map((run) => run.instructionsPerBid);
  const ordergate = median(ofTarget('ordergate'));
  const ordergateWithoutCompiler = median(
    runs.filter((run) => run.target === 'ordergate').map((run) => run.withoutCompiler),
  );
  const bare = options.bare ? median(ofTarget('bare')) : null;
  const spread = (values: number[]) => (Math.max(...values) - Math.min(...values)) / median(values);
  const report = {
    bids: options.bids,
    warmup: options.warmup,
    wave: options.wave,
    runs,
    ordergateInstructionsPerBid: Math.round(ordergate),
    ordergateWithoutCompiler: Math.round(ordergateWithoutCompiler),
    ordergateSpread: Number(spread(ofTarget('ordergate')).toFixed(4)),
    bareInstructionsPerRequest: bare === null ? null : Math.round(bare),
    ordergateVsBare: bare === null ? null : Number((ordergate / bare).toFixed(2)),
  };
  const resultsDir = join(ROOT, 'bench-results');
  mkdirSync(resultsDir, { recursive: true });
  const file = join(resultsDir, `instructions-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
  writeFileSync(file, `${JSON.stringify(report, null, 2)}\n`);
  log(
    `median: ordergate ${report.ordergateInstructionsPerBid.toLocaleString('en')} instructions per bid (spread ${(report.ordergateSpread * 100).toFixed(1)} %), ` +
      `${report.ordergateWithoutCompiler.toLocaleString('en')} without the optimizing compiler` +
      (bare === null
        ? ''
        : `, bare ${report.bareInstructionsPerRequest!.toLocaleString('en')} per request (${report.ordergateVsBare}x)`),
  );
  log(`written to ${file}`);
}

main().catch((error: unknown) => {
  log(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exitCode = 1;
});
