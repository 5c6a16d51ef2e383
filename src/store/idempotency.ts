/** The store of idempotency keys. */

/** The tables of idempotency keys (part of `Database`). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface IdempotencyTables {}
