/**
 * Calls to ordergate from the console, through the client package's OrdergateClient (one client per
 * session, for this page's origin): the session (token and API key) lives in this module's memory only, so
 * a reload or a new tab logs in again and no script reading storage finds it. Every failure is thrown as an
 * ApiError: the API's error envelope, or no answer (status 0), in a trader's words (`describe`).
 */
import {
  OrdergateClient,
  OrdergateError,
  OrdergateTransportError,
  type LoginAnswer,
} from '../../packages/client/src/index.js';
import type { FieldError, Profile, Trade } from './types.js';

export interface Session {
  userId: string;
  token: string;
  /** Sent as x-api-key on order entry (place, modify, cancel, cart execution). */
  apiKey: string;
  expiresAt: string;
  category: Profile['category'] | null;
  /** The category the operator set for offers (RETAIL, NII, MF, IC, OTHS): which bids of an offer are the user's. */
  offerCategory: Profile['offer_category'] | null;
  operator: boolean;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly errors: FieldError[] = [],
    readonly requestId?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /**
   * What went wrong in a trader's words, for a status line: each fault once (the envelope's message is
   * its first field's fault again), without the error code, JSON paths ("orders[2].Price" is "Line 3's
   * price") or the API's words to its clients. The code and the request go in `support()`.
   */
  describe(): string {
    const said = new Set<string>();
    for (const text of [this.message, ...this.errors.map((e) => e.message)]) {
      const sentence = inWords(text);
      if (sentence !== '' && ![...said].some((s) => sameFault(s, sentence))) said.add(sentence);
    }
    return [...said].join(' ');
  }

  /** The faults of the answer, each by the field it names: its form control's key, its cart line, its words. */
  faults(): Fault[] {
    return faultsOf(this.errors, this.message);
  }

  /** For support: the code and the request id ("e-380 · request 01a2…"), which a trader quotes, never reads. */
  support(): string {
    return [this.code, this.requestId === undefined ? null : `request ${this.requestId}`]
      .filter((part) => part !== null)
      .join(' \u00b7 ');
  }
}

/** One fault of an answer, placed: `key` names the control (price, quantity, order_type...), `line` the cart line (from 0). */
export interface Fault {
  key: string | null;
  line: number | null;
  /** The fault in words, for beside its control: the field's name left out when it begins the message. */
  text: string;
  /** The fault in words on its own (a status line, a line's results): "Line 3: price 101.52 is ...". */
  sentence: string;
}

/** "orders[2].scripDetail._Series" -> its form control's key, "series"; "ordercartName" as it is. */
function controlKey(path: string): string | null {
  const last =
    path
      .replace(/^orders\[\d+\]\.?/, '')
      .split('.')
      .pop() ?? '';
  if (last === '') return null;
  const key = last
    .replace(/^_/, '')
    .replace(/([a-z])([A-Z])/g, '$1_$2')
    .toLowerCase();
  return key === 'product_type' ? 'product' : key === 'exchange_name' ? 'exchange' : key;
}

/** A field's name in words: "OrderType" -> "order type". */
const fieldWords = (path: string) => (controlKey(path) ?? path).replace(/_/g, ' ');

/** The API's words for its clients, left out of the console's: what a client reads in the envelope. */
const ENVELOPE_WORDS = [
  /;?\s*see each line in data/g,
  /;?\s*errors names the faults of each line(?: as orders\[i\]\.Field)?/g,
  /\s*\(body \{[^}]*\}\)/g,
  /\s*\(e-\d+(?::[^)]*)?\)/g,
  /\s*\(\d{4}-\d\d-\d\dT[\d:.]+Z\)/g,
];

/** A message without paths, codes or envelope words, as a sentence: "orders[2]: price 99 ..." -> "Line 3: price 99 ...". */
export function inWords(message: string): string {
  let text = message.trim();
  for (const words of ENVELOPE_WORDS) text = text.replace(words, '');
  text = text
    .replace(
      /\borders\[(\d+)\]\.([\w.]+)/g,
      (_, i: string, field: string) => `Line ${Number(i) + 1}'s ${fieldWords(field)}`,
    )
    .replace(/\borders\[(\d+)\]/g, (_, i: string) => `Line ${Number(i) + 1}`)
    .trim();
  if (text === '') return '';
  const sentence = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?]$/.test(sentence) ? sentence : `${sentence}.`;
}

/** The same fault said twice: one sentence holds the other (a line's fault within the envelope's "Line 3: ..."). */
const sameFault = (a: string, b: string) => {
  const bare = (s: string) => s.replace(/[.!?]$/, '').toLowerCase();
  return bare(a).includes(bare(b)) || bare(b).includes(bare(a));
};

/** The faults an answer names (`errors`; its `message` alone when it names none), each placed. */
export function faultsOf(errors: readonly FieldError[], message: string): Fault[] {
  const faults = errors.length > 0 ? errors : [{ field: '', message }];
  return faults.map((fault) => faultOf(fault.field, fault.message));
}

function faultOf(path: string, message: string): Fault {
  const line = /^orders\[(\d+)\]/.exec(path);
  // Beside its control the fault needs neither its line nor its path: "orders[2]: price 1 ..." -> "Price 1 ...".
  let text = message.trim();
  if (path !== '' && text.startsWith(`${path}:`)) text = text.slice(path.length + 1);
  text = text
    .replace(/^orders\[\d+\](?:\.[\w.]+)?:\s*/, '')
    .replace(/^orders\[\d+\]\.([\w.]+)/, (_, field: string) => fieldWords(field));
  return {
    key: controlKey(path),
    line: line === null ? null : Number(line[1]),
    text: inWords(text),
    sentence: inWords(message),
  };
}

/** The token was refused: the session is over (logout elsewhere, expiry, the operator ended it). */
const SESSION_ENDED = new Set(['e-201', 'e-202', 'e-203', 'e-204']);

let session: Session | null = null;
let sessionEnded: (error: ApiError) => void = () => {};

export const currentSession = (): Session | null => session;

export function requireSession(): Session {
  if (session === null) throw new ApiError(401, 'e-201', 'Not logged in');
  return session;
}

/** Called once when a call finds the token refused. */
export function onSessionEnded(listener: (error: ApiError) => void): void {
  sessionEnded = listener;
}

export function isSessionEnd(error: unknown): error is ApiError {
  return error instanceof ApiError && SESSION_ENDED.has(error.code);
}

/** The keys of order-entry calls whose outcome is unknown, by call and arguments. */
const unsettledKeys = new Map<string, string>();

/** A version 4 UUID; crypto.randomUUID exists only on https and localhost, getRandomValues everywhere. */
function newKey(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = (bytes[6]! & 0x0f) | 0x40;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** No answer, a 5xx, or the first call still at work: the call may or may not have taken effect. */
const outcomeUnknown = (error: ApiError) => error.status === 0 || error.status >= 500 || error.code === 'e-116';

/**
 * The client package's client for this page's server: answers never from the browser's cache; no retries
 * (a call that failed is the person's to send again, and an order entry sent again reuses its key, below);
 * an Idempotency-Key only where `entry` gives one.
 */
function newClient(): OrdergateClient {
  return new OrdergateClient({
    baseUrl: location.origin,
    fetch: (input, init) => fetch(input, { ...init, cache: 'no-store' }),
    retry: { attempts: 1 },
    idempotencyKeys: false,
  });
}

/** The session's client, holding its token and API key: in this module's memory only, as the session. */
let client: OrdergateClient | null = null;

/** The client package's error as the console's: the envelope's, or no answer (status 0, `network`). */
function apiErrorOf(error: unknown, keyed: boolean): unknown {
  if (error instanceof ApiError) return error;
  if (error instanceof OrdergateError)
    return new ApiError(error.status, error.code, error.message, error.errors, error.requestId, { cause: error });
  if (error instanceof OrdergateTransportError) {
    if (error.status !== undefined)
      // Something answered, but not the API (a proxy's error page): its status is all there is to say.
      return new ApiError(
        error.status,
        `http-${error.status}`,
        `ordergate answered HTTP ${error.status} without saying why`,
        [],
        error.requestId,
        { cause: error },
      );
    return new ApiError(
      0,
      'network',
      keyed
        ? 'The answer was lost on the way (no connection?): this may have been done. Sending the same again is safe: it carries the same Idempotency-Key, so it is not done twice'
        : 'ordergate cannot be reached; check the connection and try again',
      [],
      undefined,
      { cause: error },
    );
  }
  return error;
}

/**
 * Calls the API as the session's user: `run` gets the session's client. Every failure is thrown as an
 * ApiError; a refused token (the session is over) also tells the session-ended listener.
 */
export async function api<T>(run: (client: OrdergateClient) => Promise<T>, keyed = false): Promise<T> {
  requireSession();
  try {
    return await run(client!);
  } catch (failure) {
    const error = apiErrorOf(failure, keyed);
    if (error instanceof ApiError && SESSION_ENDED.has(error.code)) sessionEnded(error);
    throw error;
  }
}

/** A read of the API as the session's user: the answer's data (see `api`). */
export async function readData<T>(run: (client: OrdergateClient) => Promise<{ data: T }>): Promise<T> {
  return (await api(run)).data;
}

/**
 * An order-entry call (a bid placed, modified, cancelled or carried forward; a cart created or executed),
 * under an Idempotency-Key. A call whose answer was lost (no answer, a 5xx, 409 e-116 while the first is
 * still at work) keeps its key: the same call sent again with the same arguments (`call`: its name and
 * arguments), as a person does by pressing the button again, carries the same key, so the server answers it
 * with the first call's outcome instead of entering it twice.
 */
export async function entry<T>(
  call: readonly unknown[],
  run: (client: OrdergateClient, options: { idempotencyKey: string }) => Promise<T>,
): Promise<T> {
  const signature = JSON.stringify(call);
  const idempotencyKey = unsettledKeys.get(signature) ?? newKey();
  try {
    const answer = await api((client) => run(client, { idempotencyKey }), true);
    unsettledKeys.delete(signature);
    return answer;
  } catch (error) {
    if (error instanceof ApiError && outcomeUnknown(error)) unsettledKeys.set(signature, idempotencyKey);
    else unsettledKeys.delete(signature);
    throw error;
  }
}

/** The most trades the trade book's view reads: the API's largest page. */
export const MOST_TRADES = 1000;

/** The caller's trades (allotments), newest first: the first MOST_TRADES of them, and how many there are in all. */
export async function readTrades(): Promise<{ trades: Trade[]; total: number }> {
  const book = await api((client) => client.tradeBook({ offset: 1, limit: MOST_TRADES }));
  return { trades: book.data, total: book.metadata?.total_records ?? book.data.length };
}

export interface Credentials {
  userId: string;
  password: string;
  totp: string;
  apiKey: string;
}

/** Logs in (the ODIN login body, the API key included), then reads whether the user is an operator. */
export async function logIn(credentials: Credentials): Promise<Session> {
  const fresh = newClient();
  let answer: LoginAnswer;
  try {
    answer = await fresh.login({
      userId: credentials.userId,
      password: credentials.password,
      apiKey: credentials.apiKey,
      ...(credentials.totp === '' ? {} : { totp: credentials.totp }),
    });
  } catch (error) {
    throw apiErrorOf(error, false);
  }
  client = fresh;
  session = {
    userId: answer.data.user_id,
    token: answer.data.access_token,
    apiKey: credentials.apiKey,
    expiresAt: answer.data.expires_at,
    category: null,
    offerCategory: null,
    operator: false,
  };
  try {
    await readProfile();
  } catch (error) {
    // A server without the profile call still serves everything but the operator's views.
    if (!(error instanceof ApiError && error.status === 404)) {
      forgetSession();
      throw error;
    }
  }
  return session;
}

/**
 * Reads the caller's profile into the session again: an operator may change a user's category at any time,
 * with effect at once, and the offers view offers the bids of the category the server will see.
 */
export async function readProfile(): Promise<void> {
  const profile = await readData((client) => client.profile());
  const current = requireSession();
  current.category = profile.category;
  current.offerCategory = profile.offer_category;
  current.operator = profile.operator === true;
}

/** Revokes the token on the server, then forgets the session here whatever the answer. */
export async function logOut(): Promise<void> {
  try {
    if (session !== null) await api((client) => client.logout());
  } catch {
    // An ended or unreachable session needs no revoking: the local session is forgotten below anyway.
  } finally {
    forgetSession();
  }
}

export function forgetSession(): void {
  session = null;
  client = null;
}
