/**
 * Operator actions behind the `ordergate` CLI (and the tests' fixtures): users, API keys and the OFS
 * registry. Each works directly on the database; no server needs to run.
 */
import type { ApiKeyInfo } from '../domain/user.js';
import { hashPassword, newApiKey, newTotpSecret } from '../auth/credentials.js';
import { rupeesToPaise, type OfsIssue } from '../domain/ofs-issue.js';
import { OfsIssueImportFile, type OfsIssueImport } from '../schemas/ofs-issue.js';
import { compileChecker, createAjv } from '../schemas/validator.js';
import type { OfsIssueRepository } from '../store/ofs-issues.js';
import type { BidderCategory } from '../domain/ofs-rules.js';
import type { UserRepository } from '../store/users.js';

export class AdminError extends Error {
  override name = 'AdminError';
}

export interface NewUser {
  userId: string;
  /** The TOTP secret (base32), when the user was enrolled in TOTP. */
  totpSecret: string | null;
}

const USER_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

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
  ) {}

  /** Creates a user; fails, changing nothing, when the user id is taken. */
  async addUser(userId: string, password: string, options: { category?: BidderCategory; totp?: boolean } = {}): Promise<NewUser> {
    if (!USER_ID_PATTERN.test(userId)) throw new AdminError('user_id must be 1 to 64 letters, digits, dots, dashes or underscores');
    if (password.length < 8 || password.length > 256) throw new AdminError('the password must have 8 to 256 characters');
    const totpSecret = options.totp ? newTotpSecret() : null;
    const created = await this.users.create({
      userId,
      passwordHash: await hashPassword(password),
      category: options.category ?? 'RETAIL',
      totpSecret,
      now: this.now(),
    });
    if (!created) throw new AdminError(`user ${userId} already exists`);
    return { userId, totpSecret };
  }

  /** A new API key for the user; the key is returned once and only its hash is kept. */
  async createApiKey(userId: string): Promise<{ keyId: string; apiKey: string }> {
    if (!(await this.users.find(userId))) throw new AdminError(`no user ${userId}`);
    const key = newApiKey();
    await this.users.addApiKey({ keyId: key.id, userId, keyHash: key.hash, now: this.now() });
    return { keyId: key.id, apiKey: key.secret };
  }

  async listApiKeys(userId: string): Promise<ApiKeyInfo[]> {
    if (!(await this.users.find(userId))) throw new AdminError(`no user ${userId}`);
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
