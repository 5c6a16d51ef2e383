/**
 * Where a node's SQLite time goes, statement by statement: preloaded into an ordergate node
 * (`npm run bench -- --targets sqlite --env "NODE_OPTIONS=--require ./bench/sql-times.cjs"`), it times every
 * better-sqlite3 run/all/get by its SQL and, when the node exits, writes the statements by total time to
 * bench-results/sql-times/<pid>.txt: calls, total, and time per call (wall time of the synchronous call,
 * which is CPU and page reads; a commit's is its WAL writes, its sync is elsewhere). A diagnostic only: it
 * adds under a microsecond to each call (0.6-0.7 us, measured on a bare loop).
 */
'use strict';
const { mkdirSync, writeFileSync } = require('node:fs');
const { join } = require('node:path');

let Database;
try {
  Database = require(join(process.cwd(), 'node_modules', 'better-sqlite3'));
} catch {
  return;
}
const times = new Map();
/** Each prepared statement's key (its SQL on one line), worked out once. */
const keys = new WeakMap();
const statement = Object.getPrototypeOf(new Database(':memory:').prepare('select 1'));
for (const method of ['run', 'all', 'get']) {
  const original = statement[method];
  statement[method] = function timed(...parameters) {
    const start = process.hrtime.bigint();
    try {
      return original.apply(this, parameters);
    } finally {
      let key = keys.get(this);
      if (key === undefined) keys.set(this, (key = this.source.replace(/\s+/g, ' ').trim().slice(0, 120)));
      const entry = times.get(key) ?? { calls: 0, ns: 0n };
      entry.calls += 1;
      entry.ns += process.hrtime.bigint() - start;
      times.set(key, entry);
    }
  };
}
process.on('exit', () => {
  if (times.size === 0) return;
  const rows = [...times].sort((a, b) => Number(b[1].ns - a[1].ns));
  const totalMs = Number(rows.reduce((sum, [, entry]) => sum + entry.ns, 0n)) / 1e6;
  const lines = rows.map(([sql, { calls, ns }]) => {
    const ms = Number(ns) / 1e6;
    return `${ms.toFixed(0).padStart(7)} ms ${String(calls).padStart(8)} calls ${((ms * 1000) / calls).toFixed(1).padStart(8)} us  ${sql}`;
  });
  const dir = join(process.cwd(), 'bench-results', 'sql-times');
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, `${process.pid}.txt`),
    [`${totalMs.toFixed(0)} ms in SQLite calls`, ...lines].join('\n') + '\n',
  );
});
