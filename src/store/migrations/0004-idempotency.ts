/** Migration 0004-idempotency: the tables of idempotency keys. */
import type { Kysely } from 'kysely';
import type { DialectName } from '../database.js';

export async function up(_db: Kysely<any>, _dialect: DialectName): Promise<void> {}
