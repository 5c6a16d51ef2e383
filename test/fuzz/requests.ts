/**
 * Requests for one operation of the OpenAPI document: a valid request derived from its schemas (path,
 * query, headers, security, body), naming objects of the world by reference, and mutations of it (see
 * mutations.ts). A plan is data, so that fast-check can print and shrink it; `buildRequest` turns it into
 * the bytes sent, once the world has resolved its references.
 */
import fc from 'fast-check';
import { latin1 } from './wire.js';
import { applyMutations, bodyTextOf, mutationArbitrary, type Mutation } from './mutations.js';
import type { OpenApiDocument, Operation } from './operations.js';
import { schemaValue, type Binder, type FieldPath, type JsonSchema } from './schema-values.js';
import { Ref, type ContextPick, type ObjectPick, type RefName, type Resolved } from './world.js';

export interface Plan {
  operation: string;
  pick: ContextPick;
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  headers: Record<string, unknown>;
  /** The JSON body (with references); undefined when none is sent. */
  body: unknown;
  mutations: Mutation[];
}

/** A request as it goes on the wire. */
export interface WireRequest {
  method: string;
  /** Path and query, as sent (already percent-encoded). */
  target: string;
  headers: Record<string, string | string[]>;
  body: string | undefined;
  /** Send the body with Transfer-Encoding: chunked instead of a Content-Length. */
  chunked: boolean;
}

/** The parts a mutation works on, before they are joined into a WireRequest. */
export interface Draft {
  method: string;
  /** Path segments as sent (percent-encoded), without the leading "/". */
  segments: string[];
  /** Which segments hold a path parameter (by index). */
  parameterSegments: number[];
  /** Query pairs as sent (percent-encoded); a null value sends the name alone. */
  query: [string, string | null][];
  /** Raw text appended to the query. */
  rawQuery: string | null;
  headers: Record<string, string | string[]>;
  /** The body's JSON value, or undefined; raw JSON text goes in through markers (see mutations.ts). */
  body: unknown;
  bodyText: string | undefined;
  chunked: boolean;
  /** Raw JSON text for the markers put in the body: a value, or a member (the marker is its key). */
  raw: Map<string, { text: string; member: boolean }>;
}

const ref = (name: RefName) => fc.constant(new Ref(name));

/**
 * Body fields bound to the world by name: ids of real objects, the caller's credentials, and values that
 * pass the OFS rules (a limit price on the tick, a small quantity), so that valid requests do succeed.
 * `strict`: every bound field takes a bound value; else now and then any value of its schema (a cut-off
 * order type with a limit price, a stranger's user id), which the server may refuse.
 */
function bodyBinder(strict: boolean): Binder {
  const bound = (value: fc.Arbitrary<unknown>, schema: JsonSchema) =>
    strict ? value : fc.oneof({ arbitrary: value, weight: 3 }, { arbitrary: schemaValue(schema), weight: 1 });
  return (path: FieldPath, schema: JsonSchema) => {
    if (path.length !== 1) return undefined;
    const hasEnum = Array.isArray(schema.enum) || 'const' in schema;
    switch (path[0]) {
      case 'user_id':
      case 'createdBy':
      case 'modifiedBy':
        return bound(ref('userId'), schema);
      case 'client_id':
        return bound(fc.oneof(ref('userId'), fc.constant('')), schema);
      case 'password':
        return bound(ref('password'), schema);
      case 'api_key':
        return bound(
          fc.oneof({ arbitrary: ref('apiKey'), weight: 4 }, { arbitrary: fc.constantFrom('', null), weight: 1 }),
          schema,
        );
      case 'second_auth_type':
      case 'second_auth':
        return fc.constantFrom('', null);
      case 'ordercartId':
        return bound(ref('cartId'), schema);
      case 'executedNoTime':
        return hasEnum ? undefined : bound(ref('cartExecutedNoTime'), schema);
      case 'order_id':
        return bound(ref('orderId'), schema);
      case 'exchange':
        return bound(ref('orderExchange'), schema);
      case 'traded_quantity':
        return bound(ref('orderTradedQuantity'), schema);
      case 'scrip_info':
        return bound(ref('scrip'), schema);
      case 'order_type':
        return bound(fc.constant('RL'), schema);
      case 'quantity':
        return bound(fc.integer({ min: 1, max: 20 }).map(String), schema);
      case 'price':
        return bound(fc.constantFrom(100, 101, 101.5, 102.25, 105.05, 110), schema);
      case 'disclosed_quantity':
      case 'freeze_quantity':
        return bound(fc.constant(0), schema);
      default:
        return undefined;
    }
  };
}

/** Mostly the bound value (a real object of the world), now and then any value of the schema. */
function mostly(bound: fc.Arbitrary<unknown>, schema: JsonSchema): fc.Arbitrary<unknown> {
  return fc.oneof({ arbitrary: bound, weight: 6 }, { arbitrary: schemaValue(schema), weight: 1 });
}

/** Path, query and header parameters bound to the world by name. */
function parameterBinding(name: string, schema: JsonSchema): fc.Arbitrary<unknown> {
  switch (name.toLowerCase()) {
    case 'ordercartid':
      return mostly(ref('cartId'), schema);
    case 'order_id':
      return mostly(ref('orderId'), schema);
    case 'order_ids':
      return mostly(ref('orderIds'), schema);
    case 'exchange':
      return mostly(ref('orderExchange'), schema);
    case 'scrip_token':
      return mostly(ref('scripToken'), schema);
    case 'offer_id':
      return mostly(ref('offerId'), schema);
    case 'if-match':
      return fc.oneof({ arbitrary: ref('cartEtag'), weight: 4 }, { arbitrary: fc.constant('*'), weight: 1 });
    default:
      return schemaValue(schema);
  }
}

const objectPick: fc.Arbitrary<ObjectPick> = fc.record({
  whose: fc.oneof(
    { arbitrary: fc.constant('own' as const), weight: 8 },
    { arbitrary: fc.constantFrom('other' as const, 'unknown' as const), weight: 2 },
  ),
  n: fc.nat({ max: 1000 }),
});

const contextPick: fc.Arbitrary<ContextPick> = fc.record({
  caller: fc.nat({ max: 2 }),
  cart: objectPick,
  order: objectPick,
  issue: objectPick,
});

/** Either the value or, for an optional part, nothing (`undefined`). */
function optional(arbitrary: fc.Arbitrary<unknown>, required: boolean): fc.Arbitrary<unknown> {
  return required ? arbitrary : fc.option(arbitrary, { nil: undefined, freq: 2 });
}

export function planArbitrary(operation: Operation): fc.Arbitrary<Plan> {
  const group = (where: 'path' | 'query' | 'header') =>
    fc.record(
      Object.fromEntries(
        operation.parameters
          .filter((p) => p.in === where)
          .map((p) => [p.name, optional(parameterBinding(p.name, p.schema), p.required || where === 'path')]),
      ),
    );
  const schema = operation.body;
  const body =
    schema === undefined
      ? fc.constant(undefined)
      : optional(
          fc.oneof(
            { arbitrary: schemaValue(schema, bodyBinder(true)), weight: 3 },
            { arbitrary: schemaValue(schema, bodyBinder(false)), weight: 1 },
          ),
          operation.bodyRequired,
        );
  const valid = fc.record({
    pick: contextPick,
    path: group('path'),
    query: group('query'),
    headers: group('header'),
    body,
  });
  const mutations = fc.oneof(
    { arbitrary: fc.constant([] as Mutation[]), weight: 3 },
    { arbitrary: fc.array(mutationArbitrary(operation), { minLength: 1, maxLength: 3 }), weight: 7 },
  );
  return fc.record({ valid, mutations }).map(({ valid: v, mutations: m }) => ({
    operation: operation.key,
    pick: v.pick,
    path: dropUndefined(v.path),
    query: dropUndefined(v.query),
    headers: dropUndefined(v.headers),
    body: v.body,
    mutations: m,
  }));
}

function dropUndefined(values: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(values).filter(([, value]) => value !== undefined));
}

/** Replaces every reference in a value by what it stands for. */
export function resolveRefs(value: unknown, resolved: Resolved): unknown {
  // A copy: mutations change the request's values, never the world's.
  if (value instanceof Ref) return structuredClone(resolved[value.name]);
  if (Array.isArray(value)) return value.map((item) => resolveRefs(item, resolved));
  if (value !== null && typeof value === 'object') {
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) copy[key] = resolveRefs(item, resolved);
    return copy;
  }
  return value;
}

/** Percent-encodes like encodeURIComponent, and a lone surrogate as the bytes of its code unit (CESU-8). */
export function percentEncode(text: string): string {
  let out = '';
  for (const char of text) {
    try {
      out += encodeURIComponent(char);
    } catch {
      const unit = char.charCodeAt(0);
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((b) => `%${b.toString(16).toUpperCase()}`)
        .join('');
    }
  }
  return out;
}

export function buildRequest(
  operation: Operation,
  document: OpenApiDocument,
  plan: Plan,
  resolved: Resolved,
): WireRequest {
  const schemes = document.components?.securitySchemes ?? {};
  const headers: Record<string, string | string[]> = {};
  for (const name of operation.security) {
    const scheme = schemes[name];
    if (scheme?.type === 'http' && scheme.scheme === 'bearer')
      headers.authorization = `Bearer ${String(resolved.token)}`;
    else if (scheme?.type === 'apiKey' && scheme.in === 'header' && scheme.name)
      headers[scheme.name.toLowerCase()] = String(resolved.apiKey);
  }
  for (const [name, value] of Object.entries(resolveRefs(plan.headers, resolved) as Record<string, unknown>))
    headers[name.toLowerCase()] = String(value);

  const path = resolveRefs(plan.path, resolved) as Record<string, unknown>;
  const segments: string[] = [];
  const parameterSegments: number[] = [];
  for (const segment of operation.path.split('/').slice(1)) {
    const parameter = /^\{(.+)\}$/.exec(segment)?.[1];
    if (parameter !== undefined) parameterSegments.push(segments.length);
    // A fuzzed value may be any JSON: an object's default text is as good a path segment as any.
    // eslint-disable-next-line @typescript-eslint/no-base-to-string
    segments.push(parameter === undefined ? segment : percentEncode(String(path[parameter] ?? '')));
  }
  const query = Object.entries(resolveRefs(plan.query, resolved) as Record<string, unknown>).map(
    ([k, v]) => [percentEncode(k), percentEncode(String(v))] as [string, string | null],
  );
  const body = resolveRefs(plan.body, resolved);
  const draft: Draft = {
    method: operation.method,
    segments,
    parameterSegments,
    query,
    rawQuery: null,
    headers,
    body,
    bodyText: undefined,
    chunked: false,
    raw: new Map(),
  };
  if (body !== undefined) draft.headers['content-type'] = 'application/json';
  applyMutations(draft, plan.mutations, resolved);
  return finish(draft);
}

function finish(draft: Draft): WireRequest {
  const text = bodyTextOf(draft);
  const queryText = draft.query.map(([k, v]) => (v === null ? k : `${k}=${v}`)).join('&');
  const search =
    draft.rawQuery !== null
      ? `?${queryText}${queryText === '' ? '' : '&'}${draft.rawQuery}`
      : queryText === ''
        ? ''
        : `?${queryText}`;
  const headers = Object.fromEntries(
    Object.entries(draft.headers).map(([name, value]) => [
      name,
      Array.isArray(value) ? value.map(latin1) : latin1(value),
    ]),
  );
  return {
    method: draft.method,
    target: `/${draft.segments.join('/')}${search}`,
    headers,
    body: text,
    chunked: draft.chunked,
  };
}
