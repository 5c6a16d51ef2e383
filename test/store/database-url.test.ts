/** DATABASE_URL as the store reads it (src/store/sql/database.ts, parseDatabaseUrl). */
import { describe, expect, it } from 'vitest';
import { DatabaseUrlError, parseDatabaseUrl } from '../../src/store/sql/database.js';

describe('DATABASE_URL', () => {
  it('names SQLite by a path, PostgreSQL by a URL', () => {
    expect(parseDatabaseUrl('sqlite:./data/ordergate.db')).toEqual({
      dialect: 'sqlite',
      target: './data/ordergate.db',
    });
    expect(parseDatabaseUrl('postgres://ordergate@127.0.0.1:5000/ordergate')).toEqual({
      dialect: 'postgres',
      target: 'postgres://ordergate@127.0.0.1:5000/ordergate',
    });
  });

  it('refuses a libpq-style host list, which node-postgres would misread: HAProxy goes in front (docs/deployment.md)', () => {
    expect(() => parseDatabaseUrl('postgres://u@db1:5432,db2:5432/ordergate?target_session_attrs=read-write')).toThrow(
      DatabaseUrlError,
    );
    expect(() => parseDatabaseUrl('postgresql://u@db1,db2/ordergate')).toThrow(/several hosts.*HAProxy/);
    // A comma after the host (in the query) is no host list.
    expect(parseDatabaseUrl('postgres://u@db1/ordergate?options=a,b').dialect).toBe('postgres');
  });
});
