/**
 * The simulator as an exchange over HTTP (issue 49; docs/design/exchange-sim.md): the e-OFS Web API's
 * shape (src/oms/links/nse-eofs/mapping.ts, the contract) for each exchange segment under its own prefix,
 * `/<exchange>/api/...` (`/NSE_EQ/api`, `/BSE_EQ/api`), over one simulated exchange
 * (src/oms/simulated-exchange.ts: one book for both, so an offer's listings are one pool) on a store whose
 * registry is the instrument master. A link reaches it as it would reach NSE: logs in, sends bids one at a
 * time or in batches, reads the book by reference, and follows the message stream.
 *
 * Fault hooks (`faults`, `expireTokens`, `dropStreams`) let a test break it at a chosen instant: answer a
 * call with another status, hold it, or cut the connection after the bid is in the book.
 */
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import pino, { type Logger } from 'pino';
import type { OfsExchange } from '../domain/ofs/issue/issue.js';
import { InstrumentGuard, type InstrumentMetrics } from '../oms/instrument-guard.js';
import { BATCH_LIMIT, NSE_PATHS, type OperationType } from '../oms/links/nse-eofs/mapping.js';
import { SimulatedExchange } from '../oms/simulated-exchange.js';
import { InstrumentFaultRepository } from '../store/ofs/instrument-faults.js';
import { OfsIssueRepository } from '../store/ofs/issues.js';
import { OfsOfferRepository } from '../store/ofs/offers.js';
import { SimExchangeRepository } from '../store/ofs/sim-exchange.js';
import type { Store } from '../store/sql/database.js';
import { IbbsDesk, type IbbsDeskOptions } from './ibbs-desk.js';
import { apiUsersProblem, SessionBook, type ApiUser, type SessionHolder } from './sessions.js';
import { MessageStreams } from './stream.js';
import {
  bookReferences,
  isAnswer,
  parseOrder,
  SIM_EXCHANGES,
  SimWire,
  type ItemAnswer,
  type WireOrder,
} from './wire.js';

export type { ApiUser } from './sessions.js';

/** Decision: a token lives 10 minutes unless configured (the link refreshes it a minute ahead). */
export const DEFAULT_TOKEN_TTL_SECONDS = 600;
export const DEFAULT_HEARTBEAT_MS = 5_000;
export const DEFAULT_STREAM_POLL_MS = 250;
/** How long close() lets calls under way finish before it cuts their connections (an idle keep-alive one, or a stream its reader left, would hold the close up). */
const CLOSE_GRACE_MS = 250;

/** An order or batch call, as the fault hooks see it (after the session is checked). */
export interface FaultCall {
  exchange: OfsExchange;
  method: 'POST' | 'PUT' | 'DELETE';
  /** `/order` or `/order/batch`. */
  path: string;
  /** The request's body as parsed. */
  body: unknown;
  /** The API user of the session. */
  loginId: string;
}

/** What a hook answers instead: a status with a body (default `{code, messages}`) and headers; or a cut connection. */
export type FaultAnswer = { status: number; body?: unknown; headers?: Record<string, string> } | 'destroy';

export interface ExchangeSimFaults {
  /**
   * Called for each order or batch call before it is applied. Its answer replaces the call's (the bid is not
   * applied): e.g. `{status: 500}`, `{status: 429, headers: {'retry-after': '2'}}`, or 'destroy'. Answering
   * undefined lets the call go on; a hook that awaits a promise holds the call until it resolves (a slow
   * exchange).
   */
  beforeApply?(call: FaultCall): FaultAnswer | undefined | Promise<FaultAnswer | undefined>;
  /**
   * Called after the call is applied, before its answer is written (`answer`: the status and body it
   * would write). 'destroy' cuts the connection: the bid is in the book and its answer is lost.
   */
  afterApply?(
    call: FaultCall & { answer: { status: number; body: unknown } },
  ): 'destroy' | undefined | Promise<'destroy' | undefined>;
}

export interface ExchangeSimOptions {
  /** The database of the book and of the registry (the instrument master). */
  store: Store;
  /** The API users that may log in (at least one). */
  users: readonly ApiUser[];
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port (read `port` or `url`). */
  port?: number;
  /** The segments served, each under `/<exchange>/api`; default NSE_EQ and BSE_EQ. */
  exchanges?: readonly OfsExchange[];
  /** The exchange's clock (its sessions, tokens and step); default Date.now. */
  now?: () => number;
  /** A token's lifetime, answered as `expiresIn`; default DEFAULT_TOKEN_TTL_SECONDS. */
  tokenTtlSeconds?: number;
  /** Between two HEARTBEAT lines of a stream; default DEFAULT_HEARTBEAT_MS. */
  heartbeatMs?: number;
  /** Between two reads of new events by an open stream; default DEFAULT_STREAM_POLL_MS. */
  streamPollMs?: number;
  /** Whether the simulated exchange takes its own step every `passMs` until close(); default true. */
  runSteps?: boolean;
  /** The step's interval (default the simulated exchange's, 250 ms). */
  passMs?: number;
  logger?: Logger;
  /** Where its steps' failures per instrument are counted (the operator's metrics of the process running it). */
  instrumentMetrics?: InstrumentMetrics;
  faults?: ExchangeSimFaults;
  /**
   * BSE's iBBS files (ibbs-desk.ts): the desk reads the member's uploads from `uploadDir` (the link's
   * outbox) and writes its downloads into `downloadDir` (the link's inbox), over the same book; it runs a
   * pass every `pollMs` while `runSteps` is on (else call `ibbs.runOnce()`).
   */
  ibbs?: IbbsDeskOptions;
}

export interface ExchangeSim {
  /** Where it listens, e.g. http://127.0.0.1:9400. */
  readonly url: string;
  readonly port: number;
  /** The e-OFS base URL of one segment (the link's `baseUrl`), e.g. http://127.0.0.1:9400/NSE_EQ/api. */
  baseUrl(exchange: OfsExchange): string;
  /** The simulated exchange behind it. */
  readonly exchange: SimulatedExchange;
  /** The fault hooks, replaceable at any time. */
  faults: ExchangeSimFaults;
  /** One step of the simulated exchange now (at its clock); the streams then send what it wrote. */
  step(): Promise<void>;
  /** Ends every session: the next call with any token answers 401. */
  expireTokens(): void;
  /** Cuts every open message stream's connection. */
  dropStreams(): void;
  /** Open message streams. */
  readonly streams: number;
  /** The iBBS desk, when the `ibbs` option was given; else null. */
  readonly ibbs: IbbsDesk | null;
  /** Stops the steps and the iBBS desk, ends the streams, lets calls under way finish, and stops listening. */
  close(): Promise<void>;
}

/** `{code, messages}`: the exchange's error shape. */
const errorBody = (code: number, message: string) => ({ code, messages: [message] });

/** An item of a batch answer, as mapping.ts's orderAnswerOf reads it. */
function batchItem(answer: ItemAnswer): unknown {
  if (answer.status === 200) return { orderId: answer.orderId, apiEchoBack: answer.apiEchoBack };
  return {
    ...(answer.apiEchoBack !== null && { apiEchoBack: answer.apiEchoBack }),
    code: answer.status,
    messages: [answer.message],
  };
}

function singleAnswer(answer: ItemAnswer): { status: number; body: unknown } {
  if (answer.status === 200) {
    return { status: 200, body: { code: 200, data: { orderId: answer.orderId, apiEchoBack: answer.apiEchoBack } } };
  }
  return { status: answer.status, body: errorBody(answer.status, answer.message) };
}

declare module 'fastify' {
  interface FastifyRequest {
    simSession?: SessionHolder & { token: string };
  }
}

const bearer = (request: FastifyRequest) => /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '')?.[1];

/** Starts the simulator, listening; resolves once it listens. */
export async function createExchangeSim(options: ExchangeSimOptions): Promise<ExchangeSim> {
  const problem = apiUsersProblem(options.users);
  if (problem !== null) throw new Error(`exchange simulator: ${problem}`);
  const { store } = options;
  const now = options.now ?? Date.now;
  const logger = options.logger ?? pino({ level: 'silent' });
  const exchanges = options.exchanges ?? SIM_EXCHANGES;
  const sessions = new SessionBook(options.users, now, (options.tokenTtlSeconds ?? DEFAULT_TOKEN_TTL_SECONDS) * 1000);
  const exchange = new SimulatedExchange(
    store,
    new SimExchangeRepository(store.db, store.dialect),
    new OfsIssueRepository(store.db),
    new OfsOfferRepository(store.db),
    now,
    new InstrumentGuard(new InstrumentFaultRepository(store.db, store.dialect), now, logger, options.instrumentMetrics),
    { ...(options.passMs !== undefined && { passMs: options.passMs }), logger },
  );
  // The wire's reads go to the read connection: they never wait behind a write transaction (database.ts).
  const reads = new SimExchangeRepository(store.readDb, store.dialect);
  const wire = new SimWire(
    exchange,
    reads,
    new OfsIssueRepository(store.readDb),
    new OfsOfferRepository(store.readDb),
    now,
  );
  const streams = new MessageStreams(
    reads,
    store.readDb,
    store.dialect,
    {
      heartbeatMs: options.heartbeatMs ?? DEFAULT_HEARTBEAT_MS,
      pollMs: options.streamPollMs ?? DEFAULT_STREAM_POLL_MS,
    },
    logger,
  );
  const state = { faults: options.faults ?? {} };
  const ibbs =
    options.ibbs === undefined
      ? null
      : new IbbsDesk(wire, store, options.ibbs, now, logger.child({ component: 'ibbs-desk' }));

  const app = Fastify({ logger: false, return503OnClosing: true });
  app.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
    const status = error.statusCode ?? 500;
    if (status >= 500) {
      logger.error({ err: error, method: request.method, url: request.url }, 'exchange simulator: call failed');
      return reply.code(500).send(errorBody(500, 'The exchange could not handle the request'));
    }
    return reply.code(status).send(errorBody(status, error.message));
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody(404, `No such call: ${request.method} ${request.url.split('?')[0]}`)),
  );

  for (const segment of exchanges) {
    await app.register(
      async (api: FastifyInstance) => {
        // Every call but the login needs a live token of this segment.
        api.addHook('onRequest', async (request, reply) => {
          if (request.routeOptions.url === `/${segment}/api${NSE_PATHS.token}`) return;
          const token = bearer(request);
          const session = token === undefined ? null : sessions.holder(token);
          if (session === null || session.exchange !== segment) {
            return reply
              .code(401)
              .send(errorBody(401, 'The session is missing, has expired or was ended by a later login; log in again'));
          }
          request.simSession = session;
        });

        api.post(NSE_PATHS.token, async (request, reply) => {
          const body = request.body as Record<string, unknown> | null;
          const field = (name: string) => (typeof body?.[name] === 'string' ? (body[name] as string) : null);
          const [memberCode, loginId, password] = [field('memberCode'), field('loginId'), field('password')];
          if (memberCode === null || loginId === null || password === null)
            return reply
              .code(400)
              .send(errorBody(400, 'A login names memberCode, loginId and password, each a string'));
          const session = sessions.login(segment, memberCode, loginId, password);
          if (session === null)
            return reply.code(401).send(errorBody(401, 'Invalid member code, login id or password'));
          return { code: 200, data: { token: session.token, expiresIn: sessions.ttlSeconds } };
        });

        api.post(NSE_PATHS.refreshToken, async (request, reply) => {
          const session = sessions.refresh(request.simSession!.token);
          if (session === null) return reply.code(401).send(errorBody(401, 'The session has ended; log in again'));
          return { code: 200, data: { token: session.token, expiresIn: sessions.ttlSeconds } };
        });

        const orderCall =
          (method: 'POST' | 'PUT' | 'DELETE', operations: readonly OperationType[]) =>
          async (request: FastifyRequest, reply: FastifyReply) =>
            withFaults(request, reply, segment, method, NSE_PATHS.order, async () => {
              const order = parseOrder(request.body, operations);
              const answer = isAnswer(order)
                ? order
                : order.operationType === 'E'
                  ? (await wire.place(segment, [order]))[0]!
                  : await wire.change(segment, order);
              return singleAnswer(answer);
            });
        api.post(NSE_PATHS.order, orderCall('POST', ['E']));
        api.put(NSE_PATHS.order, orderCall('PUT', ['M', 'CF']));
        api.delete(NSE_PATHS.order, orderCall('DELETE', ['C']));

        api.post(NSE_PATHS.orderBatch, async (request, reply) =>
          withFaults(request, reply, segment, 'POST', NSE_PATHS.orderBatch, async () => {
            const items = request.body;
            if (!Array.isArray(items))
              return { status: 400, body: errorBody(400, 'A batch is a JSON array of order requests') };
            if (items.length === 0) return { status: 400, body: errorBody(400, 'The batch holds no order request') };
            if (items.length > BATCH_LIMIT) {
              return {
                status: 400,
                body: errorBody(400, `A batch holds at most ${BATCH_LIMIT} order requests, not ${items.length}`),
              };
            }
            const answers = await applyBatch(
              segment,
              items.map((item) => parseOrder(item)),
            );
            return { status: 200, body: { code: 200, data: answers.map(batchItem) } };
          }),
        );

        api.get(NSE_PATHS.orderBook, async (request, reply) => {
          const references = bookReferences(request.query);
          if (typeof references === 'string') return reply.code(400).send(errorBody(400, references));
          return { code: 200, data: await wire.bookOf(segment, references) };
        });

        api.get(NSE_PATHS.activeSecurities, async () => ({ code: 200, data: await wire.activeSecurities(segment) }));

        api.get(NSE_PATHS.messageStream, async (request, reply) => {
          const raw = (request.query as Record<string, unknown>).from;
          const from = raw === undefined || raw === '' ? 0 : Number(raw);
          if (typeof raw === 'object' || !Number.isSafeInteger(from) || from < 0)
            return reply
              .code(400)
              .send(errorBody(400, 'from: the sequence number to replay after, a whole number of at least 0'));
          reply.hijack();
          streams.serve(reply.raw, segment, from);
        });
      },
      { prefix: `/${segment}/api` },
    );
  }

  /** A batch's items in their order: the new bids of a run placed together, each change on its own. */
  async function applyBatch(segment: OfsExchange, orders: readonly (WireOrder | ItemAnswer)[]): Promise<ItemAnswer[]> {
    const answers: ItemAnswer[] = [];
    let run: WireOrder[] = [];
    const flush = async () => {
      if (run.length > 0) answers.push(...(await wire.place(segment, run)));
      run = [];
    };
    for (const order of orders) {
      if (!isAnswer(order) && order.operationType === 'E') {
        run.push(order);
        continue;
      }
      await flush();
      answers.push(isAnswer(order) ? order : await wire.change(segment, order));
    }
    await flush();
    return answers;
  }

  /** An order or batch call between the fault hooks. */
  async function withFaults(
    request: FastifyRequest,
    reply: FastifyReply,
    segment: OfsExchange,
    method: FaultCall['method'],
    path: string,
    apply: () => Promise<{ status: number; body: unknown }>,
  ): Promise<unknown> {
    const call: FaultCall = {
      exchange: segment,
      method,
      path,
      body: request.body,
      loginId: request.simSession!.loginId,
    };
    const instead = await state.faults.beforeApply?.(call);
    if (instead === 'destroy') return cut(request, reply);
    if (instead !== undefined) {
      return reply
        .code(instead.status)
        .headers(instead.headers ?? {})
        .send(instead.body ?? errorBody(instead.status, `The exchange answered ${instead.status}`));
    }
    const answer = await apply();
    if ((await state.faults.afterApply?.({ ...call, answer })) === 'destroy') return cut(request, reply);
    return reply.code(answer.status).send(answer.body);
  }

  function cut(request: FastifyRequest, reply: FastifyReply): FastifyReply {
    reply.hijack();
    request.raw.socket.destroy();
    return reply;
  }

  const host = options.host ?? '127.0.0.1';
  await app.listen({ host, port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0);
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  logger.info(
    { url, exchanges, users: options.users.length, ...(options.ibbs && { ibbs: options.ibbs }) },
    'exchange simulator listening',
  );
  const runSteps = options.runSteps ?? true;
  if (runSteps) exchange.start();
  if (runSteps) ibbs?.start();

  let closing: Promise<void> | undefined;
  return {
    url,
    port,
    baseUrl: (segment) => `${url}/${segment}/api`,
    exchange,
    ibbs,
    get faults() {
      return state.faults;
    },
    set faults(faults: ExchangeSimFaults) {
      state.faults = faults;
    },
    async step() {
      await exchange.step();
      await streams.wake();
    },
    expireTokens: () => sessions.endAll(),
    dropStreams: () => streams.dropAll(),
    get streams() {
      return streams.count;
    },
    close() {
      closing ??= (async () => {
        await ibbs?.stop();
        await exchange.stop();
        streams.endAll();
        const grace = setTimeout(() => app.server.closeAllConnections(), CLOSE_GRACE_MS);
        try {
          await app.close();
        } finally {
          clearTimeout(grace);
        }
      })();
      return closing;
    },
  };
}
