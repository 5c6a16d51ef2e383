/** Log lines carry the request id and never a secret (password, access token, API key, TOTP code). */
import { Writable } from 'node:stream';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import type { App } from '../../src/http/app-type.js';
import { totpCode } from '../../src/auth/credentials.js';
import { createLogger } from '../../src/logger.js';
import { AdminService } from '../../src/services/admin.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { createServices } from '../../src/wiring.js';
import { openIssue, validBid } from '../support/server.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { testMemberData } from '../support/member-data.js';

describe('logging', () => {
  const lines: string[] = [];
  let dir: string;
  let store: Store;
  let app: App;
  let url: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ordergate-log-'));
    store = openStore(`sqlite:${join(dir, 'log.db')}`);
    await migrateToLatest(store);
    const sink = new Writable({
      write(chunk, _encoding, done) {
        lines.push(
          ...String(chunk)
            .split('\n')
            .filter((l) => l !== ''),
        );
        done();
      },
    });
    app = buildApp(createServices(store, { tokenTtlSeconds: 3600 }), { logger: createLogger('trace', sink) });
    url = await app.listen({ host: '127.0.0.1', port: 0 });
    await new OfsIssueRepository(store.db).upsert(
      [openIssue(Date.now(), { floorPricePaise: 5, retailCutoffPricePaise: 5 })],
      Date.now(),
    );
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('logs each request with its id and leaves out every secret the requests carried', async () => {
    const admin = new AdminService(
      new UserRepository(store.db, store.dialect),
      new OfsOfferRepository(store.db),
      Date.now,
      TEST_PASSWORD_HASHER,
    );
    const password = 'a-secret-password-1';
    const { totpSecret } = await admin.addUser('carol', password, { totp: true, member: testMemberData('carol') });
    const { apiKey } = await admin.createApiKey('carol');
    const code = totpCode(totpSecret!, 'carol');
    const login = await fetch(`${url}/authentication/v1/user/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        user_id: 'carol',
        login_type: 'PASSWORD',
        password,
        second_auth_type: 'TOTP',
        second_auth: code,
        api_key: apiKey,
        source: 'WEBAPI',
      }),
    });
    expect(login.status).toBe(200);
    const token = ((await login.json()) as { data: { access_token: string } }).data.access_token;
    const bid = await fetch(`${url}/transactional/v1/orders/regular`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'x-api-key': apiKey },
      body: JSON.stringify(validBid()),
    });
    expect(bid.status).toBe(200);
    const requestId = bid.headers.get('request-id');

    const output = lines.join('\n');
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of [password, apiKey, token, code, totpSecret!]) expect(output).not.toContain(secret);
    const bidLines = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((l) => l.reqId === requestId);
    expect(bidLines.length).toBeGreaterThanOrEqual(2);
  });

  it('writes one access line per request when it completes: method, URL, client address, status and time', async () => {
    const answer = await fetch(`${url}/transactional/v1/orders/regular?probe=1`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(answer.status).toBe(401);
    const requestId = answer.headers.get('request-id');
    const completed = lines
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.reqId === requestId && l.msg === 'request completed');
    expect(completed).toHaveLength(1);
    const { level, time, pid, hostname, responseTime, ...line } = completed[0]!;
    expect({
      level,
      responseTime: typeof responseTime,
      time: typeof time,
      pid: typeof pid,
      hostname: typeof hostname,
    }).toEqual({
      level: 30,
      responseTime: 'number',
      time: 'number',
      pid: 'number',
      hostname: 'string',
    });
    expect(line).toEqual({
      reqId: requestId,
      method: 'POST',
      url: '/transactional/v1/orders/regular?probe=1',
      remoteAddress: '127.0.0.1',
      res: { statusCode: 401 },
      msg: 'request completed',
    });
  });

  it("follows the request's own level: none at LOG_LEVEL=warn, one for a route whose logLevel is info", async () => {
    const quiet: string[] = [];
    const sink = new Writable({
      write(chunk, _encoding, done) {
        quiet.push(String(chunk));
        done();
      },
    });
    const warnApp = buildApp(createServices(store, { tokenTtlSeconds: 3600 }), { logger: createLogger('warn', sink) });
    warnApp.get('/loud', { logLevel: 'info', schema: { hide: true } }, async () => ({ ok: true }));
    try {
      const warnUrl = await warnApp.listen({ host: '127.0.0.1', port: 0 });
      const answer = await fetch(`${warnUrl}/transactional/v1/orders/regular`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      expect(answer.status).toBe(401);
      const loud = await fetch(`${warnUrl}/loud`);
      expect(loud.status).toBe(200);
    } finally {
      await warnApp.close();
    }
    const completed = quiet
      .join('')
      .split('\n')
      .filter((l) => l.includes('"request completed"'))
      .map((l) => (JSON.parse(l) as { url: string }).url);
    expect(completed).toEqual(['/loud']);
  });
});
