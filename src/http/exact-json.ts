/**
 * JSON text in which a bigint is written as a JSON integer with every digit (JSON.stringify throws on a
 * bigint, and a number past 2^53 has lost digits already): for the frames written by hand (the event
 * stream), where no response schema's serializer runs. Issue 47 row 3.
 */
const MARK = '\u0000bigint:';
const MARKED = /"\\u0000bigint:(-?\d+)"/g;

export function exactJson(value: unknown): string {
  return JSON.stringify(value, (_key, field: unknown) =>
    typeof field === 'bigint' ? `${MARK}${field}` : field,
  ).replace(MARKED, '$1');
}
