/**
 * Values that a JSON Schema of the OpenAPI document accepts, as fast-check arbitraries. Covers the keywords
 * the document uses (type, enum, const, anyOf/oneOf, properties/required/additionalProperties, items,
 * pattern, min/maxLength, minimum/maximum, exclusiveMinimum/Maximum, format, examples). A `bind` hook may
 * replace the arbitrary of a named field (say `ordercartId`) by one of real objects of the test's world.
 */
import fc from 'fast-check';

export type JsonSchema = Record<string, unknown>;

/** Where a value sits: the names of the properties leading to it ([] for the whole value). */
export type FieldPath = readonly string[];

/** An arbitrary for the field at `path`, or undefined to derive it from the schema. */
export type Binder = (path: FieldPath, schema: JsonSchema) => fc.Arbitrary<unknown> | undefined;

/** Longest string or array a valid value gets when the schema allows more (huge values are mutations). */
const LENGTH_CAP = 24;
const ARRAY_CAP = 3;

export function schemaValue(
  schema: JsonSchema,
  bind: Binder = () => undefined,
  path: FieldPath = [],
): fc.Arbitrary<unknown> {
  const bound = bind(path, schema);
  if (bound !== undefined) return bound;
  const derived = derive(schema, bind, path);
  const examples = [
    ...(Array.isArray(schema.examples) ? schema.examples : []),
    ...('example' in schema ? [schema.example] : []),
  ];
  // The document's own examples are valid values that a random one seldom is (a cart's orders text, say).
  return examples.length > 0
    ? fc.oneof({ arbitrary: fc.constantFrom(...examples), weight: 3 }, { arbitrary: derived, weight: 1 })
    : derived;
}

function derive(schema: JsonSchema, bind: Binder, path: FieldPath): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const branches = (schema.anyOf ?? schema.oneOf) as JsonSchema[] | undefined;
  if (branches !== undefined) return fc.oneof(...branches.map((branch) => schemaValue(branch, bind, path)));
  const type = schema.type;
  if (Array.isArray(type)) return fc.oneof(...type.map((t) => derive({ ...schema, type: t }, bind, path)));
  switch (type) {
    case 'object':
      return objectValue(schema, bind, path);
    case 'array': {
      const items = (schema.items ?? {}) as JsonSchema;
      const minLength = Number(schema.minItems ?? 0);
      const maxLength = Math.max(minLength, Math.min(Number(schema.maxItems ?? ARRAY_CAP), ARRAY_CAP));
      return fc.array(schemaValue(items, bind, [...path, '[]']), { minLength, maxLength });
    }
    case 'string':
      return stringValue(schema);
    case 'integer':
      return integerValue(schema);
    case 'number':
      return numberValue(schema);
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    default:
      return fc.jsonValue({ maxDepth: 2 });
  }
}

function objectValue(schema: JsonSchema, bind: Binder, path: FieldPath): fc.Arbitrary<unknown> {
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  const model: Record<string, fc.Arbitrary<unknown>> = {};
  for (const [name, property] of Object.entries(properties)) model[name] = schemaValue(property, bind, [...path, name]);
  return fc.record(model, { requiredKeys: Object.keys(properties).filter((name) => required.has(name)) });
}

function stringValue(schema: JsonSchema): fc.Arbitrary<string> {
  const minLength = Number(schema.minLength ?? 0);
  const maxLength = Number(schema.maxLength ?? Number.POSITIVE_INFINITY);
  if (schema.format === 'date-time')
    return fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString());
  if (schema.format === 'uri') return fc.webUrl();
  if (typeof schema.pattern === 'string') {
    // Ajv reads patterns with the u flag, as the server does.
    const pattern = new RegExp(schema.pattern, 'u');
    return fc.stringMatching(pattern).filter((s) => s.length >= minLength && s.length <= maxLength && pattern.test(s));
  }
  const cap = Math.max(minLength, Math.min(maxLength, LENGTH_CAP));
  return fc.oneof(
    { arbitrary: fc.string({ minLength, maxLength: cap }), weight: 3 },
    { arbitrary: fc.string({ minLength, maxLength: cap, unit: 'grapheme' }), weight: 1 },
  );
}

function bounds(schema: JsonSchema): { min: number; max: number } {
  let min = typeof schema.minimum === 'number' ? schema.minimum : Number.MIN_SAFE_INTEGER;
  let max = typeof schema.maximum === 'number' ? schema.maximum : Number.MAX_SAFE_INTEGER;
  if (typeof schema.exclusiveMinimum === 'number') min = Math.max(min, schema.exclusiveMinimum);
  if (typeof schema.exclusiveMaximum === 'number') max = Math.min(max, schema.exclusiveMaximum);
  return { min, max };
}

function integerValue(schema: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = bounds(schema);
  const low = Math.ceil(schema.exclusiveMinimum === min ? min + 1 : min);
  const high = Math.floor(schema.exclusiveMaximum === max ? max - 1 : max);
  // Small values first (they are the usual ones), then any in range; fc.integer is 32-bit only.
  const small = fc.integer({ min: Math.max(low, -1000), max: Math.min(high, 1000) });
  const any = fc.bigInt({ min: BigInt(low), max: BigInt(high) }).map(Number);
  return low <= 1000 && high >= -1000 ? fc.oneof({ arbitrary: small, weight: 3 }, { arbitrary: any, weight: 1 }) : any;
}

function numberValue(schema: JsonSchema): fc.Arbitrary<number> {
  const { min, max } = bounds(schema);
  return fc
    .double({
      min,
      max,
      noNaN: true,
      noDefaultInfinity: true,
      minExcluded: schema.exclusiveMinimum === min,
      maxExcluded: schema.exclusiveMaximum === max,
    })
    .map((n) => (Object.is(n, -0) ? 0 : n));
}
