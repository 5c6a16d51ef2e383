/**
 * The live order socket (odin-compat.md, "The live order socket"; docs/design/message-socket.md): Socket.IO
 * on the HTTP server's own port, at Socket.IO's default path /socket.io/, which Socket.IO answers before
 * Fastify sees the request. A client connects, emits `loginAPI` with `{"jToken": "<access_token>"}`, and
 * from then on receives `MSG:DATA` for every change of its orders (and each allotment), fed by this node's
 * order-event feed, the same as the event stream's. A socket without a valid login within the login timeout
 * is sent `MSG:ERROR` and disconnected; so is one whose token is later revoked or expires, and one beyond the
 * stream caps, which it shares with the event streams from its login: MAX_STREAMS_PER_USER and
 * MAX_STREAMS_PER_NODE. From the moment Engine.IO accepts its connection (websocket or long-polling) until its
 * login, whether or not it ever connects a socket, it holds a slot of a budget of its own (issue 21 row 1):
 * MAX_PENDING_SOCKETS_PER_NODE, and MAX_PENDING_SOCKETS_PER_ADDRESS from one client address; so connections
 * that never log in cannot take a logged-in trader's place. Beyond those, a connection is refused at its
 * handshake.
 */
import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { Server, type Socket } from 'socket.io';
import { ApiError, Errors, type ErrorKind, type FieldError, DatabaseUnavailableError } from '../../domain/errors.js';
import { odinMessagesOf } from '../../domain/orders/socket-messages.js';
import type { AuthService, Caller } from '../../services/auth.js';
import type { OrderEventsService } from '../../services/order-events.js';
import type { StreamSlot } from '../../services/stream-quota.js';
import {
  DEFAULT_SESSION_RECHECK_MS,
  StreamSessions,
  type StreamSession,
  type StreamTransport,
} from '../../services/stream-session.js';
import { SUCCESS_CODE } from '../../schemas/common.js';

export const MESSAGE_SOCKET_PATH = '/socket.io';
/** The client's login: `{"jToken": "<access_token>"}`. */
export const LOGIN_EVENT = 'loginAPI';
/** One ODIN message: an order change (ORD_NRML) or a trade (TRD_MSG). */
export const MESSAGE_EVENT = 'MSG:DATA';
/** Why the server is about to disconnect the socket: the REST error envelope without request_id. */
export const ERROR_EVENT = 'MSG:ERROR';

export const DEFAULT_LOGIN_TIMEOUT_MS = 5_000;
/** How often a logged-in socket's token is checked again (a logout revokes it). */
export const DEFAULT_TOKEN_RECHECK_MS = DEFAULT_SESSION_RECHECK_MS;
/** A client that lets this many messages pile up unsent is cut off (the event stream's 1 MiB, in messages). */
const MAX_UNSENT_MESSAGES = 1_000;
/** How long close() waits for the websockets to close after their last message, before cutting them. */
const CLOSE_GRACE_MS = 1_000;
/** loginAPI messages of one socket being checked or waiting; one more is refused (e-429), not queued. */
const MAX_WAITING_LOGINS = 2;
/** A loginAPI payload is a few hundred bytes; nothing else is read from the socket. */
const MAX_MESSAGE_BYTES = 16 * 1024;
/**
 * Connections Engine.IO accepts beyond the node's cap only to tell their socket `MSG:ERROR` e-503 (as a
 * Socket.IO client expects a refusal): they hold no slot, and live until their CONNECT is answered or for
 * the refusal grace. Beyond this many at once, a new connection is refused at its handshake.
 */
export const MAX_CONNECTIONS_BEING_REFUSED = 16;
/** How long a connection let in beyond the node's cap has to connect its socket before it is closed. */
export const DEFAULT_REFUSAL_GRACE_MS = 1_000;

export interface MessageSocketOptions {
  auth: Pick<AuthService, 'authenticate'>;
  /** The order-event feed, and the stream quota the sockets share with the event streams. */
  orderEvents: Pick<OrderEventsService, 'subscribe' | 'streams'>;
  logger: Logger;
  /**
   * How long a new connection has to log in (ms), from the moment Engine.IO accepts it: one that connects
   * no socket in that time is closed, one whose socket does not log in is refused (e-201). 5 s by default.
   */
  loginTimeoutMs?: number;
  /**
   * How long a connection let in beyond the node's cap has to connect its socket, which is then told
   * e-503, before it is closed (ms); 1 s by default, never more than loginTimeoutMs.
   */
  refusalGraceMs?: number;
  /** How often a logged-in socket's token is checked again (ms); 30 s by default. */
  tokenRecheckMs?: number;
  /** The clock the tokens' expiry is read on (the AuthService's). */
  now?: () => number;
}

export interface MessageSocket {
  /**
   * Tells every socket that the server is shutting down and disconnects it; resolves once their
   * connections are closed (or cut after a short grace). New sockets are disconnected at once.
   */
  close(): Promise<void>;
}

interface SocketError {
  status: 'error';
  code: string;
  message: string;
  errors: FieldError[];
}

type Acknowledge = (answer: unknown) => void;

function socketError(kind: ErrorKind, message: string, errors: FieldError[] = []): SocketError {
  return { status: 'error', code: kind.code, message, errors };
}

/** The answer to a failure: a catalog error as it is (its field named as the socket names it), else a 503 or 500. */
function socketErrorOf(error: unknown, logger: Logger): SocketError {
  if (error instanceof ApiError) {
    const errors = error.errors.map((e) => (e.field === 'Authorization' ? { ...e, field: 'jToken' } : e));
    return socketError(error.kind, error.message, errors);
  }
  if (error instanceof DatabaseUnavailableError) {
    logger.warn({ err: error }, 'message socket: the database is unavailable');
    return socketError(Errors.UNAVAILABLE, 'The service cannot reach its database; connect and log in again shortly');
  }
  logger.error({ err: error }, 'message socket: unexpected error');
  return socketError(Errors.INTERNAL, Errors.INTERNAL.title);
}

/** The access token of a loginAPI payload (an object, or the same as a JSON string), or the error that says what is wrong. */
function tokenOf(payload: unknown): string | SocketError {
  let body = payload;
  if (typeof body === 'string') {
    try {
      body = JSON.parse(body);
    } catch {
      body = undefined;
    }
  }
  const token = typeof body === 'object' && body !== null ? (body as Record<string, unknown>).jToken : undefined;
  if (typeof token === 'string' && /^\S{1,512}$/.test(token)) return token;
  return socketError(
    Errors.TOKEN_MISSING,
    `Emit ${LOGIN_EVENT} with {"jToken": "<access_token>"}; log in at POST /authentication/v1/user/session`,
    [{ field: 'jToken', message: 'missing or not an access token' }],
  );
}

/**
 * One connected socket: its login deadline (counted from the connection's acceptance), its logins, and its
 * stream session (src/services/stream-session.ts), which from the login holds the user's part of the
 * connection's slot, the user's subscription and the token's re-checks; this class frames what it hands
 * over as ODIN messages. The slot belongs to the connection, which gives it back when it closes: the
 * socket's end closes it.
 */
class OrderSocketSession {
  private readonly stream: StreamSession;
  /** The login deadline. */
  private readonly loginDeadline: NodeJS.Timeout;
  /** Logins are taken one at a time, in the order they came; at most MAX_WAITING_LOGINS wait. */
  private logins: Promise<void> = Promise.resolve();
  private loginsWaiting = 0;
  /** Messages emitted and not yet handed to the transport. */
  private unsent = 0;
  private ended = false;

  constructor(
    private readonly socket: Socket,
    slot: StreamSlot,
    /** When the connection was accepted: the login deadline runs from then. */
    acceptedAt: number,
    sessions: StreamSessions,
    private readonly options: Required<MessageSocketOptions>,
    private readonly onEnd: (session: OrderSocketSession) => void,
  ) {
    this.stream = sessions.attach(slot, this.transport(), options.logger.child({ socketId: socket.id }));
    const seconds = options.loginTimeoutMs / 1000;
    this.loginDeadline = setTimeout(
      () =>
        this.refuse(
          socketError(
            Errors.TOKEN_MISSING,
            `No ${LOGIN_EVENT} within ${seconds} s of connecting: emit ${LOGIN_EVENT} with {"jToken": "<access_token>"} on connect`,
            [{ field: 'jToken', message: 'no loginAPI received in time' }],
          ),
        ),
      Math.max(0, acceptedAt + options.loginTimeoutMs - Date.now()),
    );
    socket.on(LOGIN_EVENT, (payload: unknown, ...rest: unknown[]) => {
      const ack = rest.find((arg): arg is Acknowledge => typeof arg === 'function');
      // Logins are taken one at a time, in order, and only a few may wait: a client cannot pile them up.
      if (this.loginsWaiting >= MAX_WAITING_LOGINS) {
        ack?.(
          socketError(
            Errors.RATE_LIMITED,
            `${MAX_WAITING_LOGINS} ${LOGIN_EVENT} of this socket are still being checked; wait for their answers`,
          ),
        );
        return;
      }
      this.loginsWaiting += 1;
      this.logins = this.logins
        .then(() => this.login(payload, ack))
        // Nothing a login throws may escape: an unhandled rejection would take the whole node down.
        .catch((error: unknown) => this.refuse(socketErrorOf(error, this.options.logger), ack))
        .finally(() => {
          this.loginsWaiting -= 1;
        });
    });
    // The engine hands its buffered packets to the transport in flushes: what is left is unsent.
    socket.conn.on('flush', (packets: unknown[]) => {
      this.unsent = Math.max(0, this.unsent - packets.length);
    });
    socket.on('disconnect', () => this.end());
  }

  /** The server is shutting down: the client logs in again on another node, or later. */
  shutDown(): void {
    this.refuse(socketError(Errors.UNAVAILABLE, 'The server is shutting down; connect and log in again shortly'));
  }

  private async login(payload: unknown, ack: Acknowledge | undefined): Promise<void> {
    if (this.ended) return;
    const token = tokenOf(payload);
    if (typeof token !== 'string') return this.refuse(token, ack);
    const authorization = `Bearer ${token}`;
    let caller: Caller;
    try {
      caller = await this.options.auth.authenticate(authorization);
    } catch (error) {
      return this.refuse(socketErrorOf(error, this.options.logger), ack);
    }
    if (this.ended) return;
    // The same user with another token keeps its subscription; another user's replaces it, and beyond the
    // user's cap the 429 is the refusal, and the socket is disconnected.
    const newUser = this.stream.userId !== caller.userId;
    try {
      await this.stream.subscribe(caller, authorization);
      await this.stream.start();
    } catch (error) {
      return this.refuse(socketErrorOf(error, this.options.logger), ack);
    }
    if (this.ended) return;
    clearTimeout(this.loginDeadline);
    if (newUser)
      this.options.logger.info({ socketId: this.socket.id, userId: caller.userId }, 'message socket logged in');
    ack?.({
      status: 'success',
      code: SUCCESS_CODE,
      message: 'Logged in to the order socket',
      data: { user_id: caller.userId },
    });
  }

  /** How the stream session's events and ends reach the client: ODIN messages, MSG:ERROR and a disconnect. */
  private transport(): StreamTransport {
    return {
      send: (event, trade) => {
        let messages;
        try {
          messages = odinMessagesOf(event, trade);
        } catch (error) {
          this.options.logger.error(
            { err: error, eventId: event.event_id },
            'message socket: an order event has no ODIN message',
          );
          return;
        }
        for (const message of messages) this.socket.emit(MESSAGE_EVENT, message);
        this.unsent += messages.length;
      },
      unread: () => this.unsent,
      maxUnread: MAX_UNSENT_MESSAGES,
      drained: () => {
        if (this.ended || this.unsent === 0) return Promise.resolve();
        return new Promise<void>((resolve) => {
          const done = () => {
            this.socket.conn.off('drain', done);
            this.socket.off('disconnect', done);
            resolve();
          };
          this.socket.conn.on('drain', done);
          this.socket.on('disconnect', done);
        });
      },
      close: (end) => {
        if (end.why === 'session-ended') return this.refuse(socketErrorOf(end.refusal, this.options.logger));
        if (end.why === 'shutdown') return this.shutDown();
        this.options.logger.warn(
          { socketId: this.socket.id, unsent: this.unsent },
          'message socket: the client does not read; disconnecting it',
        );
        this.socket.disconnect(true);
      },
    };
  }

  /** Says why (MSG:ERROR, and the login's acknowledgement when it asked for one), then disconnects. */
  private refuse(error: SocketError, ack?: Acknowledge): void {
    if (this.ended) return;
    ack?.(error);
    this.socket.emit(ERROR_EVENT, error);
    this.options.logger.info(
      { socketId: this.socket.id, userId: this.stream.userId ?? undefined, code: error.code },
      'message socket refused',
    );
    // The engine sends what is buffered (the MSG:ERROR) before it closes the connection.
    this.socket.disconnect(true);
    this.end();
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    clearTimeout(this.loginDeadline);
    this.stream.end();
    this.onEnd(this);
  }
}

/** Engine.IO's connection under a socket (`socket.conn`): one per client, websocket or long-polling. */
type EngineConnection = Socket['conn'];

/** What the node holds for one Engine.IO connection, from its acceptance until it closes. */
interface Connection {
  /**
   * Its slot of the node's cap; or, for a connection let in beyond the cap only to be refused, why (the
   * node is full), told to its socket if it connects one.
   */
  admission: { slot: StreamSlot } | { refusal: SocketError };
  /** When Engine.IO accepted it: the login deadline runs from then. */
  acceptedAt: number;
  /** Whether it has connected its socket: one socket per connection, whose end closes the connection. */
  connected: boolean;
}

/** The client address of a connection's request, for the per-address cap on connections not logged in. */
function addressOf(request: IncomingMessage): string {
  return request.socket?.remoteAddress ?? 'unknown';
}

/** Attaches the live order socket to the HTTP server (before or after it listens). */
export function attachMessageSocket(server: HttpServer, options: MessageSocketOptions): MessageSocket {
  const settings: Required<MessageSocketOptions> = {
    loginTimeoutMs: DEFAULT_LOGIN_TIMEOUT_MS,
    tokenRecheckMs: DEFAULT_TOKEN_RECHECK_MS,
    refusalGraceMs: DEFAULT_REFUSAL_GRACE_MS,
    now: Date.now,
    ...options,
    logger: options.logger.child({ component: 'message-socket' }),
  };
  const { streams } = settings.orderEvents;
  // Each logged-in socket's stream session: its user's slot, subscription and token re-checks.
  const streamSessions = new StreamSessions({
    feed: settings.orderEvents,
    auth: settings.auth,
    recheckMs: settings.tokenRecheckMs,
    now: settings.now,
  });
  const refusalGraceMs = Math.min(settings.refusalGraceMs, settings.loginTimeoutMs);
  let closing = false;
  /** Connections let in beyond the node's cap to be told so, open now (at most MAX_CONNECTIONS_BEING_REFUSED). */
  let beingRefused = 0;
  /** Handshakes refused by the node's cap but let in to be told so: their refusal, already counted by the quota. */
  const refusedAtHandshake = new WeakMap<IncomingMessage, SocketError>();

  /**
   * The refusal of one more connection not logged in from `address` (its address's cap or the node's
   * pending budget), or null when there is room (nothing is taken).
   */
  const pendingRefusal = (address: string): SocketError | null => {
    try {
      streams.checkPending(address);
      return null;
    } catch (error) {
      return socketErrorOf(error, settings.logger);
    }
  };

  const io = new Server(server, {
    path: MESSAGE_SOCKET_PATH,
    serveClient: false,
    maxHttpBufferSize: MAX_MESSAGE_BYTES,
    // Clients on Socket.IO 2 (Engine.IO protocol 3), as older ODIN SDKs may be, connect too.
    allowEIO3: true,
    // A connection that connects no socket is closed as soon as one whose socket does not log in (Socket.IO's
    // default is 45 s, during which it would hold a connection for nothing).
    connectTimeout: settings.loginTimeoutMs,
    // Every handshake (websocket or long-polling; Engine.IO asks only for new connections, not for their
    // later requests or upgrades) is checked against the node's cap before anything is set up for it. The
    // slot is taken once Engine.IO has accepted the connection (below): a handshake that fails after this
    // check holds nothing. Engine.IO answers a refusal 403 (long-polling) or 400 (websocket upgrade), with
    // this message; it lets no other status be chosen.
    allowRequest: (request, answer) => {
      if (closing)
        return answer(`${Errors.UNAVAILABLE.code}: the server is shutting down; connect again shortly`, false);
      const refusal = pendingRefusal(addressOf(request));
      if (refusal === null) return answer(null, true);
      if (beingRefused < MAX_CONNECTIONS_BEING_REFUSED) {
        // Let in so that its socket is told e-503, as a Socket.IO client expects; it holds no slot.
        refusedAtHandshake.set(request, refusal);
        return answer(null, true);
      }
      settings.logger.debug({ code: refusal.code }, 'message socket: connection refused at its handshake');
      answer(`${refusal.code}: ${refusal.message}`, false);
    },
  });
  const connections = new WeakMap<EngineConnection, Connection>();
  const sessions = new Set<OrderSocketSession>();
  // The connections Socket.IO took over as websockets: the HTTP server's close() does not end them.
  const upgraded = new Set<Duplex>();
  server.on('upgrade', (request, connection: Duplex) => {
    if (!request.url?.startsWith(`${MESSAGE_SOCKET_PATH}/`)) return;
    upgraded.add(connection);
    connection.once('close', () => upgraded.delete(connection));
  });

  // Every connection Engine.IO accepts counts from now until it closes, socket or not: in the pending budget
  // until its login, then in the node's streams. A flood of connections that never connect a socket (or
  // never log in) fills only the pending budget, and one address only its share of it. Put before
  // Socket.IO's own listener (which sets up the connection's Socket.IO client), so that the deadline below
  // comes before Socket.IO's connectTimeout, as long.
  io.engine.prependListener('connection', (conn: EngineConnection) => {
    // Closed once Socket.IO has set the connection up, so that it also cleans up after it.
    const refuse = () => queueMicrotask(() => conn.close(true));
    if (closing) return refuse();
    const acceptedAt = Date.now();
    // Refused by its handshake's check (and counted there), or now: another took the room in between.
    let admission: Connection['admission'];
    const refused = refusedAtHandshake.get(conn.request);
    if (refused !== undefined) admission = { refusal: refused };
    else {
      try {
        admission = { slot: streams.openPending(addressOf(conn.request)) };
      } catch (error) {
        admission = { refusal: socketErrorOf(error, settings.logger) };
      }
    }
    if ('slot' in admission) {
      // Given back once, when the connection closes, however it closes.
      const { slot } = admission;
      conn.once('close', () => slot.release());
    } else {
      if (beingRefused >= MAX_CONNECTIONS_BEING_REFUSED) {
        settings.logger.debug({ code: admission.refusal.code }, 'message socket: connection refused on its acceptance');
        return refuse();
      }
      beingRefused += 1;
      conn.once('close', () => (beingRefused -= 1));
    }
    const connection: Connection = { admission, acceptedAt, connected: false };
    connections.set(conn, connection);
    // A connection whose socket has not connected by its deadline (the login deadline; the refusal grace for
    // one let in to be refused, connected or not) is closed, discarding what is buffered: a long-polling
    // client that does not poll would otherwise keep the connection, and its slot, for Engine.IO's 30 s
    // orderly close. A socket's own login deadline is its session's.
    const deadline = setTimeout(
      () => {
        if (!connection.connected || 'refusal' in admission) conn.close(true);
      },
      'slot' in admission ? settings.loginTimeoutMs : refusalGraceMs,
    );
    conn.once('close', () => clearTimeout(deadline));
  });

  io.on('connection', (socket) => {
    const connection = connections.get(socket.conn);
    // A socket ends with its connection; a second socket on it (after the first one's end) is not taken.
    if (closing || connection === undefined || connection.connected) {
      socket.disconnect(true);
      return;
    }
    connection.connected = true;
    const { admission } = connection;
    if ('refusal' in admission) {
      socket.emit(ERROR_EVENT, admission.refusal);
      settings.logger.info({ socketId: socket.id, code: admission.refusal.code }, 'message socket refused');
      socket.disconnect(true);
      return;
    }
    const session = new OrderSocketSession(
      socket,
      admission.slot,
      connection.acceptedAt,
      streamSessions,
      settings,
      (ended) => {
        sessions.delete(ended);
        // However the socket ended (refused, or the client disconnected it alone), its connection closes,
        // after what is buffered (the MSG:ERROR), and so gives its slot back.
        socket.conn.close();
      },
    );
    sessions.add(session);
  });

  return {
    async close() {
      closing = true;
      for (const session of [...sessions]) session.shutDown();
      // Connections still opening or not yet logged in to the namespace.
      io.engine.close();
      const closed = [...upgraded].map(
        (connection) => new Promise<void>((resolve) => connection.once('close', () => resolve())),
      );
      let grace: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all(closed),
        new Promise<void>((resolve) => (grace = setTimeout(resolve, CLOSE_GRACE_MS))),
      ]);
      clearTimeout(grace);
      for (const connection of upgraded) connection.destroy();
    },
  };
}
