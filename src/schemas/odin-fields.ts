/**
 * Field schemas that ODIN's answers share: texts, counts, prices as rupee strings, times in ODIN's format,
 * and a list's paging (the `offset` page and `limit` size in the query, `metadata` in the answer).
 */
import Type, { type Static } from 'typebox';

export const Text = (description: string) => Type.String({ description });
export const Count = (description: string) => Type.Integer({ minimum: 0, description });
/** Rupees with two decimals, e.g. "101.50". */
export const PriceText = (description: string) =>
  Type.String({ pattern: '^[0-9]+\\.[0-9]{2}$', description, examples: ['101.50'] });
/** "2026-04-17 12:46:34", India time; `orEmpty`: "" where there is no such time yet. */
export const OdinTime = (description: string, orEmpty = false) =>
  Type.String({
    pattern: orEmpty
      ? '^([0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2})?$'
      : '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2}$',
    description,
    examples: ['2026-04-17 12:46:34'],
  });

/** A list's page in the query. Query values are strings (nothing is coerced): numbers are strings of digits. */
export const PAGE_QUERY_FIELDS = {
  offset: Type.Optional(
    Type.String({ pattern: '^[1-9][0-9]{0,8}$', description: 'The page number, from 1 (default 1).', examples: ['1'] }),
  ),
  limit: Type.Optional(
    Type.String({
      pattern: '^(1000|[1-9][0-9]{0,2})$',
      description: 'The page size, 1 to 1000 (default 20).',
      examples: ['20'],
    }),
  ),
};

/** A page of a list and its size on all pages, as ODIN answers lists: `data` the list, `metadata` the count. */
export const PageMetadata = Type.Object(
  {
    total_records: Count('How many records match the filters, on all pages.'),
    offset: Type.Integer({ minimum: 1, description: 'The page number of this answer.' }),
    limit: Type.Integer({ minimum: 1, maximum: 1000, description: 'The page size of this answer.' }),
  },
  { additionalProperties: false },
);
export type PageMetadata = Static<typeof PageMetadata>;
