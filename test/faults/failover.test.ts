/**
 * Losing the database primary loses nothing (issue 24; docs/deployment.md): two ordergate nodes on the HA
 * topology (Patroni, etcd, HAProxy, a synchronous standby; test/faults/pg-ha.ts), many users bidding through
 * the TypeScript client with an Idempotency-Key each and retrying with the same key, event streams open. Mid-
 * load the primary's postmaster is SIGKILLed; Patroni fails over to the standby. Then: every acknowledged
 * bid is on the new primary once, every key is one order, the retail limit and the funds held, every answer
 * was a 2xx or a 503 with Retry-After (or a retail-limit refusal), the OMS took every bid to PENDING, each
 * stream holds its user's events once and in order, and the old primary comes back as a standby holding
 * nothing the new one lacks. The measured figures are printed.
 *
 * The cluster is docs/deployment.md's HA recipe as written (issue 47 row 8): pg-ha.ts runs the recipe's
 * Patroni and HAProxy configurations and its commands that create the `ordergate` role and database, and the
 * nodes connect as that role with its password, as the recipe's DATABASE_URL says; `patronictl list` shows
 * the standby in the word the recipe gives for the installed Patroni's version.
 */
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OrdergateClient, type OrderEvent } from '../../packages/client/src/index.js';
import { openStore, type Store } from '../../src/store/sql/database.js';
import { DatabaseUnavailableError } from '../../src/domain/errors.js';
import { migrateToLatest } from '../../src/store/schema/migrations.js';
import { AdminService } from '../../src/services/admin.js';
import { FundsService } from '../../src/services/funds.js';
import { FundsRepository } from '../../src/store/funds/funds.js';
import { OfsIssueRepository } from '../../src/store/ofs/issues.js';
import { OfsOfferRepository } from '../../src/store/ofs/offers.js';
import { UserRepository } from '../../src/store/access/users.js';
import { TEST_PASSWORD_HASHER } from '../support/passwords.js';
import { openIssue, TEST_PASSWORD, validBid } from '../support/server.js';
import { killAll, startNode, type NodeProcess } from './nodes.js';
import {
  followingStandbyState,
  HaCluster,
  missingHaPackages,
  sleep,
  type HaMember,
  type PatronictlRow,
} from './pg-ha.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { WebhookAdminService } from '../../src/services/webhooks.js';
import { WebhookRepository } from '../../src/store/orders/webhooks.js';
import { testMemberData } from '../support/member-data.js';

const missing = missingHaPackages();
// A PostgreSQL-only file (vitest.config.ts). Under CI the packages must be there (.ci/run installs them).
const runs = missing.length === 0 || process.env.CI === 'true';
if (!runs)
  process.stderr.write(
    `\nThe failover test needs Debian's ${missing.join(', ')} (bash .ci/run installs them): SKIPPED.\n\n`,
  );

const RETAIL = ['r0', 'r1', 'r2', 'r3'];
const NON_RETAIL = ['n0', 'n1', 'n2', 'n3', 'n4', 'n5', 'n6', 'n7'];
/** A retail bid of 200 at 101.50 is Rs 20,300: the Rs 2,00,000 limit refuses a user's tenth live bid. */
const RETAIL_QUANTITY = '200';
const LOAD_BEFORE_KILL_MS = 2_000;
const LOAD_AFTER_RECOVERY_MS = 2_000;

/** One HTTP answer the clients saw, as their fetch saw it. */
interface Answer {
  at: number;
  node: number;
  method: string;
  path: string;
  status: number | 'no answer';
  retryAfter: string | null;
  code: string | null;
  ms: number;
}

/** A bid's key and what it came to: its order id, or the error it ended with. */
interface KeyedBid {
  key: string;
  identifier: string;
  userId: string;
  orderId?: string;
  refusal?: string;
}

describe.runIf(runs)(
  'failover: the primary SIGKILLed under load (Patroni, etcd, HAProxy, a synchronous standby)',
  () => {
    let cluster: HaCluster;
    let store: Store;
    let nodes: NodeProcess[];
    const answers: Answer[] = [];
    const apiKeys = new Map<string, string>();
    let receiver: WebhookReceiver;
    /** The State docs/deployment.md's step 4 says `patronictl list` gives a following standby under the installed Patroni. */
    let standbyState: 'running' | 'streaming';

    beforeAll(async () => {
      standbyState = followingStandbyState(HaCluster.patroniVersion());
      cluster = await HaCluster.start();
      // The role and database as docs/deployment.md's step 5 creates them; ordergate connects as that role.
      await cluster.createOrdergateDatabase();
      store = openStore(cluster.ordergateUrl());
      await migrateToLatest(store);
      const users = new UserRepository(store.db, store.dialect);
      const operator = new AdminService(users, new OfsOfferRepository(store.db), Date.now, TEST_PASSWORD_HASHER);
      const funds = new FundsService(store, new FundsRepository(store.db, store.dialect), users);
      await new OfsIssueRepository(store.db).upsert([openIssue(Date.now())], Date.now());
      for (const userId of [...RETAIL, ...NON_RETAIL]) {
        const retail = RETAIL.includes(userId);
        await operator.addUser(userId, TEST_PASSWORD, {
          category: retail ? 'RETAIL' : 'NII',
          member: testMemberData(userId),
        });
        await funds.deposit(userId, retail ? '250000.00' : '100000000.00');
        apiKeys.set(userId, (await operator.createApiKey(userId)).apiKey);
      }
      // n0's order events are also POSTed to a webhook receiver, by the nodes' dispatchers.
      receiver = await startWebhookReceiver();
      await new WebhookAdminService(new WebhookRepository(store.db), users, {
        allowHttp: true,
        allowPrivateAddresses: true,
      }).add('n0', receiver.url);
      nodes = await Promise.all(
        [0, 1].map(() =>
          startNode('serve', {
            DATABASE_URL: cluster.ordergateUrl(),
            WEBHOOK_ALLOW_HTTP: 'true',
            WEBHOOK_ALLOW_PRIVATE_ADDRESSES: 'true',
            WEBHOOK_ALLOW_ANY_PORT: 'true',
          }),
        ),
      );
    }, 180_000);

    afterAll(async () => {
      killAll();
      await receiver?.close();
      await store?.close();
      await cluster?.stop();
    }, 60_000);

    /** A client of node `node` whose every HTTP answer is recorded. */
    function clientOf(node: number): OrdergateClient {
      const recording: typeof fetch = async (input, init) => {
        const started = Date.now();
        const url = new URL(input instanceof Request ? input.url : String(input));
        const entry: Answer = {
          at: started,
          node,
          method: init?.method ?? 'GET',
          path: url.pathname,
          status: 'no answer',
          retryAfter: null,
          code: null,
          ms: 0,
        };
        answers.push(entry);
        try {
          const response = await fetch(input, init);
          entry.status = response.status;
          entry.retryAfter = response.headers.get('retry-after');
          if (response.status >= 400 && response.headers.get('content-type')?.includes('json')) {
            entry.code = ((await response.clone().json()) as { code?: string }).code ?? null;
          }
          return response;
        } finally {
          entry.ms = Date.now() - started;
        }
      };
      return new OrdergateClient({
        baseUrl: nodes[node]!.url,
        fetch: recording,
        retry: { attempts: 100, maxDelayMs: 120_000 },
      });
    }

    it("shows the cluster as the recipe's step 4 says: pg1 Leader running, pg2 Sync Standby with no lag, in the word of the installed Patroni", async () => {
      let rows = new Map<string, PatronictlRow>();
      await cluster.waitFor(
        async () => {
          rows = new Map(cluster.patronictlList().map((row) => [row.Member, row]));
          return rows.get('pg2')?.State === standbyState && Number(rows.get('pg2')?.['Lag in MB']) === 0;
        },
        20_000,
        `pg2 ${standbyState} with no lag`,
      );
      expect(rows.get('pg1')).toMatchObject({ Role: 'Leader', State: 'running' });
      expect(rows.get('pg2')).toMatchObject({ Role: 'Sync Standby', State: standbyState, 'Lag in MB': 0 });
    });

    it('loses no acknowledged bid, enters no key twice, holds the limits, resumes within seconds, and brings the old primary back as a standby', async () => {
      const sessions = new Map<string, OrdergateClient>();
      for (const [i, userId] of [...RETAIL, ...NON_RETAIL].entries()) {
        const client = clientOf(i % 2);
        await client.login({ userId, password: TEST_PASSWORD, apiKey: apiKeys.get(userId)! });
        sessions.set(userId, client);
      }

      // Event streams of four users, resumed with Last-Event-ID by the client across every drop.
      const watched = ['r0', 'r1', 'n0', 'n1'];
      const streams = new AbortController();
      const seen = new Map<string, OrderEvent[]>(watched.map((userId) => [userId, []]));
      const opened = watched.map((userId) => ({
        userId,
        stream: sessions.get(userId)!.events({ signal: streams.signal }),
      }));
      // Live from here: every event of the load is theirs to see.
      await Promise.all(opened.map(({ stream }) => stream.opened));
      const reading = opened.map(async ({ userId, stream }) => {
        for await (const event of stream) seen.get(userId)!.push(event);
      });

      // The load: one loop per user, each bid under its own key, retried by the client with that key.
      const bids: KeyedBid[] = [];
      let stopping = false;
      let sequence = 0;
      const loops = [...RETAIL, ...NON_RETAIL].map(async (userId) => {
        const client = sessions.get(userId)!;
        while (!stopping) {
          sequence += 1;
          const bid: KeyedBid = { key: `failover-${userId}-${sequence}`, identifier: `k${sequence}`, userId };
          bids.push(bid);
          try {
            const body = validBid({
              order_identifier: bid.identifier,
              quantity: RETAIL.includes(userId) ? RETAIL_QUANTITY : '10',
            });
            const answer = await client.place(body as never, { idempotencyKey: bid.key });
            bid.orderId = answer.data.orderId;
          } catch (error) {
            bid.refusal = (error as { code?: string }).code ?? String(error);
          }
        }
      });
      // A reader of the order book through the switch.
      const reads = (async () => {
        const client = sessions.get('n0')!;
        while (!stopping) {
          await client.orderBook({}).catch(() => undefined);
          await sleep(100);
        }
      })();

      await sleep(LOAD_BEFORE_KILL_MS);
      const old = (await cluster.leader())!;
      expect(old).not.toBeNull();
      const killedAt = Date.now();
      cluster.killPostmaster(old);
      // The new leader, as Patroni reports it.
      let promoted: { member: HaMember; at: number } | null = null;
      await cluster.waitFor(
        async () => {
          const leader = await cluster.leader();
          if (leader !== null && leader !== old) promoted = { member: leader, at: Date.now() };
          return promoted !== null;
        },
        60_000,
        'a new leader',
        100,
      );
      const { member: primary, at: promotedAt } = promoted!;
      // Load goes on until each node has taken a bid after the promotion, then a little longer.
      const acceptedAfter = (node: number) =>
        answers.find((a) => a.node === node && a.at >= promotedAt && a.method === 'POST' && a.status === 200);
      await cluster.waitFor(
        async () => acceptedAfter(0) !== undefined && acceptedAfter(1) !== undefined,
        30_000,
        'each node to take a bid on the new primary',
      );
      await sleep(LOAD_AFTER_RECOVERY_MS);
      stopping = true;
      await Promise.all([...loops, reads]);

      // Every answer was a success, a 503 with Retry-After, or the retail limit's refusal; none hung.
      const statuses = new Map<string, number>();
      for (const answer of answers)
        statuses.set(
          `${answer.status}${answer.code ? ` ${answer.code}` : ''}`,
          (statuses.get(`${answer.status}${answer.code ? ` ${answer.code}` : ''}`) ?? 0) + 1,
        );
      const unexpected = answers.filter(
        (a) =>
          !(typeof a.status === 'number' && a.status < 300) &&
          !(a.status === 503 && a.retryAfter !== null) &&
          !(a.status === 422 && a.code === 'e-360'),
      );
      expect(unexpected, JSON.stringify(unexpected.slice(0, 5))).toEqual([]);
      const slowest = Math.max(...answers.map((a) => a.ms));
      expect(slowest).toBeLessThan(10_000);

      // Every key came to one order (or to the retail limit's refusal); every acknowledged order is on the new primary, once.
      const unresolved = bids.filter((bid) => bid.orderId === undefined && bid.refusal !== 'e-360');
      expect(unresolved, JSON.stringify(unresolved.slice(0, 5))).toEqual([]);
      const acknowledged = bids.filter((bid) => bid.orderId !== undefined);
      const stored = await store.db
        .selectFrom('orders')
        .select(['order_id', 'user_id', 'order_identifier', 'status'])
        .execute();
      const byId = new Map(stored.map((row) => [row.order_id, row]));
      for (const bid of acknowledged)
        expect(byId.get(bid.orderId!), bid.key).toMatchObject({
          user_id: bid.userId,
          order_identifier: bid.identifier,
        });
      const perKey = new Map<string, number>();
      for (const row of stored)
        perKey.set(
          `${row.user_id}/${row.order_identifier}`,
          (perKey.get(`${row.user_id}/${row.order_identifier}`) ?? 0) + 1,
        );
      expect([...perKey.values()].filter((count) => count > 1)).toEqual([]);
      expect(stored.length).toBe(acknowledged.length);

      // The retail limit held: no retail user has more than Rs 2,00,000 of live bids; no account is overdrawn.
      for (const userId of RETAIL) {
        const live = stored.filter((row) => row.user_id === userId).length;
        expect(live * 200 * 101.5, userId).toBeLessThanOrEqual(200_000);
      }
      const overdrawn = await sql<{
        user_id: string;
      }>`select user_id from funds_accounts where blocked_paise > cash_paise or cash_paise < 0`.execute(store.db);
      expect(overdrawn.rows).toEqual([]);

      // The OMS took every acknowledged bid to PENDING.
      await cluster.waitFor(
        async () => {
          const statusesNow = await store.db.selectFrom('orders').select('status').execute();
          return statusesNow.every((row) => row.status === 'PENDING');
        },
        30_000,
        'every order to be PENDING',
      );

      // Each stream holds every event of its user exactly once, in commit order.
      for (const userId of watched) {
        const history = await store.db
          .selectFrom('order_history')
          .select(['user_event_id', 'order_id', 'status'])
          .where('user_id', '=', userId)
          .orderBy('user_event_id')
          .execute();
        await cluster.waitFor(
          async () => (seen.get(userId)!.at(-1)?.event_id ?? 0) >= history.length,
          20_000,
          `the stream of ${userId} to catch up`,
        );
        expect(
          seen.get(userId)!.map((event) => [event.event_id, event.order_id, event.status]),
          userId,
        ).toEqual(history.map((row) => [Number(row.user_event_id), row.order_id, row.status]));
      }
      streams.abort();
      await Promise.allSettled(reading);

      // The webhook dispatcher delivered every event of n0 (at least once: a receiver dedupes by event id).
      const n0Events = await store.db
        .selectFrom('order_history')
        .select('user_event_id')
        .where('user_id', '=', 'n0')
        .execute();
      const delivered = () =>
        new Set(
          receiver.received.filter((d) => d.answer === 200).map((d) => Number(d.headers['x-ordergate-event-id'])),
        );
      await cluster.waitFor(async () => delivered().size >= n0Events.length, 30_000, "n0's webhooks");
      expect([...delivered()].sort((a, b) => a - b)).toEqual(
        n0Events.map((row) => Number(row.user_event_id)).sort((a, b) => a - b),
      );

      // The old primary comes back as a standby (Patroni rewinds it) and holds nothing the new primary lacks.
      await cluster.waitFor(() => cluster.isReplica(old), 90_000, `${old.name} to follow ${primary.name}`);
      // As the recipe's operator steps say: patronictl list shows it following, in the installed Patroni's word.
      await cluster.waitFor(
        async () =>
          cluster
            .patronictlList()
            .some(
              (row) =>
                row.Member === old.name && ['Replica', 'Sync Standby'].includes(row.Role) && row.State === standbyState,
            ),
        30_000,
        `patronictl list to show ${old.name} ${standbyState}`,
      );
      // Read straight from the standby (ordergate's own store refuses one).
      const ordersOn = async (url: string): Promise<Set<string> | null> => {
        const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
        client.on('error', () => undefined);
        try {
          await client.connect();
          return new Set(
            (await client.query<{ order_id: string }>('select order_id from orders')).rows.map((row) => row.order_id),
          );
        } catch {
          return null;
        } finally {
          await client.end().catch(() => undefined);
        }
      };
      const onNew = new Set(stored.map((row) => row.order_id));
      await cluster.waitFor(
        async () => (await ordersOn(cluster.memberUrl(old, 'ordergate')))?.size === onNew.size,
        30_000,
        `${old.name} to catch up`,
      );
      const onOld = (await ordersOn(cluster.memberUrl(old, 'ordergate')))!;
      expect([...onOld].filter((orderId) => !onNew.has(orderId))).toEqual([]);
      expect(await cluster.answers(cluster.memberUrl(old))).toBe(false);
      // ordergate's store, pointed straight at the standby, refuses it: 503, never a write to a server in recovery.
      const onStandby = openStore(cluster.memberUrl(old, 'ordergate'));
      try {
        await expect(onStandby.db.selectFrom('orders').select('order_id').execute()).rejects.toBeInstanceOf(
          DatabaseUnavailableError,
        );
      } finally {
        await onStandby.close();
      }

      const gapAnswers = answers.filter(
        (a) => a.at >= killedAt && a.at <= Math.max(acceptedAfter(0)!.at, acceptedAfter(1)!.at),
      );
      process.stderr.write(
        [
          '',
          'failover figures:',
          `  time without a primary (kill to Patroni's new leader): ${promotedAt - killedAt} ms`,
          `  promotion to the first accepted bid: node 0 ${acceptedAfter(0)!.at - promotedAt} ms, node 1 ${acceptedAfter(1)!.at - promotedAt} ms`,
          `  bids: ${bids.length} keys, ${acknowledged.length} acknowledged, ${bids.filter((b) => b.refusal === 'e-360').length} refused by the retail limit`,
          `  answers by status: ${[...statuses].map(([status, count]) => `${status}: ${count}`).join(', ')}`,
          `  answers during the gap: ${gapAnswers.length}, slowest answer of the run ${slowest} ms`,
          '',
        ].join('\n'),
      );
    }, 300_000);
  },
);
