/** Schema-builder pieces shared by the migrations of both dialects. */
import type { CreateTableBuilder, Kysely } from 'kysely';
import type { DialectName } from '../sql/database.js';

/** A new table whose first column is an auto-incrementing 64-bit key `id`: the one column type that differs. */
export function serialKeyTable(db: Kysely<any>, dialect: DialectName, table: string): CreateTableBuilder<string, 'id'> {
  return dialect === 'postgres'
    ? db.schema.createTable(table).addColumn('id', 'bigserial', (c) => c.primaryKey())
    : db.schema.createTable(table).addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement());
}
