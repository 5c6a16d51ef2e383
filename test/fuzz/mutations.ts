/**
 * Mutations of a valid request, as data (fast-check prints and shrinks them): wrong JSON types, missing and
 * unknown fields, huge and unicode strings, numbers at the edges, duplicate and prototype keys, deep
 * nesting, bodies that are not JSON objects, wrong and missing content types, odd Authorization, x-api-key,
 * Idempotency-Key, If-Match and other headers, odd queries and paths, and wrong methods. A mutation picks
 * the place it changes with a number taken modulo the places there are, so that it applies to any body.
 */
import fc from 'fast-check';
import type { Operation } from './operations.js';
import type { Draft } from './requests.js';
import type { Resolved } from './world.js';

/** Mutations of a JSON value (the body, or JSON text held in a string field such as a cart's orders). */
export type BodyMutation =
  | { kind: 'dropField'; at: number }
  | { kind: 'addField'; at: number; name: string; value: unknown }
  | { kind: 'setValue'; at: number; value: unknown }
  | { kind: 'hugeString'; at: number; length: number; unit: string }
  | { kind: 'rawValue'; at: number; text: string }
  | { kind: 'deepNesting'; at: number; depth: number; shape: 'array' | 'object' | 'unclosed' }
  | { kind: 'rawMember'; at: number; text: string }
  | { kind: 'duplicateKey'; at: number; value: unknown }
  | { kind: 'wholeBody'; text: string }
  | { kind: 'hugeBody'; length: number }
  | { kind: 'truncateBody'; at: number };

export type Mutation =
  | BodyMutation
  | { kind: 'nestedJson'; at: number; inner: BodyMutation }
  | { kind: 'dropBody' }
  | { kind: 'contentType'; value: string | null }
  | { kind: 'chunked' }
  | { kind: 'authorization'; value: string | string[] | null }
  | { kind: 'apiKey'; value: string | string[] | null }
  | { kind: 'header'; name: string; value: string | string[] | null }
  | { kind: 'hugeHeader'; name: string; length: number }
  | { kind: 'queryParam'; name: string; value: string | null }
  | { kind: 'queryValue'; at: number; value: string }
  | { kind: 'rawQuery'; text: string }
  | { kind: 'pathParam'; at: number; segment: string }
  | { kind: 'longPathParam'; at: number; length: number }
  | { kind: 'encodePathParam'; at: number }
  | { kind: 'pathEdit'; edit: PathEdit }
  | { kind: 'method'; method: string };

type PathEdit =
  | 'trailingSlash'
  | 'doubleSlash'
  | 'leadingDoubleSlash'
  | 'dotSegment'
  | 'dotDotSegment'
  | 'upperCase'
  | 'encodeLiteral'
  | 'semicolon'
  | 'dropLast'
  | 'extraSegment'
  | 'fragment'
  | 'backslash'
  | 'emptyQuery';

/** Strings that trip parsers, validators, databases and logs. */
export const ODD_STRINGS = [
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '\u0001\u001f\u007f',
  '\u0085',
  '\u2028\u2029',
  '\u202eRTL override',
  '\u200f\u05d0\u05d1\u05d2',
  'مرحبا',
  '😀',
  '𝟘𝟙𝟚',
  '\ud83d',
  '\ude00x',
  '\udbff\ud800',
  '\ufeff',
  '\uffff',
  'e\u0301',
  'İı',
  'ẞß',
  'Ａ',
  '\t\n\r',
  "'; DROP TABLE orders; --",
  '%s%n%x',
  '${7*7}{{7*7}}',
  '<script>',
  '../../etc/passwd',
  'null',
  'undefined',
  'NaN',
  '-0',
  '0x10',
  '9007199254740993',
  '123456789012345678901234567890',
  '1e308',
];

/** JSON text at the edges of numbers and strings (valid or not), put in place of a value. */
const RAW_VALUES = [
  '-0',
  '-0.0',
  '0e0',
  '1e308',
  '1.7976931348623157e308',
  '1e309',
  '-1e309',
  '5e-324',
  '1e-400',
  '9007199254740993',
  '123456789012345678901234567890',
  '-9223372036854775809',
  '1.0',
  '1E2',
  '0.1e1',
  '100.000000000000000000001',
  '101.50000000000000001',
  '0.30000000000000004',
  '-1',
  '"9007199254740993"',
  '"123456789012345678901234567890"',
  '"-0"',
  '"1e3"',
  '" 10"',
  '"10 "',
  '"0010"',
  '"\\u0000"',
  '"\\ud800"',
  '"\\udc00\\ud800"',
  '"\\ud83d\\ude00"',
  '"\\u202e"',
  '"a\\u0000b"',
  '"\\/"',
  'NaN',
  'Infinity',
  '-Infinity',
  '0x10',
  '01',
  '+1',
  '.5',
  '1.',
  'undefined',
  "'x'",
  '"a\u0000b"',
  '"line\nbreak"',
  '"tab\there"',
  '"\\x41"',
  '"\\u00"',
  'tru',
  'nul',
  '[1,]',
  '{"a":1,}',
];

/** Members added to an object as raw text: prototype keys and their look-alikes. */
const RAW_MEMBERS = [
  '"__proto__":{"polluted":true}',
  '"__proto__":null',
  '"__proto__":[]',
  '"__proto__":1',
  '"constructor":{"prototype":{"polluted":true}}',
  '"constructor":{"prototype":null}',
  '"constructor":{}',
  '"constructor":1',
  '"\\u005f\\u005fproto\\u005f\\u005f":{"polluted":true}',
  '"__pro\\u0074o__":{}',
  '"prototype":{}',
  '"__proto__ ":1',
  '"":1',
  '"\\u0000":1',
  '"hasOwnProperty":1',
  '"toString":"x"',
  '"valueOf":{}',
];

/** Whole bodies that are not a JSON object, or not JSON. */
const WHOLE_BODIES = [
  '',
  ' ',
  '\n',
  'null',
  'true',
  '0',
  '-0',
  '"x"',
  '[]',
  '[{}]',
  '{}',
  '{',
  '}',
  '{"a":1',
  '{"a":1}}',
  '{"a":1} x',
  '{"a":1}{"b":2}',
  '\ufeff{}',
  '\u0000',
  'NaN',
  "{'a':1}",
  '{a:1}',
  '{"a":1,}',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
  '[{"__proto__":{}}]',
  'a=1&b=2',
  '<xml/>',
];

const CONTENT_TYPES = [
  null,
  '',
  'text/plain',
  'text/json',
  'application/JSON',
  'Application/Json',
  'application/json;',
  'application/json; charset=utf-8',
  'application/json; charset=UTF-8; foo=bar',
  'application/json; charset=latin1',
  'application/json; charset=utf-16',
  'application/json ; charset=utf-8',
  ' application/json',
  'application/jsonx',
  'application/json, text/plain',
  'application/merge-patch+json',
  'application/vnd.api+json',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
  'application/octet-stream',
  '*/*',
  'json',
  '\u00e9/\u00e9',
];

const AUTHORIZATION_FORMS = [
  '',
  'Bearer',
  'Bearer ',
  'bearer {token}',
  'BEARER {token}',
  'Bearer  {token}',
  'Bearer {token} ',
  ' Bearer {token}',
  'Bearer {token} extra',
  'Bearer\t{token}',
  '{token}',
  'Basic YWxpY2U6Y29ycmVjdC1ob3JzZS00Mg==',
  'Token {token}',
  'Bearer {other}',
  'Bearer {revoked}',
  'Bearer ogt_',
  'Bearer ogt_0000000000000000000000000000000000000000000',
  'Bearer {token}x',
  'Bearer \u00e9\u00ff',
  'Bearer {token},Bearer {other}',
  'Bearer "{token}"',
  'Bearer {apiKey}',
];

const API_KEY_FORMS = [
  '',
  ' ',
  '{apiKey}x',
  '{otherKey}',
  'ogk_',
  ' {apiKey}',
  '{apiKey} ',
  '\u00e9',
  '{token}',
  '{apiKey},{apiKey}',
];

const HEADER_VALUES: Record<string, (string | string[] | null)[]> = {
  'idempotency-key': [
    null,
    '',
    ' ',
    'k',
    'a'.repeat(255),
    'a'.repeat(256),
    '\u00e9t\u00e9',
    'tab\there',
    'del\u007f',
    ['k1', 'k2'],
    'fuzz-fixed-key',
    'fuzz-fixed-key-2',
  ],
  'if-match': ['*', '', 'W/"1"', '"1"', '"999999"', '"1", "2"', '"1",*', 'garbage', '"', ['"1"', '"2"'], '1'],
  'last-event-id': ['', '-1', '0', '1e3', '999999999999999', '9999999999999999', 'abc', ' 1', '\u00e9'],
  'content-encoding': ['gzip', 'br', 'deflate', 'identity', 'x'],
  accept: ['text/html', '*/*', 'application/xml', '', 'text/event-stream'],
  'accept-encoding': ['gzip', 'br', '*', 'identity;q=0'],
  'request-id': ['client-id', ''],
  'x-request-id': ['client-id', '\u00e9'],
  host: ['', 'evil.example', '[::1]', 'a b', 'localhost:99999', '\u00e9', '127.0.0.1:1'],
  expect: ['100-continue', 'nonsense'],
  'x-forwarded-for': ['1.2.3.4, evil', 'not an ip'],
  'x-forwarded-proto': ['gopher', 'https'],
  'x-forwarded-host': ['evil.example'],
  origin: ['https://evil.example', 'null'],
  cookie: ['a=b', '__proto__=1'],
  'user-agent': ['', '\u00e9'],
  range: ['bytes=0-1'],
  'if-none-match': ['*', '"1"'],
  'x-http-method-override': ['DELETE', 'GET'],
  'transfer-encoding': ['gzip', 'identity'],
  connection: ['close', 'upgrade'],
  upgrade: ['websocket', 'h2c'],
};

const PATH_SEGMENTS = [
  '',
  '.',
  '..',
  '%2E',
  '%2E%2E',
  'a%2Fb',
  'a/b',
  '%2F',
  '%5C',
  '%',
  '%zz',
  '%C3',
  '%E0%A4',
  '%00',
  '%0A',
  '%ED%A0%80',
  '%F0%9F%98%80',
  '%E2%80%AE',
  '%C0%AF',
  '+',
  '%20',
  '%2B',
  '\u00e9',
  'nse_eq',
  'NSE_EQ',
  'BSE_EQ',
  '*',
  '%2A',
  'null',
  'undefined',
  '0',
  '-1',
  '__proto__',
  'constructor',
  ':ordercartId',
  '{order_id}',
  '%7Border_id%7D',
  '?',
  '%3F',
  '%23',
];

const METHODS = ['GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'HEAD', 'OPTIONS', 'TRACE', 'PROPFIND', 'SEARCH', 'FOO'];

const STRING_UNITS = ['a', '\u00e9', '😀', '\u0000', '\\', '"', '\u202e'];
const HUGE_LENGTHS = [1_000, 16_000, 65_000, 65_500, 65_536, 66_000, 200_000];

const nat = fc.nat({ max: 10_000 });

const wrongTypeValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constant(null),
  fc.boolean(),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ maxLength: 10 }),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 5 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 }),
);

const oddString: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(...ODD_STRINGS),
  fc.string({ maxLength: 20, unit: 'grapheme' }),
  fc.string({ maxLength: 20, unit: 'binary' }),
);

const bodyMutation: fc.Arbitrary<BodyMutation> = fc.oneof(
  fc.record({ kind: fc.constant('dropField' as const), at: nat }),
  fc.record({
    kind: fc.constant('addField' as const),
    at: nat,
    name: fc.oneof(
      fc.constantFrom('extra', 'Quantity', 'quantity ', 'QUANTITY', 'status'),
      fc.string({ maxLength: 8 }),
    ),
    value: wrongTypeValue,
  }),
  fc.record({ kind: fc.constant('setValue' as const), at: nat, value: fc.oneof(wrongTypeValue, oddString) }),
  fc.record({
    kind: fc.constant('hugeString' as const),
    at: nat,
    length: fc.constantFrom(...HUGE_LENGTHS),
    unit: fc.constantFrom(...STRING_UNITS),
  }),
  fc.record({ kind: fc.constant('rawValue' as const), at: nat, text: fc.constantFrom(...RAW_VALUES) }),
  fc.record({
    kind: fc.constant('deepNesting' as const),
    at: nat,
    depth: fc.constantFrom(30, 31, 32, 33, 64, 1_000, 100_000),
    shape: fc.constantFrom('array' as const, 'object' as const, 'unclosed' as const),
  }),
  fc.record({ kind: fc.constant('rawMember' as const), at: nat, text: fc.constantFrom(...RAW_MEMBERS) }),
  fc.record({
    kind: fc.constant('duplicateKey' as const),
    at: nat,
    value: fc.oneof(wrongTypeValue, fc.constant('__same__')),
  }),
  fc.record({
    kind: fc.constant('wholeBody' as const),
    text: fc.oneof(fc.constantFrom(...WHOLE_BODIES), fc.string({ maxLength: 30 })),
  }),
  fc.record({ kind: fc.constant('hugeBody' as const), length: fc.constantFrom(...HUGE_LENGTHS) }),
  fc.record({ kind: fc.constant('truncateBody' as const), at: nat }),
);

export function mutationArbitrary(operation: Operation): fc.Arbitrary<Mutation> {
  const queryNames = operation.parameters.filter((p) => p.in === 'query').map((p) => p.name);
  return fc.oneof(
    // The body, and JSON text in a string field of it
    { arbitrary: bodyMutation, weight: 11 },
    fc.record({ kind: fc.constant('nestedJson' as const), at: nat, inner: bodyMutation }),
    fc.constant({ kind: 'dropBody' as const }),
    // Transport and headers
    fc.record({ kind: fc.constant('contentType' as const), value: fc.constantFrom(...CONTENT_TYPES) }),
    fc.constant({ kind: 'chunked' as const }),
    fc.record({
      kind: fc.constant('authorization' as const),
      value: fc.oneof(
        fc.constant(null),
        fc.constantFrom(...AUTHORIZATION_FORMS),
        fc.constant<string[]>(['Bearer {token}', 'Bearer {other}']),
      ),
    }),
    fc.record({
      kind: fc.constant('apiKey' as const),
      value: fc.oneof(
        fc.constant(null),
        fc.constantFrom(...API_KEY_FORMS),
        fc.constant<string[]>(['{apiKey}', '{otherKey}']),
      ),
    }),
    fc.constantFrom(...Object.keys(HEADER_VALUES)).chain((name) =>
      fc.record({
        kind: fc.constant('header' as const),
        name: fc.constant(name),
        value: fc.oneof(fc.constantFrom(...HEADER_VALUES[name]!), oddString.map(latin1Only)),
      }),
    ),
    fc.record({
      kind: fc.constant('hugeHeader' as const),
      name: fc.constantFrom('authorization', 'x-api-key', 'idempotency-key', 'if-match', 'x-fuzz'),
      length: fc.constantFrom(300, 8_000, 20_000, 70_000),
    }),
    // The query
    fc.record({
      kind: fc.constant('queryParam' as const),
      name: fc.oneof(
        fc.constantFrom(
          ...queryNames,
          'foo',
          '__proto__',
          'constructor',
          'limit[]',
          'a.b',
          '',
          '%00',
          'offset',
          'limit',
        ),
        fc.string({ maxLength: 6 }).map(encodeLoosely),
      ),
      value: fc.oneof(
        fc.constant(null),
        oddString.map(encodeLoosely),
        fc.constantFrom('1', '0', '-1', '1001', '1e3', '999999999999', '%', '%zz', 'x'.repeat(10_000)),
      ),
    }),
    fc.record({ kind: fc.constant('queryValue' as const), at: nat, value: oddString.map(encodeLoosely) }),
    fc.record({
      kind: fc.constant('rawQuery' as const),
      text: fc.constantFrom(
        '%',
        '%zz',
        '%E0%A4',
        '%00',
        '&&',
        '=',
        '==x',
        'a=%F0%9F%98%80',
        '+',
        '?',
        'a=1&a=2',
        '__proto__[x]=1',
        'a[b]=1',
      ),
    }),
    // The path and the method
    fc.record({ kind: fc.constant('pathParam' as const), at: nat, segment: fc.constantFrom(...PATH_SEGMENTS) }),
    fc.record({
      kind: fc.constant('longPathParam' as const),
      at: nat,
      length: fc.constantFrom(101, 200, 201, 1_000, 10_000),
    }),
    fc.record({ kind: fc.constant('encodePathParam' as const), at: nat }),
    fc.record({
      kind: fc.constant('pathEdit' as const),
      edit: fc.constantFrom<PathEdit>(
        'trailingSlash',
        'doubleSlash',
        'leadingDoubleSlash',
        'dotSegment',
        'dotDotSegment',
        'upperCase',
        'encodeLiteral',
        'semicolon',
        'dropLast',
        'extraSegment',
        'fragment',
        'backslash',
        'emptyQuery',
      ),
    }),
    fc.record({
      kind: fc.constant('method' as const),
      method: fc.constantFrom(...METHODS.filter((m) => m !== operation.method)),
    }),
  );
}

function latin1Only(text: string): string {
  return text.replace(/[^\t\x20-\x7e\x80-\xff]/g, '');
}

/** Percent-encodes what a URL cannot carry raw, but leaves "%" alone (so that bad escapes go out as they are). */
function encodeLoosely(text: string): string {
  return [...text].map((c) => (/^[A-Za-z0-9\-._~!$'()*,;:@/?%]$/.test(c) ? c : safeEncode(c))).join('');
}

function safeEncode(char: string): string {
  try {
    return encodeURIComponent(char);
  } catch {
    return '%ED%A0%80';
  }
}

/** A place in the body that holds a value: read it, replace it. */
interface Slot {
  value: unknown;
  set(value: unknown): void;
}

function slotsOf(draft: Draft): Slot[] {
  const slots: Slot[] = [{ value: draft.body, set: (value) => (draft.body = value) }];
  const walk = (value: unknown) => {
    if (Array.isArray(value)) {
      value.forEach((item, index) => {
        slots.push({ value: item, set: (v) => (value[index] = v) });
        walk(item);
      });
    } else if (value !== null && typeof value === 'object') {
      const object = value as Record<string, unknown>;
      for (const [key, item] of Object.entries(object)) {
        slots.push({ value: item, set: (v) => (object[key] = v) });
        walk(item);
      }
    }
  };
  walk(draft.body);
  return slots;
}

/** The objects of the body; a body without any becomes {}. */
function objectsOf(draft: Draft): Record<string, unknown>[] {
  const objects = () =>
    slotsOf(draft)
      .map((slot) => slot.value)
      .filter(
        (value): value is Record<string, unknown> =>
          value !== null && typeof value === 'object' && !Array.isArray(value),
      );
  if (objects().length === 0) draft.body = {};
  return objects();
}

/** The slot to change: a leaf field rather than the whole body, when there is one. */
function pickSlot(draft: Draft, at: number): Slot {
  if (draft.body === undefined) draft.body = {};
  const slots = slotsOf(draft);
  const inner = slots.length > 1 ? slots.slice(1) : slots;
  return inner[at % inner.length]!;
}

let markers = 0;

function rawMarker(draft: Draft, text: string, member: boolean): string {
  const marker = `@@fuzz-raw-${markers++}@@`;
  draft.raw.set(marker, { text, member });
  return marker;
}

/** The body's text: the raw text if one was set, else its JSON with raw text in place of the markers. */
export function bodyTextOf(draft: Draft): string | undefined {
  if (draft.bodyText !== undefined || draft.body === undefined) return draft.bodyText;
  let text = JSON.stringify(draft.body);
  for (const [marker, raw] of draft.raw)
    text = text.split(raw.member ? `${JSON.stringify(marker)}:0` : JSON.stringify(marker)).join(raw.text);
  return text;
}

/** Applies a body mutation to the JSON text held in a string field (the first such field from `at` on). */
function mutateNestedJson(draft: Draft, at: number, inner: BodyMutation, resolved: Resolved): void {
  if (draft.body === undefined) return;
  const slots = slotsOf(draft).filter((slot) => typeof slot.value === 'string' && /^\s*[[{]/.test(slot.value));
  for (let i = 0; i < slots.length; i++) {
    const slot = slots[(at + i) % slots.length]!;
    let value: unknown;
    try {
      value = JSON.parse(slot.value as string);
    } catch {
      continue;
    }
    const nested: Draft = {
      ...draft,
      headers: {},
      query: [],
      segments: [],
      parameterSegments: [],
      body: value,
      bodyText: undefined,
      raw: new Map(),
    };
    applyMutation(nested, inner, resolved);
    slot.set(bodyTextOf(nested) ?? '');
    return;
  }
}

function withSecrets(form: string, resolved: Resolved): string {
  return form
    .replaceAll('{token}', String(resolved.token))
    .replaceAll('{other}', resolved.otherToken)
    .replaceAll('{revoked}', resolved.revokedToken)
    .replaceAll('{apiKey}', String(resolved.apiKey))
    .replaceAll('{otherKey}', resolved.otherApiKey);
}

function setHeader(draft: Draft, name: string, value: string | string[] | null, resolved: Resolved): void {
  if (value === null) delete draft.headers[name];
  else
    draft.headers[name] = Array.isArray(value)
      ? value.map((v) => withSecrets(v, resolved))
      : withSecrets(value, resolved);
}

function hasBody(draft: Draft): boolean {
  return draft.body !== undefined || draft.bodyText !== undefined;
}

export function applyMutations(draft: Draft, mutations: readonly Mutation[], resolved: Resolved): void {
  for (const mutation of mutations) {
    const hadBody = hasBody(draft);
    applyMutation(draft, mutation, resolved);
    // A body sent where there was none goes as JSON, unless a content-type mutation says otherwise.
    if (!hadBody && hasBody(draft) && !('content-type' in draft.headers))
      draft.headers['content-type'] = 'application/json';
  }
}

function applyMutation(draft: Draft, mutation: Mutation, resolved: Resolved): void {
  switch (mutation.kind) {
    case 'dropField': {
      const members = objectsOf(draft).flatMap((object) => Object.keys(object).map((key) => [object, key] as const));
      if (members.length === 0) return;
      const [object, key] = members[mutation.at % members.length]!;
      delete object[key];
      return;
    }
    // Copies: the mutation's value belongs to the plan, which fast-check runs again when it shrinks.
    case 'addField': {
      const objects = objectsOf(draft);
      objects[mutation.at % objects.length]![mutation.name] = structuredClone(mutation.value);
      return;
    }
    case 'setValue':
      pickSlot(draft, mutation.at).set(structuredClone(mutation.value));
      return;
    case 'hugeString':
      pickSlot(draft, mutation.at).set(mutation.unit.repeat(Math.ceil(mutation.length / mutation.unit.length)));
      return;
    case 'rawValue':
      pickSlot(draft, mutation.at).set(rawMarker(draft, mutation.text, false));
      return;
    case 'deepNesting': {
      const { depth, shape } = mutation;
      const text =
        shape === 'array'
          ? `${'['.repeat(depth)}1${']'.repeat(depth)}`
          : shape === 'object'
            ? `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`
            : '['.repeat(depth);
      pickSlot(draft, mutation.at).set(rawMarker(draft, text, false));
      return;
    }
    case 'rawMember': {
      const objects = objectsOf(draft);
      objects[mutation.at % objects.length]![rawMarker(draft, mutation.text, true)] = 0;
      return;
    }
    case 'duplicateKey': {
      const objects = objectsOf(draft);
      const object = objects[mutation.at % objects.length]!;
      const keys = Object.keys(object).filter((key) => !draft.raw.has(key));
      const key = keys.length > 0 ? keys[mutation.at % keys.length]! : 'a';
      const value = mutation.value === '__same__' ? (object[key] ?? 1) : structuredClone(mutation.value);
      // The duplicate comes after the original: JSON.parse keeps the last one.
      object[rawMarker(draft, `${JSON.stringify(key)}:${JSON.stringify(value)}`, true)] = 0;
      return;
    }
    case 'wholeBody':
      draft.bodyText = mutation.text;
      return;
    case 'hugeBody':
      draft.bodyText = `{"filler":"${'x'.repeat(mutation.length)}"}`;
      return;
    case 'truncateBody': {
      const text = draft.bodyText ?? (draft.body === undefined ? '' : JSON.stringify(draft.body));
      draft.bodyText = text.slice(0, text.length === 0 ? 0 : mutation.at % text.length);
      return;
    }
    case 'nestedJson':
      mutateNestedJson(draft, mutation.at, mutation.inner, resolved);
      return;
    case 'dropBody':
      draft.body = undefined;
      draft.bodyText = undefined;
      return;
    case 'contentType':
      if (mutation.value === null) delete draft.headers['content-type'];
      else draft.headers['content-type'] = mutation.value;
      return;
    case 'chunked':
      draft.chunked = true;
      return;
    case 'authorization':
      setHeader(draft, 'authorization', mutation.value, resolved);
      return;
    case 'apiKey':
      setHeader(draft, 'x-api-key', mutation.value, resolved);
      return;
    case 'header':
      setHeader(draft, mutation.name, mutation.value, resolved);
      return;
    case 'hugeHeader':
      draft.headers[mutation.name] =
        `${mutation.name === 'authorization' ? 'Bearer ' : ''}${'k'.repeat(mutation.length)}`;
      return;
    case 'queryParam':
      draft.query.push([mutation.name, mutation.value]);
      return;
    case 'queryValue':
      if (draft.query.length === 0) draft.query.push(['x', mutation.value]);
      else draft.query[mutation.at % draft.query.length]![1] = mutation.value;
      return;
    case 'rawQuery':
      draft.rawQuery = mutation.text;
      return;
    case 'pathParam':
    case 'longPathParam':
    case 'encodePathParam': {
      const indexes = draft.parameterSegments.length > 0 ? draft.parameterSegments : draft.segments.map((_, i) => i);
      const index = indexes[mutation.at % indexes.length]!;
      const current = draft.segments[index]!;
      draft.segments[index] =
        mutation.kind === 'pathParam'
          ? mutation.segment
          : mutation.kind === 'longPathParam'
            ? (current + 'x'.repeat(mutation.length)).slice(0, mutation.length)
            : [...Buffer.from(decodeSafely(current), 'utf8')]
                .map((b) => `%${b.toString(16).padStart(2, '0').toUpperCase()}`)
                .join('');
      return;
    }
    case 'pathEdit':
      editPath(draft, mutation.edit);
      return;
    case 'method':
      draft.method = mutation.method;
      return;
  }
}

function decodeSafely(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function editPath(draft: Draft, edit: PathEdit): void {
  const s = draft.segments;
  const literal = s.findIndex((_, i) => !draft.parameterSegments.includes(i));
  switch (edit) {
    case 'trailingSlash':
      s.push('');
      return;
    case 'doubleSlash':
      s.splice(Math.min(1, s.length), 0, '');
      return;
    case 'leadingDoubleSlash':
      s.unshift('');
      return;
    case 'dotSegment':
      s.splice(Math.min(2, s.length), 0, '.');
      return;
    case 'dotDotSegment':
      s.splice(Math.min(2, s.length), 0, 'x', '..');
      return;
    case 'upperCase':
      s[literal] = s[literal]!.toUpperCase();
      return;
    case 'encodeLiteral':
      s[literal] = [...s[literal]!].map((c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`).join('');
      return;
    case 'semicolon':
      s[s.length - 1] += ';jsessionid=1';
      return;
    case 'dropLast':
      s.pop();
      return;
    case 'extraSegment':
      s.push('extra');
      return;
    case 'fragment':
      s[s.length - 1] += '#frag';
      return;
    case 'backslash':
      s[s.length - 1] += '\\';
      return;
    case 'emptyQuery':
      draft.rawQuery = '';
      return;
  }
}
