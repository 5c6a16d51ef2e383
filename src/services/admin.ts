/**
 * Operator actions behind the `ordergate` CLI (and the tests' fixtures): users, API keys and the OFS
 * registry. Each works directly on the database; no server needs to run.
 */
import type { ApiKeyInfo } from '../domain/user.js';
import { newApiKey, newTotpSecret, OWASP_PASSWORD_HASHER, verifyPassword, type PasswordHasher } from '../auth/credentials.js';
import { rupeesToPaise, type OfsIssue } from '../domain/ofs-issue.js';
import { OfsIssueImportFile, type OfsIssueImport } from '../schemas/ofs-issue.js';
import { compileChecker, createAjv } from '../schemas/validator.js';
import type { OfsIssueRepository } from '../store/ofs-issues.js';
import type { BidderCategory } from '../domain/ofs-rules.js';
import { USER_CATEGORIES, userCategoryOf, type MarginType, type UserCategory } from '../domain/ofs-offer.js';
import type { UserRepository } from '../store/users.js';

export class AdminError extends Error {
  override name = 'AdminError';
}

export interface NewUser {
  userId: string;
  /** The TOTP secret (base32), when the user was enrolled in TOTP. */
  totpSecret: string | null;
  /** Whether adding this user disabled the demo user (its password is published). */
  demoDisabled: boolean;
}

/** `ordergate demo`'s user and its fixed, published password (README): never a real login. */
export const DEMO_USER_ID = 'demo';
export const DEMO_PASSWORD = 'ordergate-demo';

const USER_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

function checkPassword(password: string): void {
  if (password.length < 8 || password.length > 256) throw new AdminError('the password must have 8 to 256 characters');
}

/** Margin type T (0 % margin) is for institutions only: MF, IC and OTHS. */
function checkedMarginType(category: string, marginType: MarginType): MarginType {
  if (marginType === 'T' && !['MF', 'IC', 'OTHS'].includes(category)) {
    throw new AdminError(`margin type T (0 % margin) is for MF, IC and OTHS users only; a ${category} user bids with 100 % margin (H)`);
  }
  return marginType;
}

const checkImportFile = compileChecker(createAjv(), OfsIssueImportFile);

/** The import JSON -> issues in our units, or an AdminError naming the first problem. */
export function parseOfsIssues(json: unknown): OfsIssue[] {
  const violations = checkImportFile(json);
  if (violations.length > 0) {
    // Messages name their field already ("[0].scrip_token is required"); the file itself is "body" there.
    throw new AdminError(violations.map((v) => (v.field === '' ? v.message.replace(/^body\b/, 'the file') : v.message)).join('; '));
  }
  return (json as OfsIssueImport[]).map((raw, i) => {
    const paise = (rupees: number, field: string) => {
      const value = rupeesToPaise(rupees);
      if (value === null) throw new AdminError(`[${i}].${field}: ${rupees} is not a whole number of paise`);
      return value;
    };
    const tick = paise(raw.tick_size, 'tick_size');
    const floor = paise(raw.floor_price, 'floor_price');
    if (floor % tick !== 0) throw new AdminError(`[${i}].floor_price: ${raw.floor_price} is not a multiple of tick_size ${raw.tick_size}`);
    const cutoff = raw.retail_cutoff_price === null ? null : paise(raw.retail_cutoff_price, 'retail_cutoff_price');
    if (cutoff !== null && cutoff % tick !== 0) {
      throw new AdminError(`[${i}].retail_cutoff_price: ${raw.retail_cutoff_price} is not a multiple of tick_size ${raw.tick_size}`);
    }
    const instant = (value: string, field: string) => {
      const ms = Date.parse(value);
      if (Number.isNaN(ms)) throw new AdminError(`[${i}].${field}: "${value}" is not a date-time`);
      return ms;
    };
    const issue: OfsIssue = {
      exchange: raw.exchange as OfsIssue['exchange'],
      scripToken: raw.scrip_token,
      symbol: raw.symbol,
      series: raw.series,
      floorPricePaise: floor,
      tickSizePaise: tick,
      offerQuantity: raw.offer_quantity,
      retailReservePct: raw.retail_reserve_pct,
      retailCutoffPricePaise: cutoff,
      allocation: raw.allocation as OfsIssue['allocation'],
      nonRetailOpensAt: instant(raw.non_retail_opens_at, 'non_retail_opens_at'),
      nonRetailClosesAt: instant(raw.non_retail_closes_at, 'non_retail_closes_at'),
      retailOpensAt: instant(raw.retail_opens_at, 'retail_opens_at'),
      retailClosesAt: instant(raw.retail_closes_at, 'retail_closes_at'),
      settlementDelayMs: raw.settlement_delay_seconds === undefined ? null : raw.settlement_delay_seconds * 1000,
    };
    if (issue.nonRetailClosesAt <= issue.nonRetailOpensAt) throw new AdminError(`[${i}]: non_retail_closes_at must be after non_retail_opens_at`);
    if (issue.retailClosesAt <= issue.retailOpensAt) throw new AdminError(`[${i}]: retail_closes_at must be after retail_opens_at`);
    return issue;
  });
}

export class AdminService {
  constructor(
    private readonly users: UserRepository,
    private readonly issues: OfsIssueRepository,
    private readonly now: () => number = Date.now,
    /** The cost of new password hashes; OWASP's by default. */
    private readonly hasher: PasswordHasher = OWASP_PASSWORD_HASHER,
  ) {}

  /** Creates a user; fails, changing nothing, when the user id is taken. */
  async addUser(userId: string, password: string, options: { category?: UserCategory | BidderCategory; marginType?: MarginType; totp?: boolean } = {}): Promise<NewUser> {
    if (!USER_ID_PATTERN.test(userId)) throw new AdminError('user_id must be 1 to 64 letters, digits, dots, dashes or underscores');
    checkPassword(password);
    const totpSecret = options.totp ? newTotpSecret() : null;
    const created = await this.users.create({
      userId,
      passwordHash: await this.hasher.hash(password),
      category: options.category ?? 'RETAIL',
      marginType: checkedMarginType(options.category ?? 'RETAIL', options.marginType ?? 'H'),
      totpSecret,
      now: this.now(),
    });
    if (!created) throw new AdminError(`user ${userId} already exists`);
    return { userId, totpSecret, demoDisabled: userId !== DEMO_USER_ID && (await this.disableDemoLogin()) };
  }

  /**
   * A database with a real user is no demo any more: the demo user, while it still has the published
   * password, is disabled and its sessions end. True when it was.
   */
  private async disableDemoLogin(): Promise<boolean> {
    const demo = await this.users.find(DEMO_USER_ID);
    if (demo === undefined || demo.disabledAt !== null || !(await verifyPassword(DEMO_PASSWORD, demo.passwordHash))) return false;
    await this.disableUser(DEMO_USER_ID);
    return true;
  }

  /**
   * Sets the user's OFS category (RETAIL, NII, MF, IC, OTHS; NON_RETAIL is NII) and margin type (H, or T
   * for an MF, IC or OTHS user whose custodian confirms its bids). Bids already placed keep the category
   * they were placed under.
   */
  async setCategory(userId: string, category: string, marginType: MarginType = 'H'): Promise<UserCategory> {
    const stored = userCategoryOf(category);
    if (stored === undefined) throw new AdminError(`category must be one of ${[...USER_CATEGORIES, 'NON_RETAIL'].join(', ')}`);
    if (!(await this.users.setCategory(userId, stored, checkedMarginType(stored, marginType)))) throw new AdminError(`no user ${userId}`);
    return stored;
  }

  /** Ends every open session of the user at once, on every node; answers how many were open. */
  async revokeSessions(userId: string): Promise<number> {
    await this.existingUser(userId);
    return this.users.revokeUserSessions(userId, this.now());
  }

  /**
   * Disables the user: every later login answers 403 (once the password is checked), and every session
   * ends at once. Answers how many sessions were open.
   */
  async disableUser(userId: string): Promise<number> {
    const user = await this.existingUser(userId);
    const now = this.now();
    // Disabled first: a login that commits its session after this is refused, one before is revoked next.
    if (user.disabledAt === null) await this.users.setDisabled(userId, now);
    return this.users.revokeUserSessions(userId, now);
  }

  /** Lets a disabled user log in again (their old sessions stay revoked). */
  async enableUser(userId: string): Promise<void> {
    await this.existingUser(userId);
    await this.users.setDisabled(userId, null);
  }

  /** Sets a new password (hashed with today's cost) and ends every session; answers how many were open. */
  async resetPassword(userId: string, password: string): Promise<number> {
    checkPassword(password);
    await this.existingUser(userId);
    await this.users.setPasswordHash(userId, await this.hasher.hash(password));
    return this.users.revokeUserSessions(userId, this.now());
  }

  private async existingUser(userId: string) {
    const user = await this.users.find(userId);
    if (!user) throw new AdminError(`no user ${userId}`);
    return user;
  }

  /** A new API key for the user; the key is returned once and only its hash is kept. */
  async createApiKey(userId: string): Promise<{ keyId: string; apiKey: string }> {
    await this.existingUser(userId);
    const key = newApiKey();
    await this.users.addApiKey({ keyId: key.id, userId, keyHash: key.hash, now: this.now() });
    return { keyId: key.id, apiKey: key.secret };
  }

  async listApiKeys(userId: string): Promise<ApiKeyInfo[]> {
    await this.existingUser(userId);
    return this.users.listApiKeys(userId);
  }

  async revokeApiKey(keyId: string): Promise<void> {
    if (!(await this.users.revokeApiKey(keyId, this.now()))) throw new AdminError(`no active API key ${keyId}`);
  }

  /** Registers or updates the issues of an import file, all or none. */
  async importOfsIssues(json: unknown): Promise<OfsIssue[]> {
    const issues = parseOfsIssues(json);
    await this.issues.upsert(issues, this.now());
    return issues;
  }
}
