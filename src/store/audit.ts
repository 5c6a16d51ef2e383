/** The store of the audit trail. */

/** The tables of the audit trail (part of `Database`). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface AuditTables {}
