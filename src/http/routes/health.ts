/**
 * GET /health/live and GET /health/ready, for load balancers and orchestrators, and GET /health/oms and GET
 * /health/exchanges, for the operator's monitor: no token (they tell only up or down, and which instruments wait), never shed (the load shedder takes order entry alone), not in the audit trail. Live answers
 * whenever the process serves HTTP; ready only when the database answers a read within a second, else 503
 * e-503 in the error envelope, so that a balancer sends no calls to a node that would answer them 503.
 * While the server shuts down both answer 503 e-503 (src/http/plugins/shutdown.ts).
 */
import Type from 'typebox';
import { ApiError, Errors } from '../../domain/errors.js';
import { answerWithin } from '../../metrics/operator-metrics.js';
import { NoQuery } from '../../schemas/common.js';
import type { SetAsideInstrument } from '../../domain/ofs/instrument-keys.js';
import type { LinkHealthBoard } from '../../oms/links/health-board.js';
import type { App } from '../app-type.js';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '../plugins/errors.js';
import { errorResponses } from '../responses.js';

export const LIVE_PATH = '/health/live';
export const READY_PATH = '/health/ready';

/** A balancer's probe waits a few seconds at most: the answer comes within one. */
export const READY_TIMEOUT_MS = 1_000;

export const OMS_PATH = '/health/oms';
export const EXCHANGES_PATH = '/health/exchanges';

/** The outbox entries not done, and when the oldest was queued (epoch ms; null: none). */
export interface OutboxBacklog {
  open: number;
  oldestCreatedAt: number | null;
}

/** Whether the database answers, what the OMS set aside, and what waits for it (src/store/sql/health.ts). */
export interface DatabaseProbe {
  answers(): Promise<void>;
  setAside(): Promise<SetAsideInstrument[]>;
  outboxBacklog(): Promise<OutboxBacklog>;
}

const LinkState = Type.Object(
  {
    exchange: Type.String({ description: 'The exchange segment the link serves: NSE_EQ or BSE_EQ.' }),
    connected: Type.Boolean({
      description: 'The link holds a session with the exchange and its message stream is open.',
    }),
  },
  { additionalProperties: false },
);

const ReadyAnswer = Type.Object(
  {
    status: Type.Literal('ok'),
    exchanges: Type.Array(LinkState, {
      description:
        "This node's exchange links (none when it runs no OMS worker, or the simulator in process). A link that is down does not make the node unready: order entry goes on, and the bids wait for the exchange (GET /health/exchanges).",
    }),
  },
  { additionalProperties: false, description: 'Ready' },
);

const ExchangesHealth = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
      description: 'ok: every link of this node is connected; degraded: one is not (its `problem` says why).',
    }),
    links: Type.Array(
      Type.Object(
        {
          ...LinkState.properties,
          last_answer_at: Type.Union([Type.String(), Type.Null()], {
            description: 'When the exchange last answered this link (ISO 8601); null: not since the node started.',
          }),
          problem: Type.Union([Type.String(), Type.Null()], {
            description: 'Why the link is not connected, in words; null when it is.',
          }),
        },
        { additionalProperties: false },
      ),
    ),
    waiting: Type.Object(
      {
        entries: Type.Integer({
          description:
            'Placements, modifications and cancellations not yet done by the OMS, in the whole database (bids waiting for the exchange among them).',
        }),
        oldest_since: Type.Union([Type.String(), Type.Null()], {
          description: 'When the oldest of them was queued (ISO 8601); null: none waits.',
        }),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false },
);

const HealthOk = Type.Object({ status: Type.Literal('ok') }, { additionalProperties: false, description: 'Up' });

const OmsHealth = Type.Object(
  {
    status: Type.Union([Type.Literal('ok'), Type.Literal('degraded')], {
      description:
        'ok: the OMS has set no instrument aside; degraded: it has (the list), and those wait for the operator.',
    }),
    set_aside: Type.Array(
      Type.Object(
        {
          instrument: Type.String({ description: '`offer:<offer_id>` or `issue:<exchange>:<scrip_token>`.' }),
          step: Type.String({ description: 'What kept failing: allocation, indicative or events.' }),
          failures: Type.Integer({ description: 'Failures in a row.' }),
          since: Type.String({ description: 'When it was set aside.' }),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);

export function registerHealthRoutes(app: App, database: DatabaseProbe, links: Pick<LinkHealthBoard, 'current'>): void {
  app.get(
    EXCHANGES_PATH,
    {
      schema: {
        tags: ['operations'],
        summary: "The exchange links: this node's sessions and streams, and what waits for the exchange",
        description:
          'No token. 200 with each exchange link of this node (connected, when the exchange last answered, why it is down) and the OMS\'s queue in the whole database (how many entries wait, since when): `"degraded"` when a link is down. Bids the exchange did not answer wait `EXXMITTED` and are sent again after the link\'s back-off. 503 `e-503` when the database does not answer.',
        querystring: NoQuery,
        response: { 200: ExchangesHealth, ...errorResponses(Errors.INVALID_QUERY) },
      },
    },
    async (request) => {
      let backlog: OutboxBacklog;
      try {
        backlog = await answerWithin(database.outboxBacklog(), READY_TIMEOUT_MS);
      } catch (error) {
        request.log.warn({ err: error }, 'the exchanges health is unknown: the database does not answer');
        throw new ApiError(Errors.UNAVAILABLE, `The database does not answer within ${READY_TIMEOUT_MS} ms`, [], {
          'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
        });
      }
      const current = links.current();
      return {
        status: current.every((link) => link.connected) ? ('ok' as const) : ('degraded' as const),
        links: current.map((link) => ({
          exchange: link.exchange,
          connected: link.connected,
          last_answer_at: link.lastAnswerAt === null ? null : new Date(link.lastAnswerAt).toISOString(),
          problem: link.problem,
        })),
        waiting: {
          entries: backlog.open,
          oldest_since: backlog.oldestCreatedAt === null ? null : new Date(backlog.oldestCreatedAt).toISOString(),
        },
      };
    },
  );

  app.get(
    LIVE_PATH,
    {
      schema: {
        tags: ['operations'],
        summary: 'Liveness: the process serves HTTP',
        description:
          'No token. 200 `{"status":"ok"}` whenever the process answers at all; it reads nothing. 503 `e-503` while it shuts down.',
        querystring: NoQuery,
        response: { 200: HealthOk, ...errorResponses(Errors.INVALID_QUERY) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  app.get(
    OMS_PATH,
    {
      schema: {
        tags: ['operations'],
        summary: 'The OMS: instruments set aside after repeated failures',
        description:
          'No token. 200 `{"status":"ok","set_aside":[]}`, or `"degraded"` with the instruments (offers, issues) whose allocation or allotments the OMS set aside after repeated failures: the others go on, and these wait for the operator (`ordergate oms stuck` gives the reasons, `ordergate oms retry` takes one back). 503 `e-503` when the database does not answer.',
        querystring: NoQuery,
        response: { 200: OmsHealth, ...errorResponses(Errors.INVALID_QUERY) },
      },
    },
    async (request) => {
      let setAside: SetAsideInstrument[];
      try {
        setAside = await answerWithin(database.setAside(), READY_TIMEOUT_MS);
      } catch (error) {
        request.log.warn({ err: error }, 'the OMS health is unknown: the database does not answer');
        throw new ApiError(Errors.UNAVAILABLE, `The database does not answer within ${READY_TIMEOUT_MS} ms`, [], {
          'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
        });
      }
      return {
        status: setAside.length === 0 ? ('ok' as const) : ('degraded' as const),
        set_aside: setAside.map((s) => ({
          instrument: s.instrument,
          step: s.step,
          failures: s.failures,
          since: new Date(s.setAsideAt).toISOString(),
        })),
      };
    },
  );

  app.get(
    READY_PATH,
    {
      schema: {
        tags: ['operations'],
        summary: 'Readiness: the database answers',
        description: `No token. 200 \`{"status":"ok","exchanges":[...]}\` when the database answers a read within ${READY_TIMEOUT_MS} ms, with the state of this node's exchange links; else 503 \`e-503\` with \`Retry-After\` (also while the server shuts down). Take a node that is not ready out of the load balancer.`,
        querystring: NoQuery,
        response: { 200: ReadyAnswer, ...errorResponses(Errors.INVALID_QUERY) },
      },
    },
    async (request) => {
      try {
        await answerWithin(database.answers(), READY_TIMEOUT_MS);
      } catch (error) {
        request.log.warn({ err: error }, 'not ready: the database does not answer');
        throw new ApiError(
          Errors.UNAVAILABLE,
          `The database does not answer within ${READY_TIMEOUT_MS} ms; this node is not ready`,
          [],
          {
            'Retry-After': String(UNAVAILABLE_RETRY_AFTER_SECONDS),
          },
        );
      }
      return {
        status: 'ok' as const,
        exchanges: links.current().map((link) => ({ exchange: link.exchange, connected: link.connected })),
      };
    },
  );
}
