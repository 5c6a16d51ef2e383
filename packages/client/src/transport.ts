/**
 * One HTTP call of the API, with its credentials, its Idempotency-Key and its retries. A call is retried
 * only when a retry cannot enter an order twice: reads and sessions always, order entry only under an
 * Idempotency-Key (the server answers a repeat with the first answer). It is retried after a network error
 * (no answer: the connection was refused, reset or timed out) and after a 503 (waiting its Retry-After),
 * within a number of attempts and a total wait; any other answer is final.
 */
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

export interface ApiCall {
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
}

export interface ApiAnswer<Body> {
  body: Body;
  headers: Headers;
}

/** The first back-off after a network error; it doubles at each retry, with jitter. */
const FIRST_BACKOFF_MS = 200;

export function headersFor(credentials: Credentials, auth: ApiCall['auth']): Record<string, string> {
  const headers: Record<string, string> = {};
  if (auth !== 'none' && credentials.accessToken !== undefined) headers.authorization = `Bearer ${credentials.accessToken}`;
  if (auth === 'token and key' && credentials.apiKey !== undefined) headers['x-api-key'] = credentials.apiKey;
  return headers;
}

export function urlOf(baseUrl: string, path: string, query?: Record<string, string | number | undefined>): string {
  const url = new URL(baseUrl.replace(/\/+$/, '') + path);
  for (const [name, value] of Object.entries(query ?? {})) if (value !== undefined) url.searchParams.set(name, String(value));
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
export function linkedSignal(caller: AbortSignal | undefined, timeoutMs?: number): { signal: AbortSignal; abort(reason: unknown): void; dispose(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(caller!.reason);
  if (caller?.aborted) controller.abort(caller.reason);
  else caller?.addEventListener('abort', onAbort, { once: true });
  const timer = timeoutMs === undefined ? undefined : setTimeout(() => controller.abort(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  return {
    signal: controller.signal,
    abort: (reason) => controller.abort(reason),
    dispose() {
      clearTimeout(timer);
      caller?.removeEventListener('abort', onAbort);
    },
  };
}

/** The error an answer other than 2xx stands for. */
export function errorOf(status: number, headers: Headers, text: string): OrdergateError | OrdergateTransportError {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (isErrorEnvelope(body)) return new OrdergateError(status, body, retryAfterSeconds(headers));
  return new OrdergateTransportError(`HTTP ${status} without the API's error envelope`, status, headers.get('request-id') ?? undefined);
}

export class Transport {
  constructor(
    readonly options: TransportOptions,
    readonly credentials: Credentials,
  ) {}

  async call<Body>(call: ApiCall): Promise<ApiAnswer<Body>> {
    const { retry, timeoutMs } = this.options;
    // An order-entry call without a key is sent once: a retry could enter the order twice.
    const attempts = call.orderEntry && call.idempotencyKey === undefined ? 1 : Math.max(1, retry.attempts);
    const headers: Record<string, string> = { accept: 'application/json', ...headersFor(this.credentials, call.auth), ...call.headers };
    if (call.idempotencyKey !== undefined) headers['idempotency-key'] = call.idempotencyKey;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    const payload = call.body === undefined ? undefined : JSON.stringify(call.body);
    const url = urlOf(this.options.baseUrl, call.path, call.query);
    let waited = 0;
    for (let attempt = 1; ; attempt++) {
      const { signal, dispose } = linkedSignal(call.signal, timeoutMs);
      let response: Response;
      let text: string;
      try {
        response = await this.options.fetch(url, { method: call.method, headers, body: payload, signal });
        text = await response.text();
      } catch (error) {
        if (call.signal?.aborted) throw call.signal.reason;
        const delay = backoffMs(attempt);
        if (attempt >= attempts || waited + delay > retry.maxDelayMs) {
          throw new OrdergateTransportError(`${call.method} ${call.path}: no answer after ${attempt} attempt(s): ${describe(error)}`, undefined, undefined, { cause: error });
        }
        waited += delay;
        await sleep(delay, call.signal);
        continue;
      } finally {
        dispose();
      }
      if (response.ok) return { body: parseBody<Body>(call, response, text), headers: response.headers };
      const error = errorOf(response.status, response.headers, text);
      if (response.status === 503 && attempt < attempts) {
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

function parseBody<Body>(call: ApiCall, response: Response, text: string): Body {
  try {
    return JSON.parse(text) as Body;
  } catch (error) {
    throw new OrdergateTransportError(`${call.method} ${call.path}: HTTP ${response.status} with a body that is not JSON`, response.status, response.headers.get('request-id') ?? undefined, { cause: error });
  }
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const cause = error.cause instanceof Error ? `: ${(error.cause as Error & { code?: string }).code ?? error.cause.message}` : '';
  return `${error.message}${cause}`;
}
