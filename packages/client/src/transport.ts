/**
 * One HTTP call of the API, with its credentials, its Idempotency-Key and its retries. A call is retried
 * only when a retry cannot enter an order twice: reads and sessions always, order entry only under an
 * Idempotency-Key (the server answers a repeat with the first answer). It is retried after a network error
 * (no answer: the connection was refused, reset or timed out) and after a 503 (waiting its Retry-After),
 * or, under its Idempotency-Key, a 409 e-116 (an earlier attempt still holds the key: waiting its Retry-After),
 * within a number of attempts and a total wait; any other answer is final. A call whose repeat is not
 * harmless (a login) is retried after a network error only when its request certainly never left (the
 * connection was refused); one whose repeat answers an "already done" error (a logout, a cart delete)
 * takes that error, after an attempt whose outcome is unknown, as its success.
 */
import type { ErrorCode } from './generated/error-catalog.js';
import { isErrorEnvelope, OrdergateError, OrdergateTransportError } from './errors.js';

export interface RetryOptions {
  /** Attempts in all, the first included (default 4; 1: never retry). */
  attempts?: number;
  /** The most a call waits between its attempts, in all, in milliseconds (default 10000). */
  maxDelayMs?: number;
}

export interface TransportOptions {
  baseUrl: string;
  fetch: typeof fetch;
  retry: Required<RetryOptions>;
  timeoutMs: number;
}

export interface Credentials {
  accessToken?: string;
  apiKey?: string;
}

export interface ApiCall<Body = unknown> {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  /** The path with its parameters filled in (and encoded). */
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** Whether the call sends the token (`Authorization: Bearer`) and the API key (`x-api-key`). */
  auth: 'none' | 'token' | 'token and key';
  /** An order-entry call: retried only under an Idempotency-Key. */
  idempotencyKey?: string;
  orderEntry?: boolean;
  headers?: Record<string, string>;
  signal?: AbortSignal | undefined;
  /**
   * Which network errors the call is retried after: `all` (the default), or only those `unsent`, where the
   * request certainly did not reach the server (see `certainlyUnsent`): for a call whose repeat is not
   * harmless even though it enters no order (a login spends its TOTP code, and a refused repeat counts as
   * a failed login). A 503 is retried either way.
   */
  retryNetworkErrors?: 'all' | 'unsent';
  /**
   * The answer of a call whose repeat may find it done already (a logout: 401 e-204; a cart delete: 404
   * e-405): when an attempt after one whose outcome is unknown (its answer lost, or timed out) answers one
   * of `codes`, the earlier attempt most likely did the call, and the call answers `answer(error)`.
   */
  alreadyDone?: { codes: readonly ErrorCode[]; answer(error: OrdergateError): Body };
}

export interface ApiAnswer<Body> {
  body: Body;
  headers: Headers;
}

/** The first back-off after a network error; it doubles at each retry, with jitter. */
const FIRST_BACKOFF_MS = 200;

export function headersFor(credentials: Credentials, auth: ApiCall['auth']): Record<string, string> {
  const headers: Record<string, string> = {};
  if (auth !== 'none' && credentials.accessToken !== undefined)
    headers.authorization = `Bearer ${credentials.accessToken}`;
  if (auth === 'token and key' && credentials.apiKey !== undefined) headers['x-api-key'] = credentials.apiKey;
  return headers;
}

export function urlOf(baseUrl: string, path: string, query?: Record<string, string | number | undefined>): string {
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query ?? {}))
    if (value !== undefined) url.searchParams.set(name, String(value));
  return url.toString();
}

/** Retry-After in seconds (a number of seconds or an HTTP date), when the answer has a usable one. */
export function retryAfterSeconds(headers: Headers, now = Date.now()): number | undefined {
  const value = headers.get('retry-after');
  if (value === null) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - now) / 1000));
}

export function backoffMs(retry: number, firstMs = FIRST_BACKOFF_MS, maxMs = Number.POSITIVE_INFINITY): number {
  const full = Math.min(maxMs, firstMs * 2 ** (retry - 1));
  return Math.round(full / 2 + (Math.random() * full) / 2);
}

/** Waits, or stops waiting with the signal's reason when it is aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    function onAbort() {
      clearTimeout(timer);
      reject(signal!.reason);
    }
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** A signal aborted by the caller's, after `timeoutMs`, or by `abort`; `dispose` stops its timer and listener. */
export function linkedSignal(
  caller: AbortSignal | undefined,
  timeoutMs?: number,
): { signal: AbortSignal; abort(reason: unknown): void; dispose(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(caller!.reason);
  if (caller?.aborted) controller.abort(caller.reason);
  else caller?.addEventListener('abort', onAbort, { once: true });
  const timer =
    timeoutMs === undefined
      ? undefined
      : setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}

/** The error an answer other than 2xx stands for (with the Idempotency-Key of the call, when it had one). */
export function errorOf(
  status: number,
  headers: Headers,
  text: string,
  idempotencyKey?: string,
): OrdergateError | OrdergateTransportError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  const options = idempotencyKey === undefined ? {} : { idempotencyKey };
  if (isErrorEnvelope(body)) return new OrdergateError(status, body, retryAfterSeconds(headers), options);
  return new OrdergateTransportError(
    `HTTP ${status} without the API's error envelope`,
    status,
    headers.get('request-id') ?? undefined,
    options,
  );
}

/**
 * The error codes of a connection that was never made, so that no byte of the request was sent: refused
 * (nothing listens), the host name not found (for now), the connection not established in time (undici's
 * connect timeout). Any other failure (a reset, a closed socket, a timeout of the answer) may come after
 * the server read the request.
 */
const UNSENT_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/**
 * True when a failed fetch certainly did not reach the server: the error, or its `cause` (fetch's
 * `TypeError: fetch failed` has the socket's error there, with its `code`), is one of a connection never
 * made; an AggregateError (every address of the host tried) when each of its errors is.
 */
export function certainlyUnsent(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 4) return false;
  if (error instanceof AggregateError && error.errors.length > 0)
    return error.errors.every((each) => certainlyUnsent(each, depth + 1));
  const code = (error as Error & { code?: unknown }).code;
  if (typeof code === 'string') return UNSENT_CODES.has(code);
  return certainlyUnsent(error.cause, depth + 1);
}

export class Transport {
  constructor(
    readonly options: TransportOptions,
    readonly credentials: Credentials,
  ) {}

  async call<Body>(call: ApiCall<Body>): Promise<ApiAnswer<Body>> {
    const { retry, timeoutMs } = this.options;
    // An order-entry call without a key is sent once: a retry could enter the order twice.
    const attempts = call.orderEntry && call.idempotencyKey === undefined ? 1 : Math.max(1, retry.attempts);
    const headers: Record<string, string> = {
      accept: 'application/json',
      ...headersFor(this.credentials, call.auth),
      ...call.headers,
    };
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
    const url = urlOf(this.options.baseUrl, call.path, call.query);
    const keyed = call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey };
    let waited = 0;
    // Whether an earlier attempt may have reached the server and done the call, its answer lost.
    let outcomeUnknown = false;
    for (let attempt = 1; ; attempt++) {
      const { signal, dispose } = linkedSignal(call.signal, timeoutMs);
      let response: Response;
      let text: string;
      try {
        response = await this.options.fetch(url, { method: call.method, headers, body: payload, signal });
        text = await response.text();
      } catch (error) {
        if (call.signal?.aborted) throw call.signal.reason;
        const unsent = certainlyUnsent(error);
        if (!unsent) outcomeUnknown = true;
        if (!unsent && call.retryNetworkErrors === 'unsent') {
          const why = `not retried, as the request may have reached the server`;
          throw new OrdergateTransportError(
            `${call.method} ${call.path}: no answer after ${attempt} attempt(s), ${why}: ${describe(error)}`,
            undefined,
            undefined,
            { cause: error, ...keyed },
          );
        }
        const delay = backoffMs(attempt);
        if (attempt >= attempts || waited + delay > retry.maxDelayMs) {
          throw new OrdergateTransportError(
            `${call.method} ${call.path}: no answer after ${attempt} attempt(s): ${describe(error)}`,
            undefined,
            undefined,
            {
              cause: error,
              ...keyed,
            },
          );
        }
        waited += delay;
        await sleep(delay, call.signal);
        continue;
      } finally {
        dispose();
      }
      if (response.ok) return { body: parseBody<Body>(call, response, text), headers: response.headers };
      const error = errorOf(response.status, response.headers, text, call.idempotencyKey);
      if (
        outcomeUnknown &&
        call.alreadyDone &&
        error instanceof OrdergateError &&
        call.alreadyDone.codes.includes(error.code)
      ) {
        return { body: call.alreadyDone.answer(error), headers: response.headers };
      }
      // A 503, or (under the same key) 409 e-116: the earlier attempt of this call still holds its key.
      const retryable =
        response.status === 503 ||
        (call.idempotencyKey !== undefined && error instanceof OrdergateError && error.code === 'e-116');
      if (retryable && attempt < attempts) {
        const delay = (retryAfterSeconds(response.headers) ?? 1) * 1000;
        if (waited + delay <= retry.maxDelayMs) {
          waited += delay;
          await sleep(delay, call.signal);
          continue;
        }
      }
      throw error;
    }
  }
}

function parseBody<Body>(call: ApiCall<Body>, response: Response, text: string): Body {
  try {
    return JSON.parse(text) as Body;
  } catch (error) {
    const keyed = call.idempotencyKey === undefined ? {} : { idempotencyKey: call.idempotencyKey };
    throw new OrdergateTransportError(
      `${call.method} ${call.path}: HTTP ${response.status} with a body that is not JSON`,
      response.status,
      response.headers.get('request-id') ?? undefined,
      { cause: error, ...keyed },
    );
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause =
    error.cause instanceof Error ? `: ${(error.cause as Error & { code?: string }).code ?? error.cause.message}` : '';
  return `${error.message}${cause}`;
}
