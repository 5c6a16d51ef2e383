/**
 * Schema migrations, written once with Kysely's schema builder for both dialects. They run at start-up
 * (server and every CLI command), the pending ones in one transaction on both dialects, so several processes
 * may start at once: PostgreSQL's advisory lock, SQLite's BEGIN IMMEDIATE (sqlite-driver.ts), make the
 * later ones wait and find the work done.
 * Never edit a released migration: add a new one.
 */
import { inspect } from 'node:util';
import { Kysely, Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { DialectName, Store } from '../sql/database.js';
import * as core from './migrations/0001-core.js';
import * as oms from './migrations/0002-oms.js';
import * as webhooks from './migrations/0003-webhooks.js';
import * as idempotency from './migrations/0004-idempotency.js';
import * as audit from './migrations/0005-audit.js';
import * as speed from './migrations/0006-speed.js';
import * as funds from './migrations/0007-funds.js';
import * as trades from './migrations/0008-trades.js';
import * as totpSteps from './migrations/0009-totp-steps.js';
import * as userAccess from './migrations/0010-user-access.js';
import * as auditRetention from './migrations/0011-audit-retention.js';
import * as operators from './migrations/0012-operators.js';
import * as offers from './migrations/0013-offers.js';
import * as offerBids from './migrations/0014-offer-bids.js';
import * as sessionEndings from './migrations/0015-session-endings.js';
import * as userEventIds from './migrations/0016-user-event-ids.js';
import * as apiKeyAddresses from './migrations/0017-api-key-addresses.js';
import * as algos from './migrations/0018-algos.js';
import * as tradingHolidays from './migrations/0019-trading-holidays.js';
import * as offerExchangeRules from './migrations/0020-offer-exchange-rules.js';
import * as secondFactorLockout from './migrations/0021-second-factor-lockout.js';
import * as bidBounds from './migrations/0022-bid-bounds.js';
import * as issueValueLimit from './migrations/0023-issue-value-limit.js';
import * as memberData from './migrations/0024-member-data.js';
import * as orderMemberData from './migrations/0025-order-member-data.js';
import * as exchangeSessions from './migrations/0026-exchange-sessions.js';
import * as exchangeStreamCursors from './migrations/0027-exchange-stream-cursors.js';
import * as exchangeReferences from './migrations/0028-exchange-references.js';
import * as reconciliations from './migrations/0029-reconciliations.js';
import * as exchangeListingTerms from './migrations/0030-exchange-listing-terms.js';

/** Every migration, one file each under ./migrations/, by the name Kysely records it under. */
function migrations(dialect: DialectName): Record<string, Migration> {
  return {
    '0001_core': { up: (db: Kysely<any>) => core.up(db, dialect) },
    '0002_oms': { up: (db: Kysely<any>) => oms.up(db, dialect) },
    '0003_webhooks': { up: (db: Kysely<any>) => webhooks.up(db, dialect) },
    '0004_idempotency': { up: (db: Kysely<any>) => idempotency.up(db, dialect) },
    '0005_audit': { up: (db: Kysely<any>) => audit.up(db, dialect) },
    '0006_speed': { up: (db: Kysely<any>) => speed.up(db, dialect) },
    '0007_funds': { up: (db: Kysely<any>) => funds.up(db, dialect) },
    '0008_trades': { up: (db: Kysely<any>) => trades.up(db, dialect) },
    '0009_totp_steps': { up: (db: Kysely<any>) => totpSteps.up(db, dialect) },
    '0010_user_access': { up: (db: Kysely<any>) => userAccess.up(db, dialect) },
    '0011_audit_retention': { up: (db: Kysely<any>) => auditRetention.up(db, dialect) },
    '0012_operators': { up: (db: Kysely<any>) => operators.up(db, dialect) },
    '0013_offers': { up: (db: Kysely<any>) => offers.up(db, dialect) },
    '0014_offer_bids': { up: (db: Kysely<any>) => offerBids.up(db, dialect) },
    '0015_session_endings': { up: (db: Kysely<any>) => sessionEndings.up(db, dialect) },
    '0016_user_event_ids': { up: (db: Kysely<any>) => userEventIds.up(db, dialect) },
    '0017_api_key_addresses': { up: (db: Kysely<any>) => apiKeyAddresses.up(db, dialect) },
    '0018_algos': { up: (db: Kysely<any>) => algos.up(db, dialect) },
    '0019_trading_holidays': { up: (db: Kysely<any>) => tradingHolidays.up(db, dialect) },
    '0020_offer_exchange_rules': { up: (db: Kysely<any>) => offerExchangeRules.up(db, dialect) },
    '0021_second_factor_lockout': { up: (db: Kysely<any>) => secondFactorLockout.up(db, dialect) },
    '0022_bid_bounds': { up: (db: Kysely<any>) => bidBounds.up(db) },
    '0023_issue_value_limit': { up: (db: Kysely<any>) => issueValueLimit.up(db) },
    '0024_member_data': { up: (db: Kysely<any>) => memberData.up(db) },
    '0025_order_member_data': { up: (db: Kysely<any>) => orderMemberData.up(db) },
    '0026_exchange_sessions': { up: (db: Kysely<any>) => exchangeSessions.up(db) },
    '0027_exchange_stream_cursors': { up: (db: Kysely<any>) => exchangeStreamCursors.up(db) },
    '0028_exchange_references': { up: (db: Kysely<any>) => exchangeReferences.up(db, dialect) },
    '0029_reconciliations': { up: (db: Kysely<any>) => reconciliations.up(db, dialect) },
    '0030_exchange_listing_terms': { up: (db: Kysely<any>) => exchangeListingTerms.up(db) },
  };
}

export class MigrationError extends Error {
  override name = 'MigrationError';
}

/** Brings the schema up to date; safe to call from several processes at once. */
export async function migrateToLatest(store: Store): Promise<void> {
  await migrate(store, (migrator) => migrator.migrateToLatest());
}

/** Brings the schema up to migration `name` (e.g. "0007_funds"), for tests of a later migration's data steps. */
export async function migrateTo(store: Store, name: string): Promise<void> {
  await migrate(store, (migrator) => migrator.migrateTo(name));
}

async function migrate(
  store: Store,
  run: (migrator: Migrator) => ReturnType<Migrator['migrateToLatest']>,
): Promise<void> {
  const provider: MigrationProvider = { getMigrations: async () => migrations(store.dialect) };
  const migrator = new Migrator({ db: store.db, provider });
  const { error, results } = await run(migrator);
  if (error) {
    const failed = results?.find((r) => r.status === 'Error')?.migrationName ?? 'unknown';
    throw new MigrationError(`migration ${failed} failed: ${error instanceof Error ? error.message : inspect(error)}`);
  }
}
