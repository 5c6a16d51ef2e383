/**
 * The one Ajv set-up, used by Fastify for every request schema and by the cart-line validator, and the one
 * mapping from Ajv's errors to our catalog: a missing field, a wrong JSON type and an unknown field have
 * their generic codes; any other failure answers the code its schema node is tagged with (`withCode`),
 * else the generic invalid-value code.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Errors, type ErrorKind, type Violation } from '../domain/errors.js';

export function createAjv(): Ajv {
  const ajv = new Ajv({
    // Our contract is strict: no type coercion, no silent removal of unknown fields, no defaults.
    coerceTypes: false,
    removeAdditional: false,
    useDefaults: false,
    allErrors: true,
    // parentSchema on each error lets us read the node's x-error-code.
    verbose: true,
    strict: true,
  });
  addFormats.default(ajv, ['date-time']);
  ajv.addKeyword({ keyword: 'x-error-code', schemaType: 'string' });
  ajv.addKeyword({ keyword: 'x-error-messages', schemaType: 'object' });
  // OpenAPI annotations that TypeBox or our schemas add.
  ajv.addKeyword({ keyword: 'example' });
  return ajv;
}

const kindsByCode = new Map<string, ErrorKind>(Object.values(Errors).map((k) => [k.code, k]));

/** "/scrip_info/symbol" -> "scrip_info.symbol"; "/orders/2/Price" -> "orders[2].Price". */
export function fieldName(instancePath: string, prefix = ''): string {
  let name = prefix;
  for (const raw of instancePath.split('/').slice(1)) {
    const part = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (/^\d+$/.test(part)) name += `[${part}]`;
    else name += name === '' ? part : `.${part}`;
  }
  return name;
}

function join(parent: string, child: string): string {
  return parent === '' ? child : `${parent}.${child}`;
}

const TYPE_WORDS: Record<string, string> = {
  string: 'a string',
  number: 'a number',
  integer: 'a whole number',
  boolean: 'true or false',
  object: 'an object',
  array: 'an array',
  null: 'null',
};

function describeTypes(type: unknown): string {
  const types = Array.isArray(type) ? type : [type];
  return types.map((t) => TYPE_WORDS[String(t)] ?? String(t)).join(' or ');
}

/** Ajv's wording, except that a value outside a fixed set names the allowed values. */
function describeFailure(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  if (error.keyword === 'const') return `must be ${JSON.stringify(params.allowedValue)}`;
  // A regular expression means little to a reader; the field's description says what is expected.
  const description = (error.parentSchema as Record<string, unknown> | undefined)?.description;
  if (error.keyword === 'pattern' && typeof description === 'string') return `is not valid: ${description}`;
  if (error.keyword === 'enum' && Array.isArray(params.allowedValues)) {
    return `must be one of ${params.allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return error.message ?? 'is invalid';
}

function toViolation(error: ErrorObject, prefix: string): Violation {
  const at = fieldName(error.instancePath, prefix);
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required': {
      const field = join(at, String(params.missingProperty));
      return { kind: Errors.FIELD_REQUIRED, field, message: `${field} is required` };
    }
    case 'additionalProperties': {
      const field = join(at, String(params.additionalProperty));
      return { kind: Errors.UNKNOWN_FIELD, field, message: `${field} is not a field of this request` };
    }
    case 'type': {
      const field = at === '' ? 'body' : at;
      let message = `${field} must be ${describeTypes(params.type)}`;
      // The classic slip: a number where the contract wants a string of digits.
      if (params.type === 'string' && typeof error.data === 'number') message += `, e.g. "${error.data}"`;
      return { kind: Errors.WRONG_TYPE, field: at, message };
    }
  }
  const tagged = (error.parentSchema as Record<string, unknown> | undefined)?.['x-error-code'];
  const kind = (typeof tagged === 'string' && kindsByCode.get(tagged)) || Errors.INVALID_VALUE;
  const message =
    kind === Errors.INVALID_VALUE ? `${at || 'body'} ${describeFailure(error)}` : (ownMessage(error) ?? kind.title);
  return { kind, field: at, message };
}

/** The message a tagged node gives the failed keyword itself (`withCode`'s `messages`), if any. */
function ownMessage(error: ErrorObject): string | undefined {
  const messages = (error.parentSchema as Record<string, unknown> | undefined)?.['x-error-messages'] as
    Record<string, unknown> | undefined;
  const message = messages?.[error.keyword];
  return typeof message === 'string' ? message : undefined;
}

/**
 * Ajv's errors -> our violations, one per field. An anyOf that failed is reported once, as itself, not as
 * the failures of each of its branches.
 */
export function violationsOf(errors: readonly ErrorObject[], prefix = ''): Violation[] {
  const failedAnyOf = errors.filter((e) => e.keyword === 'anyOf');
  const relevant = errors.filter(
    (e) =>
      e.keyword === 'anyOf' ||
      !failedAnyOf.some(
        (a) => e.instancePath.startsWith(a.instancePath) && e.schemaPath.startsWith(`${a.schemaPath}/`),
      ),
  );
  // A value of the wrong JSON type is reported as that alone, not also as breaking the rules for its value.
  const wrongType = new Set(relevant.filter((e) => e.keyword === 'type').map((e) => e.instancePath));
  /** Per field and code, the index of its violation and whether that has a keyword's own message. */
  const seen = new Map<string, { index: number; own: boolean }>();
  const violations: Violation[] = [];
  for (const error of relevant) {
    if (wrongType.has(error.instancePath) && !['type', 'required', 'additionalProperties'].includes(error.keyword))
      continue;
    const violation = toViolation(error, prefix);
    const own = ownMessage(error) !== undefined;
    const key = `${violation.field}\u0000${violation.kind.code}`;
    const earlier = seen.get(key);
    if (earlier === undefined) {
      seen.set(key, { index: violations.length, own });
      violations.push(violation);
    } else if (earlier.own && !own) {
      // A value that breaks several rules of its node gets the node's general message, not one rule's own:
      // a quantity of 20 letters is not digits, whatever its length.
      violations[earlier.index] = violation;
      earlier.own = false;
    }
  }
  return violations;
}

/** A compiled schema as a function from any value to its violations (empty when valid). */
export function compileChecker(ajv: Ajv, schema: object): (value: unknown, prefix?: string) => Violation[] {
  const validate: ValidateFunction = ajv.compile(schema);
  return (value, prefix = '') => (validate(value) ? [] : violationsOf(validate.errors ?? [], prefix));
}
