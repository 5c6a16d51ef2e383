/**
 * The two servers the benchmark compares, each run in its own child process:
 *   bare       a bare Fastify server answering the place-order call with the same envelope, no storage;
 *   ordergate  the real app over a fresh SQLite file (or BENCH_DATABASE_URL), with a user, key and issue.
 * The child prints one JSON line on stdout: {url, token, apiKey}.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { buildApp } from '../src/app.js';
import { RATE_LIMITS_OFF } from '../src/http/rate-limit.js';
import { AdminService } from '../src/services/admin.js';
import { openStore } from '../src/store/database.js';
import { migrateToLatest } from '../src/store/migrations.js';
import { OfsIssueRepository } from '../src/store/ofs-issues.js';
import { UserRepository } from '../src/store/users.js';
import { createServices } from '../src/wiring.js';

async function bare() {
  const app = Fastify({ logger: false });
  let n = 0;
  app.post('/transactional/v1/orders/regular', async () => ({
    status: 'success',
    code: 's-101',
    message: 'Order Entry Sent to OMS',
    data: { orderId: String(++n) },
  }));
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, token: 'none', apiKey: 'none' };
}

async function ordergate() {
  const databaseUrl = process.env.BENCH_DATABASE_URL || `sqlite:${join(mkdtempSync(join(tmpdir(), 'ordergate-bench-')), 'bench.db')}`;
  const store = openStore(databaseUrl);
  await migrateToLatest(store);
  const services = createServices(store, { tokenTtlSeconds: 86400 });
  const admin = new AdminService(new UserRepository(store.db), new OfsIssueRepository(store.db));
  const now = Date.now();
  // Non-retail: a retail user would reach the Rs 2,00,000 limit after ~200 bids.
  await admin.addUser('bench', 'bench-password-1', { category: 'NON_RETAIL' });
  const { apiKey } = await admin.createApiKey('bench');
  await new OfsIssueRepository(store.db).upsert(
    [
      {
        exchange: 'NSE_EQ', scripToken: 500112, symbol: 'SBIN', series: 'OF', floorPricePaise: 10_000, tickSizePaise: 5,
        offerQuantity: 1_000_000_000, retailReservePct: 10, retailCutoffPricePaise: 10_100, allocation: 'PROPORTIONATE',
        nonRetailOpensAt: now - 3_600_000, nonRetailClosesAt: now + 86_400_000, retailOpensAt: now - 3_600_000, retailClosesAt: now + 86_400_000,
      },
    ],
    now,
  );
  const { accessToken } = await services.auth.login({ user_id: 'bench', password: 'bench-password-1' });
  // One user fires every request: the per-user limit would measure the limiter, not order entry.
  const app = buildApp(services, { logger: false, rateLimits: RATE_LIMITS_OFF });
  const url = await app.listen({ host: '127.0.0.1', port: 0 });
  return { url, token: accessToken, apiKey };
}

const which = process.argv[2];
const info = which === 'bare' ? await bare() : which === 'ordergate' ? await ordergate() : undefined;
if (!info) {
  process.stderr.write('usage: servers.ts bare|ordergate\n');
  process.exit(2);
}
process.stdout.write(`${JSON.stringify(info)}\n`);
// End on the benchmark's kill with a normal exit, so that `node --cpu-prof` writes its profile.
process.once('SIGTERM', () => process.exit(0));
