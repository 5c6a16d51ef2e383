/**
 * What every answer must be: never a 5xx; a Request-Id header; a 4xx in the error envelope of
 * docs/errors.md with a code of the catalog whose status is the answer's; a 2xx as the operation documents
 * it (its status, media type and schema).
 */
import { Ajv, type ValidateFunction } from 'ajv';
import addFormats from 'ajv-formats';
import { Errors } from '../../src/domain/errors.js';
import type { Operation } from './operations.js';
import type { JsonSchema } from './schema-values.js';
import type { WireAnswer } from './wire.js';

const catalog = new Map<string, number>(Object.values(Errors).map((kind) => [kind.code, kind.status]));
const ENVELOPE_KEYS = ['code', 'errors', 'message', 'request_id', 'status'];

const ajv = new Ajv({ strict: false, allErrors: true });
addFormats.default(ajv);
const validators = new Map<JsonSchema, ValidateFunction>();

/** The document's schemas carry `$id`s (ErrorEnvelope) more than once; one Ajv instance takes each once. */
function withoutIds(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutIds);
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(
      Object.entries(value)
        .filter(([key]) => key !== '$id')
        .map(([key, v]) => [key, withoutIds(v)]),
    );
  return value;
}

function validatorOf(schema: JsonSchema): ValidateFunction {
  let validate = validators.get(schema);
  if (validate === undefined) {
    validate = ajv.compile(withoutIds(schema) as JsonSchema);
    validators.set(schema, validate);
  }
  return validate;
}

/** The broken promises of one answer (empty when it keeps them all). */
export function answerProblems(operation: Operation, method: string, answer: WireAnswer): string[] {
  const problems: string[] = [];
  const { status } = answer;
  if (status >= 500) problems.push(`answered ${status}: a 5xx`);
  else if (status < 200 || (status >= 300 && status < 400))
    problems.push(`answered ${status}: neither a 2xx nor a 4xx`);
  const requestId = answer.headers['request-id'];
  if (typeof requestId !== 'string' || requestId === '') problems.push('no Request-Id header');
  // A HEAD answer has no body to check.
  if (method === 'HEAD') return problems;
  if (status >= 400) problems.push(...envelopeProblems(answer, requestId));
  else if (status >= 200 && status < 300) problems.push(...documentedAnswerProblems(operation, answer));
  return problems;
}

function envelopeProblems(answer: WireAnswer, requestId: unknown): string[] {
  const problems: string[] = [];
  if (!/^application\/json\b/.test(String(answer.headers['content-type'] ?? '')))
    problems.push(`content-type ${answer.headers['content-type']} is not application/json`);
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return [...problems, 'the body is not JSON'];
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    return [...problems, 'the body is not a JSON object'];
  const envelope = body as Record<string, unknown>;
  const keys = Object.keys(envelope).sort();
  if (keys.join() !== ENVELOPE_KEYS.join())
    problems.push(`the envelope has the fields ${keys.join(', ')}, not ${ENVELOPE_KEYS.join(', ')}`);
  if (envelope.status !== 'error') problems.push(`status is ${JSON.stringify(envelope.status)}, not "error"`);
  const code = envelope.code;
  if (typeof code !== 'string' || !/^e-\d{3}$/.test(code)) problems.push(`code ${JSON.stringify(code)} is not e-NNN`);
  else if (!catalog.has(code)) problems.push(`code ${code} is not in the catalog`);
  else if (catalog.get(code) !== answer.status)
    problems.push(`code ${code} has status ${catalog.get(code)} in the catalog, answered ${answer.status}`);
  if (typeof envelope.message !== 'string' || envelope.message === '')
    problems.push('message is not a non-empty string');
  const errors = envelope.errors;
  if (!Array.isArray(errors)) problems.push('errors is not an array');
  else if (
    !errors.every(
      (e) =>
        e !== null &&
        typeof e === 'object' &&
        Object.keys(e).sort().join() === 'field,message' &&
        typeof e.field === 'string' &&
        typeof e.message === 'string',
    )
  ) {
    problems.push('errors holds something other than {field, message} strings');
  }
  if (envelope.request_id !== requestId)
    problems.push(
      `request_id ${JSON.stringify(envelope.request_id)} differs from the Request-Id header ${JSON.stringify(requestId)}`,
    );
  return problems;
}

function documentedAnswerProblems(operation: Operation, answer: WireAnswer): string[] {
  const documented = operation.responses.get(answer.status);
  if (documented === undefined) return [`${answer.status} is not a documented answer of ${operation.key}`];
  const contentType = String(answer.headers['content-type'] ?? '')
    .split(';')[0]!
    .trim();
  if (!documented.has(contentType))
    return [`content-type ${contentType} is not documented for ${answer.status} of ${operation.key}`];
  const schema = documented.get(contentType);
  if (schema === undefined || answer.streamed || contentType !== 'application/json') return [];
  let body: unknown;
  try {
    body = JSON.parse(answer.text);
  } catch {
    return ['the body is not JSON'];
  }
  const validate = validatorOf(schema);
  if (validate(body)) return [];
  return [`the body does not match the documented schema: ${ajv.errorsText(validate.errors)}`];
}
