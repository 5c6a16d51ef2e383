/** Migration 0005-audit: the tables of the audit trail. */
import type { Kysely } from 'kysely';
import type { DialectName } from '../database.js';

export async function up(_db: Kysely<any>, _dialect: DialectName): Promise<void> {}
