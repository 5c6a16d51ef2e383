/**
 * GET /authentication/v1/user/balance through the real server (odin-compat.md "Funds"): the caller's cash,
 * blocked, available and debited amounts as rupee strings with two decimals; a user without a funds account
 * is not funds-checked and reads zeros, never a 404; only the bearer token is needed, and nothing else
 * is taken.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Errors } from '../../src/domain/errors.js';
import { FundsService } from '../../src/services/funds.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { UserRepository } from '../../src/store/access/users.js';
import { startTestServer, type TestServer, type TestUser } from '../support/server.js';

const BALANCE = '/authentication/v1/user/balance';
const DAY = 24 * 60 * 60 * 1000;

describe('GET /authentication/v1/user/balance', () => {
  let server: TestServer;
  let funds: FundsService;
  let repository: FundsRepository;

  beforeAll(async () => {
    server = await startTestServer();
    repository = new FundsRepository(server.store.db, server.store.dialect);
    funds = new FundsService(
      server.store,
      repository,
      new UserRepository(server.store.db, server.store.dialect),
      () => server.clock.now,
    );
  });
  afterAll(() => server.close());

  const balance = (user: TestUser, query = '') => server.call('GET', `${BALANCE}${query}`, { token: user.token });

  /** What the OMS does to an account when bids block and allotments debit (its own tests cover how). */
  async function setBlockedAndDebited(userId: string, blockedPaise: number, debitedPaise: number): Promise<void> {
    await server.store.db
      .updateTable('funds_accounts')
      .set((eb) => ({
        blocked_paise: blockedPaise,
        debited_paise: debitedPaise,
        cash_paise: eb('cash_paise', '-', debitedPaise),
      }))
      .where('user_id', '=', userId)
      .execute();
  }

  it('answers a user without a funds account zeros, funds_checked false, in the success envelope', async () => {
    const carol = await server.createUser('carol');
    const res = await balance(carol);
    expect(res.status, res.text).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(['code', 'data', 'message', 'status']);
    expect(res.body).toEqual({
      status: 'success',
      code: 's-101',
      message: 'Funds fetched successfully',
      data: {
        client_id: 'carol',
        funds_checked: false,
        cash: '0.00',
        blocked: '0.00',
        available: '0.00',
        debited: '0.00',
      },
    });
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  });

  it('answers an account overdrawn by an allotment that cost more than its block with minus signs, not a 500', async () => {
    const dora = await server.createUser('dora');
    await funds.deposit('dora', '100');
    // A cut-off price raised after the block: the allotment cost Rs 150 more than there was.
    await setBlockedAndDebited('dora', 0, 25_000);
    const res = await balance(dora);
    expect(res.status, res.text).toBe(200);
    expect(res.body.data).toEqual({
      client_id: 'dora',
      funds_checked: true,
      cash: '-150.00',
      blocked: '0.00',
      available: '-150.00',
      debited: '250.00',
    });
  });

  it('answers the amounts after a deposit: cash, blocked, available = cash - blocked, debited', async () => {
    const alice = await server.createUser('alice');
    await funds.deposit('alice', '250000.50');
    const afterDeposit = await balance(alice);
    expect(afterDeposit.status, afterDeposit.text).toBe(200);
    expect(afterDeposit.body.data).toEqual({
      client_id: 'alice',
      funds_checked: true,
      cash: '250000.50',
      blocked: '0.00',
      available: '250000.50',
      debited: '0.00',
    });

    await setBlockedAndDebited('alice', 10_150_050, 2_030_000);
    const res = await balance(alice);
    expect(res.body.data).toEqual({
      client_id: 'alice',
      funds_checked: true,
      cash: '229700.50',
      blocked: '101500.50',
      available: '128200.00',
      debited: '20300.00',
    });
  });

  it('answers the amounts after a deposit made through the repository, and after a withdrawal', async () => {
    const dave = await server.createUser('dave');
    await server.store.writeTransaction((tx) => repository.deposit(tx, 'dave', 100_000_00, server.clock.now));
    await funds.withdraw('dave', '0.01');
    const res = await balance(dave);
    expect(res.body.data).toEqual({
      client_id: 'dave',
      funds_checked: true,
      cash: '99999.99',
      blocked: '0.00',
      available: '99999.99',
      debited: '0.00',
    });
  });

  it("never shows another user's funds", async () => {
    const erin = await server.createUser('erin');
    const frank = await server.createUser('frank');
    await funds.deposit('erin', '5000');
    const res = await balance(frank);
    expect(res.body.data).toEqual({
      client_id: 'frank',
      funds_checked: false,
      cash: '0.00',
      blocked: '0.00',
      available: '0.00',
      debited: '0.00',
    });
    expect((await balance(erin)).body.data).toMatchObject({ client_id: 'erin', cash: '5000.00' });
  });

  it('shows amounts up to the most an account may hold exactly', async () => {
    const grace = await server.createUser('grace');
    await funds.deposit('grace', '90000000000000');
    expect((await balance(grace)).body.data).toMatchObject({
      cash: '90000000000000.00',
      available: '90000000000000.00',
    });
  });

  describe('refusals', () => {
    let heidi: TestUser;
    beforeAll(async () => {
      heidi = await server.createUser('heidi');
    });

    it('needs the bearer token: 401 e-201 without it', async () => {
      const res = await server.call('GET', BALANCE);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(Errors.TOKEN_MISSING.code);
      expect(Object.keys(res.body).sort()).toEqual(['code', 'errors', 'message', 'request_id', 'status']);
    });

    it('answers 401 e-202 to an unknown token', async () => {
      const res = await server.call('GET', BALANCE, { token: 'not-a-token' });
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(Errors.TOKEN_INVALID.code);
    });

    it('answers 401 e-203 once the token has expired', async () => {
      const now = server.clock.now;
      server.clock.now = now + 2 * DAY;
      try {
        const res = await balance(heidi);
        expect(res.status).toBe(401);
        expect(res.body.code).toBe(Errors.TOKEN_EXPIRED.code);
      } finally {
        server.clock.now = now;
      }
    });

    it('answers 401 e-204 after a logout', async () => {
      const ivan = await server.createUser('ivan');
      expect((await server.call('DELETE', '/authentication/v1/user/session', { token: ivan.token })).status).toBe(200);
      const res = await balance(ivan);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe(Errors.TOKEN_REVOKED.code);
    });

    it.each([['?client_id=alice'], ['?foo=1'], ['?limit=20']])(
      'refuses a query parameter (%s) with 400 e-110',
      async (query) => {
        const res = await balance(heidi, query);
        expect(res.status, res.text).toBe(400);
        expect(res.body.code).toBe(Errors.INVALID_QUERY.code);
      },
    );

    it('accepts GET only', async () => {
      const res = await server.call('POST', BALANCE, { token: heidi.token, body: {} });
      expect(res.status).toBe(405);
      expect(res.headers.get('allow')).toContain('GET');
    });
  });

  it('is in the OpenAPI document with its amounts described', async () => {
    const document = (await server.call('GET', '/openapi.json')).body;
    const get = document.paths[BALANCE].get;
    expect(get.security).toEqual([{ bearerAuth: [] }]);
    const data = get.responses['200'].content['application/json'].schema.properties.data;
    for (const field of ['client_id', 'funds_checked', 'cash', 'blocked', 'available', 'debited']) {
      expect(data.properties[field].description, field).toEqual(expect.any(String));
    }
  });
});
