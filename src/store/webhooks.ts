/** The store of webhooks and their deliveries. */

/** The tables of webhooks and their deliveries (part of `Database`). */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type
export interface WebhookTables {}
