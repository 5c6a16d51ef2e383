/**
 * Migration 0011-audit-retention (docs/design/audit.md, "Retention and archive"):
 *
 * - `audit_requests` gains what a cut path or body was (`path_bytes`, `path_sha256`, `body_bytes`,
 *   `body_sha256`: null when the value is stored whole);
 * - `audit_archives`, append-only like the trail: one row per `ordergate audit archive`, naming the rows
 *   it removed (those that arrived before `before_at`, up to id `last_id`) and the file's SHA-256;
 * - the one sanctioned deletion: `audit_requests` still refuses every UPDATE (and TRUNCATE on PostgreSQL),
 *   and refuses a DELETE unless an archive row covers the deleted row. The archive command writes that
 *   archive row and deletes in one transaction, with new inserts held off, so a covered row is one in the
 *   file, and once it commits no row left in the table is covered.
 */
import { sql, type Kysely } from 'kysely';
import type { DialectName } from '../../sql/database.js';
import { serialKeyTable } from '../migration-helpers.js';

const REFUSED_DELETE =
  'audit_requests is append-only: delete refused (only rows archived by ordergate audit archive may be removed)';

export async function up(db: Kysely<any>, dialect: DialectName): Promise<void> {
  await db.schema.alterTable('audit_requests').addColumn('path_bytes', 'bigint').execute();
  await db.schema.alterTable('audit_requests').addColumn('path_sha256', 'text').execute();
  await db.schema.alterTable('audit_requests').addColumn('body_bytes', 'bigint').execute();
  await db.schema.alterTable('audit_requests').addColumn('body_sha256', 'text').execute();

  await serialKeyTable(db, dialect, 'audit_archives')
    .addColumn('archived_at', 'bigint', (c) => c.notNull())
    .addColumn('before_at', 'bigint', (c) => c.notNull())
    .addColumn('row_count', 'bigint', (c) => c.notNull())
    .addColumn('first_id', 'bigint', (c) => c.notNull())
    .addColumn('last_id', 'bigint', (c) => c.notNull())
    .addColumn('sha256', 'text', (c) => c.notNull().unique())
    .addColumn('file', 'text', (c) => c.notNull())
    .execute();

  if (dialect === 'postgres') {
    // 0005's row trigger refused UPDATE and DELETE together: split, so that DELETE may pass archived rows.
    await sql`drop trigger audit_requests_append_only on audit_requests`.execute(db);
    await sql`create trigger audit_requests_no_update before update on audit_requests
      for each row execute function ordergate_refuse_change()`.execute(db);
    await sql`
      create function ordergate_delete_archived_only() returns trigger language plpgsql as $$
      begin
        if exists (select 1 from audit_archives a where old.at < a.before_at and old.id <= a.last_id) then
          return old;
        end if;
        raise exception ${sql.lit(REFUSED_DELETE)} using errcode = 'insufficient_privilege';
      end
      $$`.execute(db);
    await sql`create trigger audit_requests_no_delete before delete on audit_requests
      for each row execute function ordergate_delete_archived_only()`.execute(db);
    await sql`create trigger audit_archives_append_only before update or delete on audit_archives
      for each row execute function ordergate_refuse_change()`.execute(db);
    await sql`create trigger audit_archives_no_truncate before truncate on audit_archives
      for each statement execute function ordergate_refuse_change()`.execute(db);
  } else {
    await sql`drop trigger audit_requests_no_delete`.execute(db);
    await sql`create trigger audit_requests_no_delete before delete on audit_requests
      when not exists (select 1 from audit_archives a where old.at < a.before_at and old.id <= a.last_id)
      begin select raise(abort, ${sql.lit(REFUSED_DELETE)}); end`.execute(db);
    for (const operation of ['update', 'delete'] as const) {
      await sql`create trigger ${sql.id(`audit_archives_no_${operation}`)} before ${sql.raw(operation)} on audit_archives
        begin select raise(abort, ${sql.lit(`audit_archives is append-only: ${operation} refused`)}); end`.execute(db);
    }
  }
}
