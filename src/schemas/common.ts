/** Wire shapes shared by every endpoint: the success and error envelopes. */
import Type, { type TSchema } from 'typebox';
import type { ErrorKind } from '../domain/errors.js';

/**
 * Tags a schema node with the catalog code its violation answers (shown in the OpenAPI document too). Its
 * message is the code's title, unless `messages` gives the failed keyword one of its own (say `maxLength`:
 * "quantity must be at most ..."); a value that breaks several rules of the node gets the title.
 */
export function withCode<T extends TSchema>(
  kind: ErrorKind,
  schema: T,
  messages?: Readonly<Record<string, string>>,
): T {
  return { ...schema, 'x-error-code': kind.code, ...(messages !== undefined && { 'x-error-messages': messages }) } as T;
}

export const SUCCESS_CODE = 's-101';
export const PARTIAL_SUCCESS_CODE = 's-102';

/** `{status:"success", code, message, data}`: exactly these four fields. */
export function SuccessEnvelope<T extends TSchema>(data: T, description: string) {
  return Type.Object(
    {
      status: Type.Literal('success'),
      code: Type.String({ examples: [SUCCESS_CODE] }),
      message: Type.String(),
      data,
    },
    { additionalProperties: false, description },
  );
}

/**
 * A page of a list, as ODIN answers lists: the success envelope's four fields and `metadata` (the count on
 * all pages, and which page this is).
 */
export function PagedEnvelope<T extends TSchema, M extends TSchema>(data: T, metadata: M, description: string) {
  return Type.Object(
    {
      status: Type.Literal('success'),
      code: Type.String({ examples: [SUCCESS_CODE] }),
      message: Type.String(),
      data,
      metadata,
    },
    { additionalProperties: false, description },
  );
}

/** The query of a call that takes no parameters: any one answers 400 e-110. */
export const NoQuery = Type.Object({}, { additionalProperties: false });

export const FieldErrorSchema = Type.Object(
  {
    field: Type.String({
      description: 'The field at fault, e.g. scrip_info.symbol or orders[2].Price; "" for the whole request.',
    }),
    message: Type.String(),
  },
  { additionalProperties: false },
);

export const ErrorEnvelope = Type.Object(
  {
    status: Type.Literal('error'),
    code: Type.String({
      description:
        'A stable code from the error catalog (the table in the API description); a client may branch on it.',
      examples: ['e-103'],
    }),
    message: Type.String(),
    errors: Type.Array(FieldErrorSchema),
    request_id: Type.String({ description: 'Equal to the Request-Id response header.' }),
  },
  { additionalProperties: false, $id: 'ErrorEnvelope' },
);

/** `data: [{"message":"success"}]`, as the seed shows for cart update (and ODIN for cart delete). */
export const MessageList = Type.Array(Type.Object({ message: Type.String() }, { additionalProperties: false }));
