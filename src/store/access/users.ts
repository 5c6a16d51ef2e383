/** Users, their API keys and their sessions (access tokens). */
import DataLoader from 'dataloader';
import { CompiledQuery, type Kysely, type Selectable } from 'kysely';
import { listParameter } from '../sql/bulk.js';
import type { DialectName } from '../sql/database.js';
import { prepareQuery, type PreparedQuery } from '../sql/prepared.js';
import { jsonArrayOf, jsonRowReader } from '../sql/sqlite-driver.js';
import { issueCategoryOf, userCategoryOf, type MarginType, type UserCategory } from '../../domain/ofs/offer/offer.js';
import type { BidderCategory } from '../../domain/ofs/rules.js';
import type { KeyAddresses } from '../../domain/access/static-ip.js';
import type { SecondFactorCount } from '../../domain/access/second-factor.js';
import type { ApiKeyInfo, Session, User } from '../../domain/access/user.js';
import type { ClientMember, ClientType, MemberData } from '../../domain/access/member-data.js';
import type { Database, UsersTable } from '../schema/tables.js';

type UserRow = Selectable<UsersTable>;

/** A user as login and the operator's commands see them: with whether the operator disabled them. */
export interface UserAccount extends User {
  /** When the operator disabled the user, or null. */
  disabledAt: number | null;
  /** Whether the user is an operator: may read every OFS issue's book of demand. */
  operator: boolean;
  /** The TOTP codes checked since the last login that passed, and the lock (src/domain/access/second-factor.ts). */
  secondFactorCount: SecondFactorCount;
  /** The most the user's 0 %-margin bids, live or allotted and not settled, may total (paise); null: none set, none taken. */
  zeroMarginLimitPaise: bigint | null;
  /** What the exchange needs of the client with its bids (docs/design/member-data.md). */
  member: MemberData;
}

/** One client of `ordergate users import-clients`, checked: the member data its line sets. */
export interface ClientRecord {
  userId: string;
  member: ClientMember;
}

/** What became of a client record: its user created (with no usable password) or updated, or unchanged, or refused (why). */
export type ClientOutcome = { outcome: 'created' | 'updated' | 'unchanged' } | { outcome: 'refused'; reason: string };

/** The member data of a user row. */
function memberOf(row: Pick<UserRow, 'ucc' | 'pan' | 'client_type' | 'custodian_code'>): MemberData {
  return {
    ucc: row.ucc,
    pan: row.pan,
    clientType: row.client_type as ClientType,
    custodianCode: row.custodian_code,
  };
}

const sameMember = (a: MemberData, b: MemberData) =>
  a.ucc === b.ucc && a.pan === b.pan && a.clientType === b.clientType && a.custodianCode === b.custodianCode;

const memberColumns = (member: Partial<MemberData>) => ({
  ...(member.ucc !== undefined && { ucc: member.ucc }),
  ...(member.pan !== undefined && { pan: member.pan }),
  ...(member.clientType !== undefined && { client_type: member.clientType }),
  ...(member.custodianCode !== undefined && { custodian_code: member.custodianCode }),
});

/** A lock or unlock of a user's second factor, as `ordergate users totp-log` prints it. */
export interface SecondFactorEvent {
  at: number;
  event: 'locked' | 'unlocked';
  actor: 'system' | 'operator';
  detail: string;
}

/** A session looked up by token hash, with the owner of an API key (null: no key asked for, or none). */
export interface SessionWithKeyOwner extends Session {
  apiKeyOwner: string | null;
  /** The key's registered addresses (none: none registered). */
  apiKeyAddresses: readonly string[];
}

/** One setting of a key's addresses (comma-separated, the primary first). */
export interface ApiKeyAddressChange {
  at: number;
  previous: string | null;
  addresses: string;
  override: boolean;
}

/** An active API key: its owner and its registered addresses. */
export interface ActiveApiKey {
  keyId: string;
  userId: string;
  addresses: KeyAddresses;
}

const addressesOf = (allowedIps: string | null, changedAt: number | string | null): KeyAddresses => ({
  addresses: allowedIps === null || allowedIps === '' ? [] : allowedIps.split(','),
  changedAt: changedAt === null ? null : Number(changedAt),
});

function secondFactorCountOf(
  row: Pick<UserRow, 'totp_failures' | 'totp_failed_at' | 'totp_locked_at'>,
): SecondFactorCount {
  return {
    failures: Number(row.totp_failures),
    lastFailureAt: row.totp_failed_at === null ? null : Number(row.totp_failed_at),
    lockedAt: row.totp_locked_at === null ? null : Number(row.totp_locked_at),
  };
}

function userFromRow(row: UserRow): UserAccount {
  return {
    userId: row.user_id,
    passwordHash: row.password_hash,
    category: issueCategoryOf(row.category),
    offerCategory: row.category as UserCategory,
    marginType: row.margin_type as MarginType,
    totpSecret: row.totp_secret,
    secondFactorExemptAt: row.second_factor_exempt_at === null ? null : Number(row.second_factor_exempt_at),
    createdAt: Number(row.created_at),
    disabledAt: row.disabled_at === null ? null : Number(row.disabled_at),
    operator: row.operator_since !== null,
    secondFactorCount: secondFactorCountOf(row),
    zeroMarginLimitPaise: row.zero_margin_limit_paise === null ? null : BigInt(row.zero_margin_limit_paise),
    member: memberOf(row),
  };
}

/** A row of the credentials query: a session (with its user's category) or an API key's owner. */
interface CredentialRow {
  kind: 'session' | 'key';
  hash: string;
  user_id: string;
  expires_at: number;
  revoked_at: number | null;
  category: string | null;
  disabled_at: number | null;
  allowed_ips: string | null;
  ucc: string | null;
  pan: string | null;
  client_type: string | null;
  custodian_code: string | null;
}

// A disabled user's sessions are revoked when the user is disabled; reading `disabled_at` with them keeps
// every token of the user refused even if a login committed its session in between.
/** CredentialRow's columns, and what each of the query's two selects answers for them. */
const CREDENTIAL_COLUMNS = [
  'kind',
  'hash',
  'user_id',
  'expires_at',
  'revoked_at',
  'category',
  'disabled_at',
  'allowed_ips',
  'ucc',
  'pan',
  'client_type',
  'custodian_code',
];
const SESSION_VALUES = [
  "'session'",
  's.token_hash',
  's.user_id',
  's.expires_at',
  's.revoked_at',
  'u.category',
  'u.disabled_at',
  'null',
  'u.ucc',
  'u.pan',
  'u.client_type',
  'u.custodian_code',
];
const KEY_VALUES = [
  "'key'",
  'key_hash',
  'user_id',
  'null',
  'null',
  'null',
  'null',
  'allowed_ips',
  'null',
  'null',
  'null',
  'null',
];

const credentialsSql = (tokens: string, keys: string, selectList: (values: readonly string[]) => string) => `
  select ${selectList(SESSION_VALUES)} from sessions s join users u on u.user_id = s.user_id where s.token_hash ${tokens}
  union all
  select ${selectList(KEY_VALUES)} from api_keys where key_hash ${keys} and revoked_at is null`;

/**
 * On SQLite each row is one JSON array of the values (`jsonArrayOf`), parsed into a CredentialRow
 * (`jsonRowReader`): better-sqlite3 on Node 20 sets a row's values one by one from C++, about 930
 * instructions each, and this query's two rows per bid (the session and the key) were 16 of them, the most
 * of any read (docs/design/performance-log.md, "The credentials' rows as JSON"). On PostgreSQL the columns,
 * named by the first select (a union's names are its first select's).
 */
const CREDENTIALS = {
  sqlite: credentialsSql(
    'in (select value from json_each(?))',
    'in (select value from json_each(?))',
    (values) => `${jsonArrayOf(values)} as row`,
  ),
  postgres: credentialsSql('= any($1::text[])', '= any($2::text[])', (values) =>
    values.map((value, i) => `${value} as ${CREDENTIAL_COLUMNS[i]}`).join(', '),
  ),
};
const credentialRowOfJson = jsonRowReader<CredentialRow>(CREDENTIAL_COLUMNS);

interface CredentialLookup {
  tokenHash: string;
  keyHash: string | null;
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

/** Thrown to roll back openSession's transaction when its session is refused: nothing is written. */
class NothingWritten extends Error {}

export class UserRepository {
  private readonly activeKeyQuery: PreparedQuery<
    { keyHash: string },
    { key_id: string; user_id: string; allowed_ips: string | null; ips_changed_at: number | null }
  >;
  /**
   * Every authenticated request reads its session (and its API key's owner). The look-ups of the
   * requests that arrive together are read together, in one query each for sessions and keys: on
   * PostgreSQL a round trip per request cost more than the rest of order entry's reads.
   */
  private readonly credentials = new DataLoader<CredentialLookup, SessionWithKeyOwner | undefined>(
    (lookups) => this.readCredentials(lookups),
    {
      cache: false,
      batchScheduleFn: (run) => setImmediate(run),
      maxBatchSize: 500,
    },
  );

  /** `credentialsDb` serves the per-request credential look-ups and the revocations (see Store.credentialsDb). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: DialectName,
    private readonly credentialsDb: Kysely<Database> = db,
  ) {
    this.activeKeyQuery = prepareQuery((p: { keyHash: string }) =>
      credentialsDb
        .selectFrom('api_keys')
        .select(['key_id', 'user_id', 'allowed_ips', 'ips_changed_at'])
        .where('key_hash', '=', p.keyHash)
        .where('revoked_at', 'is', null),
    );
  }

  async find(userId: string): Promise<UserAccount | undefined> {
    const row = await this.db.selectFrom('users').selectAll().where('user_id', '=', userId).executeTakeFirst();
    return row && userFromRow(row);
  }

  async count(): Promise<number> {
    const row = await this.db
      .selectFrom('users')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Whether any user other than those of `userIds` exists. */
  async existsOtherThan(userIds: readonly string[]): Promise<boolean> {
    let query = this.db.selectFrom('users').select('user_id');
    if (userIds.length > 0) query = query.where('user_id', 'not in', userIds);
    const row = await query.limit(1).executeTakeFirst();
    return row !== undefined;
  }

  /** Disables (`disabledAt` an instant) or enables (null) a user; false when there is no such user. */
  async setDisabled(userId: string, disabledAt: number | null): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ disabled_at: disabledAt })
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Makes the user an operator (`since` the instant, kept while they stay one) or not (null); false when
   * there is no such user.
   */
  /** Sets the user's OFS category and margin type; false when there is no such user. */
  async setCategory(userId: string, category: UserCategory, marginType: MarginType): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ category, margin_type: marginType })
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async setOperator(userId: string, since: number | null): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      // An operator made one again keeps the instant they first became one.
      .set((eb) => ({ operator_since: since === null ? null : eb.fn.coalesce('operator_since', eb.val(since)) }))
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Replaces the user's password hash; with `ifCurrent`, only while the stored hash is still that one (a
   * login re-hashing with the new cost must not undo a password reset made meanwhile). False: nothing changed.
   */
  async setPasswordHash(userId: string, passwordHash: string, ifCurrent?: string): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ password_hash: passwordHash })
      .where('user_id', '=', userId)
      .$if(ifCurrent !== undefined, (qb) => qb.where('password_hash', '=', ifCurrent!))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Inserts a new user; answers false (and changes nothing) when the id is taken. */
  async create(user: {
    userId: string;
    passwordHash: string;
    category: UserCategory | BidderCategory;
    marginType?: MarginType;
    totpSecret: string | null;
    now: number;
    /** Its member data, checked (its UCC no other user's); none recorded when absent. */
    member?: Partial<MemberData>;
  }): Promise<boolean> {
    const category = userCategoryOf(user.category);
    if (category === undefined) throw new RangeError(`unknown user category ${user.category}`);
    const result = await this.db
      .insertInto('users')
      .values({
        user_id: user.userId,
        password_hash: user.passwordHash,
        category,
        margin_type: user.marginType ?? 'H',
        totp_secret: user.totpSecret,
        created_at: user.now,
        ...memberColumns(user.member ?? {}),
      })
      .onConflict((oc) => oc.column('user_id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /**
   * Enrols the user in TOTP with `secret`, replacing the one they had: the old secret's codes stop working
   * at once, and no code of the new one is spent yet. False when there is no such user.
   */
  async setTotpSecret(userId: string, secret: string, now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      // A new secret is the operator's act: it clears the count of wrong codes and any lock, recorded.
      const user = await trx
        .selectFrom('users')
        .select(['totp_failures', 'totp_locked_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (user === undefined) return false;
      await trx
        .updateTable('users')
        .set({
          totp_secret: secret,
          totp_last_step: null,
          totp_failures: 0,
          totp_failed_at: null,
          totp_locked_at: null,
        })
        .where('user_id', '=', userId)
        .execute();
      if (user.totp_locked_at !== null) {
        const detail = `a new TOTP secret (ordergate users totp) after ${Number(user.totp_failures)} codes checked in a row`;
        await this.addSecondFactorEvent(trx, userId, now, { event: 'unlocked', actor: 'operator', detail });
      }
      return true;
    });
  }

  /**
   * Counts one TOTP check of the user before its code is compared, if the count is still `seen` and the
   * second factor is not locked: one conditional UPDATE, so that of checks arriving together each is
   * counted, and those that read the same count are all but one refused (they retry). False: not counted.
   */
  async countTotpCheck(userId: string, seen: number, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ totp_failures: seen + 1, totp_failed_at: now })
      .where('user_id', '=', userId)
      .where('totp_failures', '=', seen)
      .where('totp_locked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** The user's count of TOTP checks and its lock, read alone; undefined when there is no such user. */
  async secondFactorCount(userId: string): Promise<SecondFactorCount | undefined> {
    const row = await this.db
      .selectFrom('users')
      .select(['totp_failures', 'totp_failed_at', 'totp_locked_at'])
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row === undefined ? undefined : secondFactorCountOf(row);
  }

  /**
   * A right TOTP code of `step`, not spent yet, starts the count of codes checked again (one conditional
   * UPDATE: a replayed code, of a step already spent, leaves it; a lock stands).
   */
  async clearTotpCount(userId: string, step: number): Promise<void> {
    await this.db
      .updateTable('users')
      .set({ totp_failures: 0, totp_failed_at: null })
      .where('user_id', '=', userId)
      .where('totp_locked_at', 'is', null)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .execute();
  }

  /** Locks the user's second factor at `now` and records why (nothing when it is locked already). */
  async lockSecondFactor(userId: string, now: number, detail: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('users')
        .set({ totp_locked_at: now })
        .where('user_id', '=', userId)
        .where('totp_locked_at', 'is', null)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await this.addSecondFactorEvent(trx, userId, now, { event: 'locked', actor: 'system', detail });
      return true;
    });
  }

  /**
   * The operator's unlock: clears the count of wrong codes and the lock, recorded with how many codes were
   * counted. Answers the count cleared and whether the user was locked; undefined when there is no such user.
   */
  async unlockSecondFactor(userId: string, now: number): Promise<{ failures: number; wasLocked: boolean } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const user = await trx
        .selectFrom('users')
        .select(['totp_failures', 'totp_locked_at'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (user === undefined) return undefined;
      const failures = Number(user.totp_failures);
      const wasLocked = user.totp_locked_at !== null;
      await trx
        .updateTable('users')
        .set({ totp_failures: 0, totp_failed_at: null, totp_locked_at: null })
        .where('user_id', '=', userId)
        .execute();
      const detail = `ordergate users totp-unlock, ${wasLocked ? 'locked' : 'not locked'}, after ${failures} codes checked in a row`;
      await this.addSecondFactorEvent(trx, userId, now, { event: 'unlocked', actor: 'operator', detail });
      return { failures, wasLocked };
    });
  }

  /** The user's second-factor locks and unlocks, oldest first. */
  async secondFactorEvents(userId: string): Promise<SecondFactorEvent[]> {
    const rows = await this.db
      .selectFrom('second_factor_events')
      .selectAll()
      .where('user_id', '=', userId)
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      at: Number(row.at),
      event: row.event as SecondFactorEvent['event'],
      actor: row.actor as SecondFactorEvent['actor'],
      detail: row.detail,
    }));
  }

  private async addSecondFactorEvent(
    trx: Kysely<Database>,
    userId: string,
    at: number,
    event: Omit<SecondFactorEvent, 'at'>,
  ): Promise<void> {
    await trx
      .insertInto('second_factor_events')
      .values({ user_id: userId, at, ...event })
      .execute();
  }

  /** Sets the most the user's live 0 %-margin bids may total (paise; null: none). False when there is no such user. */
  async setZeroMarginLimit(userId: string, limitPaise: bigint | null): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ zero_margin_limit_paise: limitPaise === null ? null : limitPaise.toString() })
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Sets the given fields of the user's member data. 'no-user': there is no such user; a UCC another user
   * holds: that user's id (nothing changed). Read and written in one transaction; the unique index on the
   * UCC refuses what a concurrent change would slip in.
   */
  async setMemberData(
    userId: string,
    change: Partial<MemberData>,
  ): Promise<MemberData | 'no-user' | { uccOf: string }> {
    return this.db.transaction().execute(async (trx) => {
      if (change.ucc !== undefined && change.ucc !== null) {
        const holder = await trx
          .selectFrom('users')
          .select('user_id')
          .where('ucc', '=', change.ucc)
          .where('user_id', '!=', userId)
          .executeTakeFirst();
        if (holder !== undefined) return { uccOf: holder.user_id };
      }
      const columns = memberColumns(change);
      if (Object.keys(columns).length > 0) {
        const result = await trx.updateTable('users').set(columns).where('user_id', '=', userId).executeTakeFirst();
        if (Number(result.numUpdatedRows) !== 1) return 'no-user' as const;
      }
      const row = await trx
        .selectFrom('users')
        .select(['ucc', 'pan', 'client_type', 'custodian_code'])
        .where('user_id', '=', userId)
        .executeTakeFirst();
      return row === undefined ? ('no-user' as const) : memberOf(row);
    });
  }

  /**
   * Applies client records of an import together, in one transaction: each existing user's member data is
   * replaced by its record's, each new user is created (category RETAIL, margin H) with `passwordHash`,
   * which no password matches. A record whose UCC another user holds, in the database or earlier in this
   * batch, is refused. The records' user ids are distinct (the caller sees to it). One outcome per record.
   */
  async importClients(records: readonly ClientRecord[], passwordHash: string, now: number): Promise<ClientOutcome[]> {
    if (records.length === 0) return [];
    return this.db.transaction().execute(async (trx) => {
      const ids = records.map((record) => record.userId);
      const uccs = [...new Set(records.flatMap((record) => (record.member.ucc === null ? [] : [record.member.ucc])))];
      const existing = new Map<string, MemberData>();
      const uccHolder = new Map<string, string>();
      for (const chunk of chunks(ids, 500)) {
        const rows = await trx
          .selectFrom('users')
          .select(['user_id', 'ucc', 'pan', 'client_type', 'custodian_code'])
          .where('user_id', 'in', chunk)
          .execute();
        for (const row of rows) {
          existing.set(row.user_id, memberOf(row));
          if (row.ucc !== null) uccHolder.set(row.ucc, row.user_id);
        }
      }
      for (const chunk of chunks(uccs, 500)) {
        const rows = await trx.selectFrom('users').select(['user_id', 'ucc']).where('ucc', 'in', chunk).execute();
        for (const row of rows) uccHolder.set(row.ucc!, row.user_id);
      }
      // The UCCs the batch frees (their users take another) are free for the records after them.
      for (const record of records) {
        const before = existing.get(record.userId);
        if (before?.ucc != null && before.ucc !== record.member.ucc && uccHolder.get(before.ucc) === record.userId)
          uccHolder.delete(before.ucc);
      }
      const outcomes: ClientOutcome[] = [];
      const inserts: ClientRecord[] = [];
      const updates: ClientRecord[] = [];
      for (const record of records) {
        const { ucc } = record.member;
        const holder = ucc === null ? undefined : uccHolder.get(ucc);
        if (ucc !== null && holder !== undefined && holder !== record.userId) {
          outcomes.push({ outcome: 'refused', reason: `ucc ${ucc} is user ${holder}'s` });
          continue;
        }
        if (ucc !== null) uccHolder.set(ucc, record.userId);
        const before = existing.get(record.userId);
        if (before === undefined) {
          inserts.push(record);
          outcomes.push({ outcome: 'created' });
        } else if (sameMember(before, { ...before, ...record.member })) {
          outcomes.push({ outcome: 'unchanged' });
        } else {
          updates.push(record);
          outcomes.push({ outcome: 'updated' });
        }
      }
      // Users changing UCCs among themselves: each frees its old one first, so the unique index holds at every statement.
      const renamed = updates.filter((record) => existing.get(record.userId)!.ucc !== record.member.ucc);
      for (const chunk of chunks(
        renamed.map((record) => record.userId),
        500,
      ))
        await trx.updateTable('users').set({ ucc: null }).where('user_id', 'in', chunk).execute();
      for (const record of updates)
        await trx.updateTable('users').set(memberColumns(record.member)).where('user_id', '=', record.userId).execute();
      for (const chunk of chunks(inserts, 200)) {
        await trx
          .insertInto('users')
          .values(
            chunk.map((record) => ({
              user_id: record.userId,
              password_hash: passwordHash,
              category: 'RETAIL',
              margin_type: 'H',
              totp_secret: null,
              created_at: now,
              ...memberColumns(record.member),
            })),
          )
          .execute();
      }
      return outcomes;
    });
  }

  /**
   * Exempts the user from the second factor at login (`since` the instant; a user exempted again keeps the
   * instant of their exemption) or ends the exemption (null). False when there is no such user.
   */
  async setSecondFactorExempt(userId: string, since: number | null): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set((eb) => ({
        second_factor_exempt_at: since === null ? null : eb.fn.coalesce('second_factor_exempt_at', eb.val(since)),
      }))
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /**
   * Records `step` as the user's last accepted TOTP step if it is later than the one recorded; false when
   * it is not (a code of that step, or an earlier one, was accepted already). One conditional UPDATE, so
   * that of two logins presenting the same code at once only one passes.
   */
  async acceptTotpStep(userId: string, step: number): Promise<boolean> {
    const result = await this.db
      .updateTable('users')
      .set({ totp_last_step: step })
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** A new key; with addresses (canonical), they are registered at once, and the setting recorded. */
  async addApiKey(key: {
    keyId: string;
    userId: string;
    keyHash: string;
    now: number;
    addresses?: readonly string[];
  }): Promise<void> {
    const allowedIps = key.addresses === undefined || key.addresses.length === 0 ? null : key.addresses.join(',');
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('api_keys')
        .values({
          key_id: key.keyId,
          user_id: key.userId,
          key_hash: key.keyHash,
          created_at: key.now,
          revoked_at: null,
          allowed_ips: allowedIps,
          ips_changed_at: allowedIps === null ? null : key.now,
        })
        .execute();
      if (allowedIps !== null) {
        await trx
          .insertInto('api_key_address_changes')
          .values({ key_id: key.keyId, at: key.now, previous_ips: null, allowed_ips: allowedIps, override: 0 })
          .execute();
      }
    });
  }

  /** The owner of an active (not revoked) API key. */
  async apiKeyOwner(keyHash: string): Promise<string | undefined> {
    return (await this.activeApiKey(keyHash))?.userId;
  }

  /** An active (not revoked) API key, by its hash. */
  async activeApiKey(keyHash: string): Promise<ActiveApiKey | undefined> {
    const [row] = await this.activeKeyQuery.execute(this.credentialsDb, { keyHash });
    return (
      row && { keyId: row.key_id, userId: row.user_id, addresses: addressesOf(row.allowed_ips, row.ips_changed_at) }
    );
  }

  /** A key's registered addresses, by its id (undefined: no such key, or revoked). */
  async apiKeyAddresses(keyId: string): Promise<KeyAddresses | undefined> {
    const row = await this.db
      .selectFrom('api_keys')
      .select(['allowed_ips', 'ips_changed_at'])
      .where('key_id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row && addressesOf(row.allowed_ips, row.ips_changed_at);
  }

  async apiKeyAddressChanges(keyId: string): Promise<ApiKeyAddressChange[]> {
    const rows = await this.db
      .selectFrom('api_key_address_changes')
      .selectAll()
      .where('key_id', '=', keyId)
      .orderBy('id')
      .execute();
    return rows.map((row) => ({
      at: Number(row.at),
      previous: row.previous_ips,
      addresses: row.allowed_ips,
      override: Number(row.override) === 1,
    }));
  }

  /**
   * Sets a key's addresses, if they are still as `previous` says (false: another change came first), and
   * records the setting with whether the operator overrode the once-a-week rule.
   */
  async setApiKeyAddresses(
    keyId: string,
    previous: KeyAddresses,
    addresses: readonly string[],
    now: number,
    override: boolean,
  ): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('api_keys')
        .set({ allowed_ips: addresses.join(','), ips_changed_at: now })
        .where('key_id', '=', keyId)
        .where('revoked_at', 'is', null)
        .where((eb) =>
          previous.changedAt === null
            ? eb('ips_changed_at', 'is', null)
            : eb('ips_changed_at', '=', previous.changedAt),
        )
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) !== 1) return false;
      await trx
        .insertInto('api_key_address_changes')
        .values({
          key_id: keyId,
          at: now,
          previous_ips: previous.addresses.length === 0 ? null : previous.addresses.join(','),
          allowed_ips: addresses.join(','),
          override: override ? 1 : 0,
        })
        .execute();
      return true;
    });
  }

  async revokeApiKey(keyId: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('api_keys')
      .set({ revoked_at: now })
      .where('key_id', '=', keyId)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async listApiKeys(userId: string): Promise<ApiKeyInfo[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .select(['key_id', 'created_at', 'revoked_at', 'allowed_ips', 'ips_changed_at'])
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute();
    return rows.map((row) => ({
      keyId: row.key_id,
      createdAt: Number(row.created_at),
      revokedAt: row.revoked_at === null ? null : Number(row.revoked_at),
      ...addressesOf(row.allowed_ips, row.ips_changed_at),
    }));
  }

  /**
   * Opens a session, only while the user is enabled and, for a login, still has the `passwordHash` it checked: a `users disable` or `users reset-password` that ran during the login (and revoked the
   * sessions it saw) leaves no session behind. On PostgreSQL the user's row is read FOR SHARE, so such a
   * change waits for this insert to commit and then revokes it; SQLite runs one writer at a time. False:
   * no session was opened.
   */
  async createSession(
    session: { tokenHash: string; userId: string; passwordHash?: string; now: number; expiresAt: number },
    db: Kysely<Database> = this.db,
  ): Promise<boolean> {
    const result = await db
      .insertInto('sessions')
      .columns(['token_hash', 'user_id', 'created_at', 'expires_at', 'revoked_at'])
      .expression((eb) =>
        eb
          .selectFrom('users')
          .select([
            eb.val(session.tokenHash).as('token_hash'),
            'user_id',
            eb.val(session.now).as('created_at'),
            eb.val(session.expiresAt).as('expires_at'),
            eb.val(null).as('revoked_at'),
          ])
          .where('user_id', '=', session.userId)
          .where('disabled_at', 'is', null)
          .$if(session.passwordHash !== undefined, (qb) => qb.where('password_hash', '=', session.passwordHash!))
          .$if(this.dialect === 'postgres', (qb) => qb.forShare()),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  /**
   * A login's last two writes as one transaction: spends the TOTP `step` (when given; see acceptTotpStep)
   * and opens the session (see createSession). Either both happen or neither: a login whose session could
   * not be written (the database failed) leaves its code unspent, so that its retry is not refused as a
   * replay. 'totp-used': the code was spent already, nothing written; 'refused': no session (the user was
   * disabled or the password changed meanwhile), nothing written.
   */
  async openSession(
    session: { tokenHash: string; userId: string; passwordHash?: string; now: number; expiresAt: number },
    totpStep: number | null,
  ): Promise<'opened' | 'totp-used' | 'refused'> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        if (totpStep !== null) {
          const spent = await trx
            .updateTable('users')
            .set({ totp_last_step: totpStep })
            .where('user_id', '=', session.userId)
            .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', totpStep)]))
            .executeTakeFirst();
          if (Number(spent.numUpdatedRows) !== 1) return 'totp-used' as const;
          // The login passed its code: the count of codes checked in a row starts again.
          await trx
            .updateTable('users')
            .set({ totp_failures: 0, totp_failed_at: null })
            .where('user_id', '=', session.userId)
            .execute();
        }
        if (!(await this.createSession(session, trx))) throw new NothingWritten();
        return 'opened' as const;
      });
    } catch (error) {
      if (error instanceof NothingWritten) return 'refused';
      throw error;
    }
  }

  /** Revokes every open session of the user at `now`; answers how many were open. */
  async revokeUserSessions(userId: string, now: number): Promise<number> {
    const result = await this.db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('user_id', '=', userId)
      .where('revoked_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  async findSession(tokenHash: string): Promise<Session | undefined> {
    return this.credentials.load({ tokenHash, keyHash: null });
  }

  /** The session and the owner of the active API key `keyHash` (null if none). */
  async findSessionAndKeyOwner(tokenHash: string, keyHash: string): Promise<SessionWithKeyOwner | undefined> {
    return this.credentials.load({ tokenHash, keyHash });
  }

  private async readCredentials(lookups: readonly CredentialLookup[]): Promise<(SessionWithKeyOwner | undefined)[]> {
    const tokenHashes = [...new Set(lookups.map((lookup) => lookup.tokenHash))];
    const keyHashes = [...new Set(lookups.flatMap((lookup) => (lookup.keyHash === null ? [] : [lookup.keyHash])))];
    // Sessions and key owners in one query (one round trip), one SQL text whatever the number of look-ups.
    const result = await this.credentialsDb.executeQuery<CredentialRow | { row: string }>(
      CompiledQuery.raw(CREDENTIALS[this.dialect], [
        listParameter(this.dialect, tokenHashes),
        listParameter(this.dialect, keyHashes),
      ]),
    );
    const rows =
      this.dialect === 'sqlite'
        ? (result.rows as { row: string }[]).map(({ row }) => credentialRowOfJson(row))
        : (result.rows as CredentialRow[]);
    const sessionOf = new Map<string, Session>();
    const keyOf = new Map<string, { owner: string; addresses: readonly string[] }>();
    for (const row of rows) {
      if (row.kind === 'key')
        keyOf.set(row.hash, { owner: row.user_id, addresses: addressesOf(row.allowed_ips, null).addresses });
      else {
        sessionOf.set(row.hash, {
          userId: row.user_id,
          category: issueCategoryOf(row.category!),
          member: {
            ucc: row.ucc,
            pan: row.pan,
            clientType: row.client_type as ClientType,
            custodianCode: row.custodian_code,
            category: userCategoryOf(row.category!) ?? 'RETAIL',
          },
          expiresAt: Number(row.expires_at),
          // A disabled user's session counts as revoked when the user was disabled.
          revokedAt:
            row.revoked_at !== null
              ? Number(row.revoked_at)
              : row.disabled_at !== null
                ? Number(row.disabled_at)
                : null,
        });
      }
    }
    return lookups.map((lookup) => {
      const session = sessionOf.get(lookup.tokenHash);
      const key = lookup.keyHash === null ? undefined : keyOf.get(lookup.keyHash);
      if (session === undefined) return undefined;
      // Written out, not spread: a spread followed by more keys takes V8's slow path (docs/design/performance-log.md).
      const { userId, category, member, expiresAt, revokedAt } = session;
      return {
        userId,
        category,
        member,
        expiresAt,
        revokedAt,
        apiKeyOwner: key?.owner ?? null,
        apiKeyAddresses: key?.addresses ?? [],
      };
    });
  }

  /**
   * The sessions revoked (a logout, `users revoke-sessions`) and the users disabled at or after `since`:
   * what ends open event streams and order sockets (issue 21 row 3). Read on the credentials' connection.
   */
  async endedSince(
    since: number,
  ): Promise<{ revoked: { tokenHash: string; userId: string }[]; disabledUsers: string[] }> {
    const revoked = await this.credentialsDb
      .selectFrom('sessions')
      .select(['token_hash', 'user_id'])
      .where('revoked_at', '>=', since)
      .execute();
    const disabled = await this.credentialsDb
      .selectFrom('users')
      .select('user_id')
      .where('disabled_at', '>=', since)
      .execute();
    return {
      revoked: revoked.map((row) => ({ tokenHash: row.token_hash, userId: row.user_id })),
      disabledUsers: disabled.map((row) => row.user_id),
    };
  }

  async revokeSession(tokenHash: string, now: number): Promise<void> {
    await this.db
      .updateTable('sessions')
      .set({ revoked_at: now })
      .where('token_hash', '=', tokenHash)
      .where('revoked_at', 'is', null)
      .execute();
  }
}
