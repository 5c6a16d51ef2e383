/** Users, their API keys and their sessions (access tokens). */
import DataLoader from 'dataloader';
import type { Kysely, Selectable } from 'kysely';
import { prepareQuery, type PreparedQuery } from './prepared.js';
import type { Database, UsersTable } from './tables.js';

export type UserRow = Selectable<UsersTable>;
export type UserCategory = 'RETAIL' | 'NON_RETAIL';

/** A session with its user's category. */
export interface SessionRow {
  user_id: string;
  expires_at: number;
  revoked_at: number | null;
  category: string;
}

/** A session looked up by token hash, with the owner of an API key (null: no key asked for, or none). */
export type SessionWithKeyOwner = SessionRow & { api_key_owner: string | null };

/** Marks the key rows among the session rows of readCredentials's one query (no category has this name). */
const KEY_ROW = '(api key)';

interface CredentialLookup {
  tokenHash: string;
  keyHash: string | null;
}

export class UserRepository {
  private readonly apiKeyOwnerQuery: PreparedQuery<{ keyHash: string }, { user_id: string }>;
  /**
   * Every authenticated request reads its session (and its API key's owner). The look-ups of the
   * requests that arrive together are read together, in one query each for sessions and keys: on
   * PostgreSQL a round trip per request cost more than the rest of order entry's reads.
   */
  private readonly credentials = new DataLoader<CredentialLookup, SessionWithKeyOwner | undefined>((lookups) => this.readCredentials(lookups), {
    cache: false,
    batchScheduleFn: (run) => setImmediate(run),
    maxBatchSize: 500,
  });

  /** `readDb` serves the per-request credential look-ups (see Store.readDb). */
  constructor(
    private readonly db: Kysely<Database>,
    private readonly readDb: Kysely<Database> = db,
  ) {
    this.apiKeyOwnerQuery = prepareQuery((p: { keyHash: string }) =>
      readDb.selectFrom('api_keys').select('user_id').where('key_hash', '=', p.keyHash).where('revoked_at', 'is', null),
    );
  }

  async find(userId: string): Promise<UserRow | undefined> {
    return this.db.selectFrom('users').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  /** Inserts a new user; answers false (and changes nothing) when the id is taken. */
  async create(user: { userId: string; passwordHash: string; category: UserCategory; totpSecret: string | null; now: number }): Promise<boolean> {
    const result = await this.db
      .insertInto('users')
      .values({
        user_id: user.userId,
        password_hash: user.passwordHash,
        category: user.category,
        totp_secret: user.totpSecret,
        created_at: user.now,
      })
      .onConflict((oc) => oc.column('user_id').doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async addApiKey(key: { keyId: string; userId: string; keyHash: string; now: number }): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({ key_id: key.keyId, user_id: key.userId, key_hash: key.keyHash, created_at: key.now, revoked_at: null })
      .execute();
  }

  /** The owner of an active (not revoked) API key. */
  async apiKeyOwner(keyHash: string): Promise<string | undefined> {
    const [row] = await this.apiKeyOwnerQuery.execute(this.readDb, { keyHash });
    return row?.user_id;
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

  async listApiKeys(userId: string): Promise<{ key_id: string; created_at: number; revoked_at: number | null }[]> {
    return this.db
      .selectFrom('api_keys')
      .select(['key_id', 'created_at', 'revoked_at'])
      .where('user_id', '=', userId)
      .orderBy('created_at')
      .execute();
  }

  async createSession(session: { tokenHash: string; userId: string; now: number; expiresAt: number }): Promise<void> {
    await this.db
      .insertInto('sessions')
      .values({
        token_hash: session.tokenHash,
        user_id: session.userId,
        created_at: session.now,
        expires_at: session.expiresAt,
        revoked_at: null,
      })
      .execute();
  }

  async findSession(tokenHash: string): Promise<SessionRow | undefined> {
    return this.credentials.load({ tokenHash, keyHash: null });
  }

  /** The session and the owner of the active API key `keyHash` (null if none). */
  async findSessionAndKeyOwner(tokenHash: string, keyHash: string): Promise<SessionWithKeyOwner | undefined> {
    return this.credentials.load({ tokenHash, keyHash });
  }

  private async readCredentials(lookups: readonly CredentialLookup[]): Promise<(SessionWithKeyOwner | undefined)[]> {
    const tokenHashes = [...new Set(lookups.map((lookup) => lookup.tokenHash))];
    const keyHashes = [...new Set(lookups.flatMap((lookup) => (lookup.keyHash === null ? [] : [lookup.keyHash])))];
    // Sessions and key owners in one query (one round trip): a row per session found, then per key found.
    let query = this.readDb
      .selectFrom('sessions')
      .innerJoin('users', 'users.user_id', 'sessions.user_id')
      .select(['sessions.token_hash as hash', 'sessions.user_id', 'sessions.expires_at', 'sessions.revoked_at', 'users.category'])
      .where('sessions.token_hash', 'in', tokenHashes);
    if (keyHashes.length > 0) {
      query = query.unionAll(
        this.readDb
          .selectFrom('api_keys')
          .select((eb) => ['key_hash as hash', 'user_id', eb.val(-1).as('expires_at'), eb.val(null).as('revoked_at'), eb.val(KEY_ROW).as('category')])
          .where('key_hash', 'in', keyHashes)
          .where('revoked_at', 'is', null),
      );
    }
    const rows = await query.execute();
    const sessions = rows.filter((row) => row.category !== KEY_ROW).map(({ hash, ...session }) => ({ token_hash: hash, ...session }));
    const keys = rows.filter((row) => row.category === KEY_ROW).map((row) => ({ key_hash: row.hash, user_id: row.user_id }));
    const sessionOf = new Map(sessions.map(({ token_hash, ...session }) => [token_hash, { ...session, expires_at: Number(session.expires_at), revoked_at: session.revoked_at === null ? null : Number(session.revoked_at) }]));
    const ownerOf = new Map(keys.map((key) => [key.key_hash, key.user_id]));
    return lookups.map((lookup) => {
      const session = sessionOf.get(lookup.tokenHash);
      return session && { ...session, api_key_owner: lookup.keyHash === null ? null : (ownerOf.get(lookup.keyHash) ?? null) };
    });
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
