/**
 * `npm run bench`: place-order throughput and p99 latency of ordergate against a bare Fastify server
 * answering the same call on the same machine, each in its own child process, measured by autocannon from
 * this process. Rounds alternate between the two servers so that machine noise hits both; the report
 * gives medians and the ratios that product.md promises (throughput >= 0.6 of bare on SQLite).
 *
 * Settings: BENCH_ROUNDS (5), BENCH_SECONDS (5), BENCH_CONNECTIONS (64), BENCH_DATABASE_URL (a fresh
 * SQLite file).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import autocannon from 'autocannon';

const rounds = Number(process.env.BENCH_ROUNDS ?? 5);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64);

interface Target {
  url: string;
  token: string;
  apiKey: string;
  child: ChildProcess;
}

async function start(which: 'bare' | 'ordergate'): Promise<Target> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/servers.ts', which], { stdio: ['ignore', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${which} server did not start within 30 s`)), 30_000);
    createInterface({ input: child.stdout! }).once('line', (l) => {
      clearTimeout(timer);
      resolve(l);
    });
    child.once('exit', (code) => reject(new Error(`${which} server exited with ${code}`)));
  });
  return { ...(JSON.parse(line) as Omit<Target, 'child'>), child };
}

const body = JSON.stringify({
  scrip_info: { exchange: 'NSE_EQ', scrip_token: 500112, symbol: 'SBIN', series: 'OF', expiry_date: '', strike_price: '', option_type: '' },
  transaction_type: 'BUY', product_type: 'OFS', order_type: 'RL', quantity: '10', price: 101.5, trigger_price: null,
  disclosed_quantity: 0, validity: '', validity_days: 0, is_amo: false, order_identifier: 'bench',
});

async function measure(target: Target) {
  const result = await autocannon({
    url: `${target.url}/transactional/v1/orders/regular`,
    method: 'POST',
    connections,
    duration: seconds,
    headers: { 'content-type': 'application/json', authorization: `Bearer ${target.token}`, 'x-api-key': target.apiKey },
    body,
  });
  const non2xx = result.non2xx + result.errors + result.timeouts;
  if (non2xx > 0) throw new Error(`${non2xx} requests failed or were not 2xx against ${target.url}`);
  return { rps: result.requests.average, p99: result.latency.p99, total: result.requests.total };
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const bare = await start('bare');
const og = await start('ordergate');
try {
  const samples = { bare: [] as { rps: number; p99: number }[], ordergate: [] as { rps: number; p99: number }[] };
  let stored = 0;
  for (let round = 1; round <= rounds; round++) {
    samples.bare.push(await measure(bare));
    const r = await measure(og);
    stored += r.total;
    samples.ordergate.push(r);
    process.stderr.write(`round ${round}/${rounds}: bare ${samples.bare.at(-1)!.rps.toFixed(0)} req/s, ordergate ${r.rps.toFixed(0)} req/s\n`);
  }
  const report = {
    connections,
    seconds_per_round: seconds,
    rounds,
    orders_stored: stored,
    bare: { rps_median: median(samples.bare.map((s) => s.rps)), p99_ms_median: median(samples.bare.map((s) => s.p99)) },
    ordergate: { rps_median: median(samples.ordergate.map((s) => s.rps)), p99_ms_median: median(samples.ordergate.map((s) => s.p99)) },
    throughput_ratio: 0,
    target_ratio: 0.6,
  };
  report.throughput_ratio = Number((report.ordergate.rps_median / report.bare.rps_median).toFixed(3));
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  bare.child.kill();
  og.child.kill();
}
