/**
 * An HTTP client of NSE's e-OFS Web API (mapping.ts holds the wire): it logs the API user in, keeps its
 * token fresh, and sends bids one at a time or in a batch. Each submission ends in one of four outcomes, and
 * the one that matters most is the third: an answer lost after the request may have reached the exchange
 * (a timeout, a reset, a 5xx) is `unknown`, never a refusal, so that the caller reads the exchange's book
 * for the bid's reference before it sends anything again (docs/design/exchange-links.md, "Exactly once").
 * Credentials are held here and never logged or put in an error.
 */
import {
  authorizationHeader,
  BOOK_QUERY_LIMIT,
  bookBySymbolPath,
  messagesOf,
  NSE_PATHS,
  type NseActiveSecurity,
  type NseBookEntry,
  type NseStreamMessage,
  orderAnswerOf,
  referenceOf,
  tokenOf,
  tokenRequest,
  toNseOrder,
  type MemberBid,
  type NseCredentials,
  type NseToken,
  type OperationType,
} from './mapping.js';

/** A call the exchange did not answer (see SubmitOutcome). */
export type Unanswered = Extract<SubmitOutcome, { kind: 'unknown' | 'not-sent' }>;

export type SubmitOutcome =
  | { kind: 'accepted'; exchangeOrderId: string }
  | { kind: 'rejected'; reason: string }
  /** The answer was lost after the request was sent: the bid may be at the exchange. Read its book first. */
  | { kind: 'unknown'; why: string }
  /** The exchange did not take the request (refused connection, rate limit, no session): send it again later. */
  | { kind: 'not-sent'; why: string; retryAfterMs: number };

export interface NseClientOptions {
  /** The API's base URL, e.g. https://eofsuat.nseindia.com/api (no trailing slash needed). */
  baseUrl: string;
  credentials: NseCredentials;
  /** How long a call may take before its answer counts as lost (ms). */
  timeoutMs?: number;
  /** A token's lifetime when the login does not say (ms). Decision: 10 minutes. */
  defaultTokenMs?: number;
  now?: () => number;
  fetch?: typeof fetch;
  /**
   * Told of each line of the stream it cannot read (not JSON, an unknown type, a field of the wrong type):
   * skipped, and said to the operator (an allotment the link cannot read is one the OMS never applies).
   */
  onUnreadableLine?: (line: string) => void;
}

const DEFAULT_TIMEOUT_MS = 5_000;
const DEFAULT_TOKEN_MS = 10 * 60 * 1000;
/** A token is refreshed this long before it expires. */
const REFRESH_AHEAD_MS = 60_000;
/** The pause after a 429 that names none. */
const DEFAULT_RETRY_AFTER_MS = 1_000;
/** The pause after a refused login: a wrong password retried every second would lock the API user. */
const LOGIN_REFUSED_RETRY_MS = 60_000;

/**
 * Connection errors that mean the request never left: safe to send again (a name of several addresses
 * fails with an AggregateError of these, which counts when every one of them is such).
 */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * Statuses after which the exchange may hold the bid though it did not say it took it: a timeout while it
 * worked (408), a conflict with a request under way (409), too early (425), and every 5xx.
 */
const MAY_HOLD = new Set([408, 409, 425]);

/** 4xx statuses that say the request never reached the bid's judge: not found, forbidden, method, size, type. */
const TRANSPORT_REFUSALS = new Set([403, 404, 405, 413, 414, 415]);

const METHOD_OF: Record<OperationType, 'POST' | 'PUT' | 'DELETE'> = {
  E: 'POST',
  M: 'PUT',
  // Decision: a carry-forward is an order message on the live bid, as a modification is.
  CF: 'PUT',
  C: 'DELETE',
};

/** An HTTP answer, or why there is none. */
type Exchange =
  { status: number; body: unknown; retryAfterMs: number | null } | { lost: true; notSent: boolean; why: string };

export class NseEofsClient {
  private token: NseToken | null = null;
  /** The login or refresh under way: calls that need a token meanwhile wait for it, rather than log in too. */
  private renewing: Promise<void> | null = null;
  /** After a refused login: no login before this instant (epoch ms), and what the exchange said. */
  private loginRefusedUntil = 0;
  private loginRefusal = '';
  /** How long a call may take before its answer counts as lost (ms). */
  readonly timeoutMs: number;
  private readonly now: () => number;
  private readonly fetch: typeof fetch;
  private readonly baseUrl: string;

  constructor(private readonly options: NseClientOptions) {
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.now = options.now ?? Date.now;
    this.fetch = options.fetch ?? globalThis.fetch;
    this.baseUrl = options.baseUrl.replace(/\/+$/, '');
  }

  /** Whether a token is held that has not expired. */
  get loggedIn(): boolean {
    return this.token !== null && (this.token.expiresAt === null || this.token.expiresAt > this.now());
  }

  /**
   * Logs the API user in; throws an Error naming the exchange's answer (never the credentials). After a
   * refused login, no other is tried for LOGIN_REFUSED_RETRY_MS, whoever asks (the book, the stream, a
   * bid): a wrong password retried by every caller would lock the API user.
   */
  async login(): Promise<void> {
    if (this.now() < this.loginRefusedUntil)
      throw new Error(
        `e-OFS login refused: not tried again before ${new Date(this.loginRefusedUntil).toISOString()} (${this.loginRefusal})`,
      );
    const answer = await this.call('POST', NSE_PATHS.token, tokenRequest(this.options.credentials), false);
    if ('lost' in answer) throw new Error(`e-OFS login: no answer (${answer.why})`);
    const token = answer.status === 200 ? tokenOf(answer.body, this.now()) : null;
    if (token === null) {
      const said = messagesOf((answer.body as { messages?: unknown } | null)?.messages);
      this.loginRefusal = `HTTP ${answer.status}${said === null ? '' : `, ${said}`}`;
      this.loginRefusedUntil = this.now() + LOGIN_REFUSED_RETRY_MS;
      throw new Error(`e-OFS login refused: ${this.loginRefusal}`);
    }
    this.token = {
      token: token.token,
      expiresAt: token.expiresAt ?? this.now() + (this.options.defaultTokenMs ?? DEFAULT_TOKEN_MS),
    };
  }

  /** A token that is valid for a while yet: refreshed ahead of its expiry, or a new login; one at a time. */
  private ensureToken(): Promise<void> {
    const token = this.token;
    if (token !== null && (token.expiresAt === null || token.expiresAt - REFRESH_AHEAD_MS > this.now())) {
      return Promise.resolve();
    }
    this.renewing ??= this.renew().finally(() => (this.renewing = null));
    return this.renewing;
  }

  private async renew(): Promise<void> {
    const token = this.token;
    if (token !== null && (token.expiresAt === null || token.expiresAt - REFRESH_AHEAD_MS > this.now())) return;
    if (token !== null && (token.expiresAt ?? 0) > this.now()) {
      const answer = await this.call('POST', NSE_PATHS.refreshToken, {}, true);
      const fresh = !('lost' in answer) && answer.status === 200 ? tokenOf(answer.body, this.now()) : null;
      if (fresh !== null) {
        this.token = {
          token: fresh.token,
          expiresAt: fresh.expiresAt ?? this.now() + (this.options.defaultTokenMs ?? DEFAULT_TOKEN_MS),
        };
        return;
      }
    }
    await this.login();
  }

  /** One bid: a new one (E), a modification (M), a cancellation (C) or a carry-forward (CF). */
  async submit(bid: MemberBid, operation: OperationType): Promise<SubmitOutcome> {
    const answer = await this.authorized(METHOD_OF[operation], NSE_PATHS.order, toNseOrder(bid, operation));
    if ('kind' in answer) return answer;
    if (answer.status !== 200) return refusalOf(answer);
    const data = (answer.body as { data?: unknown } | null)?.data;
    return outcomeOf(orderAnswerOf(data), referenceOf(bid.orderId));
  }

  /**
   * Several bids of one operation in one call (`/order/batch`): an outcome per bid, in their order. A bid
   * the answer leaves out is `unknown`: the exchange may hold it.
   */
  async submitBatch(bids: readonly MemberBid[], operation: OperationType): Promise<SubmitOutcome[]> {
    if (bids.length === 0) return [];
    const answer = await this.authorized(
      'POST',
      NSE_PATHS.orderBatch,
      bids.map((bid) => toNseOrder(bid, operation)),
    );
    if ('kind' in answer) return bids.map(() => answer);
    if (answer.status !== 200) {
      const refusal = refusalOf(answer);
      return bids.map(() => refusal);
    }
    const data = (answer.body as { data?: unknown } | null)?.data;
    const byReference = new Map<string, ReturnType<typeof orderAnswerOf>>();
    for (const item of Array.isArray(data) ? data : []) {
      const parsed = orderAnswerOf(item);
      if (parsed.reference !== null) byReference.set(parsed.reference, parsed);
    }
    return bids.map((bid) => {
      const reference = referenceOf(bid.orderId);
      const parsed = byReference.get(reference);
      return parsed === undefined
        ? { kind: 'unknown', why: 'the batch answer left this bid out' }
        : outcomeOf(parsed, reference);
    });
  }

  /** The securities open for bidding (mapping's `activeSecurities`); throws when there is no answer to go by. */
  async activeSecurities(): Promise<NseActiveSecurity[]> {
    const answer = await this.authorized('GET', NSE_PATHS.activeSecurities, null);
    if ('kind' in answer) throw new Error(`e-OFS activeSecurities: ${'why' in answer ? answer.why : answer.kind}`);
    const data = (answer.body as { data?: unknown } | null)?.data;
    if (answer.status !== 200 || !Array.isArray(data)) {
      const said = messagesOf((answer.body as { messages?: unknown } | null)?.messages);
      throw new Error(`e-OFS activeSecurities: HTTP ${answer.status}${said === null ? '' : `, ${said}`}`);
    }
    return (data as NseActiveSecurity[]).filter(
      (security) => typeof security?.symbol === 'string' && Array.isArray(security.series),
    );
  }

  /**
   * The exchange's book of our bids by reference (mapping's `orderBook`): the bids it holds, a reference it
   * does not hold left out. Throws when there is no answer to go by (the caller sends nothing then).
   */
  async queryBook(references: readonly string[]): Promise<NseBookEntry[] | Unanswered> {
    const entries: NseBookEntry[] = [];
    for (let i = 0; i < references.length; i += BOOK_QUERY_LIMIT) {
      const chunk = references.slice(i, i + BOOK_QUERY_LIMIT);
      const answer = await this.bookAt(`${NSE_PATHS.orderBook}?apiEchoBack=${chunk.map(encodeURIComponent).join(',')}`);
      if (!Array.isArray(answer)) return answer;
      entries.push(...answer);
    }
    return entries;
  }

  /** One book query's entries, or the unanswered outcome when there is no answer to go by. */
  private async bookAt(path: string): Promise<NseBookEntry[] | Unanswered> {
    const answer = await this.authorized('GET', path, null);
    if ('kind' in answer) {
      if (answer.kind === 'unknown' || answer.kind === 'not-sent') return answer;
      return { kind: 'not-sent', why: `e-OFS book query: ${answer.kind}`, retryAfterMs: DEFAULT_RETRY_AFTER_MS };
    }
    const data = (answer.body as { data?: unknown } | null)?.data;
    if (answer.status !== 200 || !Array.isArray(data)) {
      const said = messagesOf((answer.body as { messages?: unknown } | null)?.messages);
      return {
        kind: 'not-sent',
        why: `e-OFS book query: HTTP ${answer.status}${said === null ? '' : `, ${said}`}`,
        retryAfterMs: DEFAULT_RETRY_AFTER_MS,
      };
    }
    return (data as unknown[]).filter(isBookEntry);
  }

  /**
   * The member's whole book of one security (mapping's bookBySymbolPath), bids unknown to ordergate
   * included: what reconciliation compares. Unanswered when there is no answer to go by.
   */
  async querySymbolBook(symbol: string): Promise<NseBookEntry[] | Unanswered> {
    return this.bookAt(bookBySymbolPath(symbol));
  }

  /**
   * The message stream from after `from` (mapping's NseStreamMessage), one message at a time, until the
   * exchange ends it, the connection drops (it throws) or `signal` aborts. A 401 logs in again once.
   */
  async *stream(from: number, signal: AbortSignal): AsyncGenerator<NseStreamMessage> {
    let response: Response | null = null;
    for (let attempt = 0; attempt < 2 && response === null; attempt++) {
      await this.ensureToken();
      const answer = await this.fetch(`${this.baseUrl}${NSE_PATHS.messageStream}?from=${from}`, {
        method: 'GET',
        headers: { accept: 'application/x-ndjson', ...(this.token && authorizationHeader(this.token.token)) },
        signal,
      });
      if (answer.status === 401) {
        await answer.body?.cancel();
        this.token = null;
        continue;
      }
      if (answer.status !== 200 || answer.body === null) {
        await answer.body?.cancel();
        throw new Error(`e-OFS message stream: HTTP ${answer.status}`);
      }
      response = answer;
    }
    if (response === null) throw new Error('e-OFS message stream: the exchange refused the session twice (401)');
    const decoder = new TextDecoder();
    let pending = '';
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      pending += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = pending.indexOf('\n')) >= 0) {
        const line = pending.slice(0, end).trim();
        pending = pending.slice(end + 1);
        if (line === '') continue;
        const message = streamMessageOf(line);
        if (message !== null) yield message;
        else this.options.onUnreadableLine?.(line);
      }
    }
  }

  /**
   * A call with the session's token. A 401 means the exchange did not take the call: log in again once and
   * send it again; a second 401 is `not-sent`. A 429 is `not-sent` with its Retry-After; a 5xx or a lost
   * answer is `unknown`.
   */
  private async authorized(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body: unknown,
  ): Promise<SubmitOutcome | { status: number; body: unknown }> {
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await this.ensureToken();
      } catch (error) {
        // No session, so nothing was sent. A login the exchange refused is not tried again for a minute.
        const why = error instanceof Error ? error.message : String(error);
        return {
          kind: 'not-sent',
          why,
          retryAfterMs: why.startsWith('e-OFS login refused')
            ? // Whole seconds, rounded up: the wait is not cut short by the milliseconds the call took.
              Math.max(DEFAULT_RETRY_AFTER_MS, Math.ceil((this.loginRefusedUntil - this.now()) / 1000) * 1000)
            : DEFAULT_RETRY_AFTER_MS,
        };
      }
      const answer = await this.call(method, path, body, true);
      if ('lost' in answer) {
        return answer.notSent
          ? { kind: 'not-sent', why: answer.why, retryAfterMs: DEFAULT_RETRY_AFTER_MS }
          : { kind: 'unknown', why: answer.why };
      }
      if (answer.status === 401) {
        this.token = null;
        continue;
      }
      if (answer.status === 429) {
        return {
          kind: 'not-sent',
          why: 'the exchange limits the rate (429)',
          retryAfterMs: answer.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS,
        };
      }
      if (answer.status >= 500 || MAY_HOLD.has(answer.status)) {
        return { kind: 'unknown', why: `the exchange answered ${answer.status}` };
      }
      return { status: answer.status, body: answer.body };
    }
    return {
      kind: 'not-sent',
      why: 'the exchange refused the session twice (401)',
      retryAfterMs: DEFAULT_RETRY_AFTER_MS,
    };
  }

  private async call(method: string, path: string, body: unknown, withToken: boolean): Promise<Exchange> {
    let response: Response;
    try {
      response = await this.fetch(`${this.baseUrl}${path}`, {
        method,
        headers: {
          'content-type': 'application/json',
          accept: 'application/json',
          ...(withToken && this.token !== null ? authorizationHeader(this.token.token) : {}),
        },
        ...(method !== 'GET' && { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (error) {
      return { lost: true, notSent: neverLeft(error), why: describe(error) };
    }
    let parsed: unknown = null;
    try {
      const text = await response.text();
      parsed = text === '' ? null : JSON.parse(text);
    } catch (error) {
      // A body cut off, or not JSON: on a 200 the answer is lost (the bid may stand); else its status speaks.
      if (response.status === 200)
        return { lost: true, notSent: false, why: `the answer was unreadable (${describe(error)})` };
    }
    return {
      status: response.status,
      body: parsed,
      retryAfterMs: retryAfterMs(response.headers.get('retry-after'), this.now()),
    };
  }
}

function outcomeOf(answer: ReturnType<typeof orderAnswerOf>, reference: string): SubmitOutcome {
  if (answer.kind === 'unreadable') return { kind: 'unknown', why: 'the answer named no order and no refusal' };
  // An answer for another reference (or none) is not this bid's: what became of this one is not known.
  if (answer.reference !== reference) {
    return { kind: 'unknown', why: `the answer echoed ${answer.reference ?? 'no reference'}, not ${reference}` };
  }
  if (answer.kind === 'rejected') return { kind: 'rejected', reason: answer.reason };
  return { kind: 'accepted', exchangeOrderId: answer.exchangeOrderId };
}

/**
 * A 4xx answer (not 401, 408, 409, 425 or 429, handled before): a refusal, in the exchange's words. A 2xx
 * other than 200 is no answer this link knows: the bid may stand.
 */
function refusalOf(answer: { status: number; body: unknown }): SubmitOutcome {
  if (answer.status < 400) return { kind: 'unknown', why: `the exchange answered ${answer.status}` };
  // Statuses of the way there, not of the bid (a wrong EXCHANGE_NSE_URL, a proxy, a body too large): the
  // exchange did not judge the bid, so it is not refused for good; it waits, and the operator is told why.
  if (TRANSPORT_REFUSALS.has(answer.status))
    return {
      kind: 'not-sent',
      why: `the exchange's address answered ${answer.status}: check EXCHANGE_NSE_URL and what stands between`,
      retryAfterMs: LOGIN_REFUSED_RETRY_MS,
    };
  const said = messagesOf((answer.body as { messages?: unknown } | null)?.messages);
  return { kind: 'rejected', reason: said ?? `the exchange refused the bid (${answer.status})` };
}

/** Whether a failed request certainly never reached the exchange (see NOT_SENT_CODES). */
function neverLeft(error: unknown): boolean {
  const cause = (error as { cause?: unknown } | null)?.cause;
  if (cause instanceof AggregateError)
    return cause.errors.length > 0 && cause.errors.every((e) => NOT_SENT_CODES.has(codeOf(e) ?? ''));
  return NOT_SENT_CODES.has(codeOf(cause) ?? '');
}

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

/** Retry-After in seconds or as an HTTP date, in ms from now; null when absent or unreadable. */
function retryAfterMs(value: string | null, now: number): number | null {
  if (value === null || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds > 0 ? seconds * 1000 : null;
  const at = Date.parse(value);
  return Number.isNaN(at) || at <= now ? null : at - now;
}

function describe(error: unknown): string {
  if (error instanceof Error && error.name === 'TimeoutError') return 'no answer within the timeout';
  const code = codeOf((error as { cause?: unknown } | null)?.cause);
  if (code !== undefined) return code;
  return error instanceof Error ? error.message : String(error);
}

/** A book entry whose every field the link reads has its type (a malformed one is left out: not ours to guess). */
function isBookEntry(entry: unknown): entry is NseBookEntry {
  const e = entry as Partial<NseBookEntry> | null;
  return (
    typeof e?.orderId === 'string' &&
    typeof e.apiEchoBack === 'string' &&
    typeof e.orderStatus === 'string' &&
    Number.isSafeInteger(e.quantity) &&
    (e.quantity as number) > 0 &&
    (e.price === '' || (typeof e.price === 'number' && Number.isFinite(e.price) && e.price >= 0)) &&
    typeof e.isMarketOrder === 'boolean'
  );
}

/** One line of the stream, or null for one this link does not read (a message of another type, or not JSON). */
function streamMessageOf(line: string): NseStreamMessage | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return null;
  }
  const message = parsed as Partial<NseStreamMessage> | null;
  if (typeof message?.seq !== 'number' || !Number.isSafeInteger(message.seq)) return null;
  if (message.type === 'HEARTBEAT' || message.type === 'MARKET') return message as NseStreamMessage;
  if (message.type !== 'ORDER') return null;
  const order = message as Extract<NseStreamMessage, { type: 'ORDER' }>;
  const kinds = ['ALLOTTED', 'NOT_ALLOTTED', 'PART_ALLOTTED', 'NOTE'];
  if (!kinds.includes(order.event) || typeof order.apiEchoBack !== 'string') return null;
  if (!Number.isSafeInteger(order.allottedQuantity) || order.allottedQuantity < 0) return null;
  if (order.allottedPrice !== null && !(typeof order.allottedPrice === 'number' && order.allottedPrice > 0))
    return null;
  if (order.day !== null && order.day !== 'T' && order.day !== 'T+1') return null;
  if (typeof order.text !== 'string') return null;
  return order;
}
