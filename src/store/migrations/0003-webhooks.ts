/** Migration 0003-webhooks: the tables of webhooks. */
import type { Kysely } from 'kysely';
import type { DialectName } from '../database.js';

export async function up(_db: Kysely<any>, _dialect: DialectName): Promise<void> {}
