/**
 * Operator actions behind the `ordergate` CLI (and the tests' fixtures): users, API keys and the OFS
 * registry. Each works directly on the database; no server needs to run.
 */
import { parseRupeeAmount } from '../domain/funds/funds.js';
import { canonicalAddress } from '../domain/access/ip-address.js';
import { addressChangeRefusal, keyAddressesProblem } from '../domain/access/static-ip.js';
import { secondFactorState, type SecondFactorCount, type SecondFactorState } from '../domain/access/second-factor.js';
import type { ApiKeyInfo } from '../domain/access/user.js';
import {
  newApiKey,
  newTotpSecret,
  OWASP_PASSWORD_HASHER,
  verifyPassword,
  type PasswordHasher,
} from '../auth/credentials.js';
import { rupeesToPaise, type OfsIssue } from '../domain/ofs/issue/issue.js';
import { OfsIssueImport as OfsIssueImportSchema, type OfsIssueImport } from '../schemas/ofs-issue.js';
import { OfsOfferImport as OfsOfferImportSchema, type OfsOfferImport } from '../schemas/ofs-offer.js';
import { compileChecker, createAjv } from '../schemas/validator.js';
import { OfferConflictError, type OfsOfferRepository } from '../store/ofs/offers.js';
import type { TradingHolidayRepository } from '../store/ofs/trading-holidays.js';
import { NO_HOLIDAYS } from '../domain/ofs/trading-calendar.js';
import { formatInstant, type BidderCategory } from '../domain/ofs/rules.js';
import {
  defaultGreenShoeDecisionBy,
  offerCalendarProblems,
  offerState,
  offerTermsProblems,
  printedPortionsProblems,
  USER_CATEGORIES,
  userCategoryOf,
  type Discount,
  type MarginType,
  type Offer,
  type PrintedPortions,
  type UserCategory,
} from '../domain/ofs/offer/offer.js';
import type { ApiKeyAddressChange, SecondFactorEvent, UserRepository } from '../store/access/users.js';

export class AdminError extends Error {
  override name = 'AdminError';
}

export interface NewUser {
  userId: string;
  /** The TOTP secret (base32), when the user was enrolled in TOTP. */
  totpSecret: string | null;
  /** The demo users adding this user disabled (their password is published), in DEMO_USER_IDS' order. */
  disabledDemoUsers: string[];
}

/** `ordergate demo`'s user and its fixed, published password (README): never a real login. */
export const DEMO_USER_ID = 'demo';
export const DEMO_PASSWORD = 'ordergate-demo';
/** `ordergate demo-offer`'s non-retail bidders (an NII and a mutual fund), with the same published password. */
export const DEMO_NII_USER_ID = 'demo-nii';
export const DEMO_MF_USER_ID = 'demo-mf';
/**
 * Every user the demos create, all with DEMO_PASSWORD: a demo refuses a database holding any other user,
 * and the first real user added disables them.
 */
export const DEMO_USER_IDS: readonly string[] = [DEMO_USER_ID, DEMO_NII_USER_ID, DEMO_MF_USER_ID];

const USER_ID_PATTERN = /^[A-Za-z0-9._-]{1,64}$/;

function checkPassword(password: string): void {
  if (password.length < 8 || password.length > 256) throw new AdminError('the password must have 8 to 256 characters');
}

/** Margin type T (0 % margin) is for institutions only: MF, IC and OTHS. */
function checkedMarginType(category: string, marginType: MarginType): MarginType {
  if (marginType === 'T' && !['MF', 'IC', 'OTHS'].includes(category)) {
    throw new AdminError(
      `margin type T (0 % margin) is for MF, IC and OTHS users only; a ${category} user bids with 100 % margin (H)`,
    );
  }
  return marginType;
}

/**
 * An import file that holds issues of the one-listing format only (the demo's, the tests'), in our units;
 * an AdminError names the first problem, or an offer in it (offers go through parseOfsImport).
 */
export function parseOfsIssues(json: unknown): OfsIssue[] {
  const { offers, issues } = parseOfsImport(json);
  if (offers.length > 0)
    throw new AdminError(`offer ${offers[0]!.offerId}: this import takes issues of the one-listing format only`);
  return issues;
}

/** One entry of the one-listing format, its schema checked, in our units; `i` is its place in the file. */
function toOfsIssue(raw: OfsIssueImport, i: number): OfsIssue {
  const paise = (rupees: number, field: string) => {
    const value = rupeesToPaise(rupees);
    if (value === null) throw new AdminError(`[${i}].${field}: ${rupees} is not a whole number of paise`);
    return value;
  };
  const tick = paise(raw.tick_size, 'tick_size');
  const floor = paise(raw.floor_price, 'floor_price');
  if (floor % tick !== 0)
    throw new AdminError(`[${i}].floor_price: ${raw.floor_price} is not a multiple of tick_size ${raw.tick_size}`);
  const cutoff = raw.retail_cutoff_price === null ? null : paise(raw.retail_cutoff_price, 'retail_cutoff_price');
  if (cutoff !== null && cutoff % tick !== 0) {
    throw new AdminError(
      `[${i}].retail_cutoff_price: ${raw.retail_cutoff_price} is not a multiple of tick_size ${raw.tick_size}`,
    );
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
    valueLimitPaise:
      raw.order_value_upper_limit === undefined ? null : paise(raw.order_value_upper_limit, 'order_value_upper_limit'),
  };
  if (issue.nonRetailClosesAt <= issue.nonRetailOpensAt)
    throw new AdminError(`[${i}]: non_retail_closes_at must be after non_retail_opens_at`);
  if (issue.retailClosesAt <= issue.retailOpensAt)
    throw new AdminError(`[${i}]: retail_closes_at must be after retail_opens_at`);
  return issue;
}

const ajv = createAjv();
const checkIssueEntry = compileChecker(ajv, OfsIssueImportSchema);
const checkOfferEntry = compileChecker(ajv, OfsOfferImportSchema);

/** What an import file holds: offers (entries with `offer_id`) and issues of the one-listing format. */
export interface OfsImport {
  offers: Offer[];
  issues: OfsIssue[];
  /** The file's entries, in file order. */
  order: ({ offer: Offer } | { issue: OfsIssue })[];
}

/**
 * The import JSON -> offers and issues in our units, or an AdminError naming every problem of the first
 * bad entry. An entry with `offer_id` is an offer (schemas/ofs-offer.ts); any other, an issue of the
 * one-listing format, imported exactly as before.
 */
export function parseOfsImport(json: unknown): OfsImport {
  if (!Array.isArray(json) || json.length === 0 || json.length > 1000)
    throw new AdminError('the file must be an array of 1 to 1000 offers or issues');
  const result: OfsImport = { offers: [], issues: [], order: [] };
  const seenOffers = new Set<string>();
  json.forEach((entry: unknown, i) => {
    if (entry !== null && typeof entry === 'object' && 'offer_id' in entry) {
      const offer = parseOffer(entry, i);
      if (seenOffers.has(offer.offerId))
        throw new AdminError(`[${i}].offer_id: offer ${offer.offerId} appears twice in the file`);
      seenOffers.add(offer.offerId);
      result.offers.push(offer);
      result.order.push({ offer });
    } else {
      const violations = checkIssueEntry(entry);
      if (violations.length > 0) throw new AdminError(entryProblems(i, violations));
      const issue = toOfsIssue(entry as OfsIssueImport, i);
      result.issues.push(issue);
      result.order.push({ issue });
    }
  });
  const listed = new Map<string, string>();
  for (const offer of result.offers) {
    for (const listing of offer.listings) {
      const key = `${listing.exchange} ${listing.scripToken}`;
      const other = listed.get(key);
      if (other !== undefined && other !== offer.offerId)
        throw new AdminError(`${key} is a listing of both offer ${other} and offer ${offer.offerId}`);
      listed.set(key, offer.offerId);
    }
  }
  for (const issue of result.issues) {
    const key = `${issue.exchange} ${issue.scripToken}`;
    if (listed.has(key))
      throw new AdminError(
        `${key} is both a listing of offer ${listed.get(key)} and an issue of the one-listing format`,
      );
  }
  return result;
}

/** The schema's violations of entry `i`, named from the file: "[2].listings[0].scrip_token is required". */
function entryProblems(i: number, violations: readonly { field: string; message: string }[]): string {
  return violations
    .map((v) => `[${i}]${v.field === '' ? v.message.replace(/^body\b/, '') : `.${v.message}`}`)
    .join('; ');
}

function parseOffer(entry: object, i: number): Offer {
  const violations = checkOfferEntry(entry);
  if (violations.length > 0) throw new AdminError(entryProblems(i, violations));
  const raw = entry as OfsOfferImport;
  const paise = (rupees: number, field: string) => {
    const value = rupeesToPaise(rupees);
    if (value === null) throw new AdminError(`[${i}].${field}: ${rupees} is not a whole number of paise`);
    return value;
  };
  const instant = (value: string, field: string) => {
    const ms = Date.parse(value);
    if (Number.isNaN(ms)) throw new AdminError(`[${i}].${field}: "${value}" is not a date-time`);
    return ms;
  };
  const valueLimit = (rupees: number | undefined, series: string) =>
    rupees === undefined ? null : paise(rupees, `listings.order_value_upper_limit.${series}`);
  // A percentage with at most two decimals, as hundredths (a JSON schema's multipleOf 0.01 refuses 33.33 by float error).
  const hundredths = (pct: number, field: string) => {
    const value = rupeesToPaise(pct);
    if (value === null) throw new AdminError(`[${i}].${field}: ${pct} has more than two decimals`);
    return value;
  };
  const discount = (value: OfsOfferImport['retail_discount'], field: string): Discount => {
    if (value === undefined || value === null) return null;
    if ('rupees' in value) return { paise: paise(value.rupees, `${field}.rupees`) };
    return { basisPoints: hundredths(value.pct, `${field}.pct`) };
  };
  hundredths(raw.retail_reserve_pct, 'retail_reserve_pct');
  const tDay = {
    opensAt: instant(raw.t_day.opens_at, 't_day.opens_at'),
    closesAt: instant(raw.t_day.closes_at, 't_day.closes_at'),
  };
  const t1Day = {
    opensAt: instant(raw.t1_day.opens_at, 't1_day.opens_at'),
    closesAt: instant(raw.t1_day.closes_at, 't1_day.closes_at'),
  };
  const greenShoeQuantity = raw.green_shoe_quantity ?? 0;
  // true and false, the format before partial decisions, still read as all and none.
  const greenShoeExercised =
    raw.green_shoe_exercised === true
      ? greenShoeQuantity
      : raw.green_shoe_exercised === false
        ? 0
        : (raw.green_shoe_exercised ?? 0);
  const offer: Offer = {
    offerId: raw.offer_id,
    symbol: raw.symbol,
    // By exchange, as the registry reads them back.
    listings: raw.listings
      .map((l) => ({
        exchange: l.exchange as Offer['listings'][number]['exchange'],
        scripToken: l.scrip_token,
        series: { RETAIL: l.series.RETAIL, NON_RETAIL: l.series.NON_RETAIL, EMPLOYEE: l.series.EMPLOYEE ?? null },
        valueLimitsPaise: {
          RETAIL: valueLimit(l.order_value_upper_limit?.RETAIL, 'RETAIL'),
          NON_RETAIL: valueLimit(l.order_value_upper_limit?.NON_RETAIL, 'NON_RETAIL'),
          EMPLOYEE: valueLimit(l.order_value_upper_limit?.EMPLOYEE, 'EMPLOYEE'),
        },
      }))
      .sort((a, b) => (a.exchange < b.exchange ? -1 : a.exchange > b.exchange ? 1 : a.scripToken - b.scripToken)),
    floorPricePaise: paise(raw.floor_price, 'floor_price'),
    tickSizePaise: paise(raw.tick_size, 'tick_size'),
    baseQuantity: raw.base_quantity,
    greenShoeQuantity,
    greenShoeExercised,
    greenShoeDecidedAt: null,
    greenShoeDecisionBy:
      raw.green_shoe_decision_by === undefined
        ? defaultGreenShoeDecisionBy(tDay, t1Day)
        : instant(raw.green_shoe_decision_by, 'green_shoe_decision_by'),
    retailReservePct: raw.retail_reserve_pct,
    retailDiscount: discount(raw.retail_discount, 'retail_discount'),
    retailAllocationPrice: (raw.retail_allocation_price ?? 'UNIFORM') as Offer['retailAllocationPrice'],
    employeeQuantity: raw.employee_quantity ?? 0,
    employeeGreenShoeQuantity: raw.employee_green_shoe_quantity ?? 0,
    employeeDiscount: discount(raw.employee_discount, 'employee_discount'),
    printedPortions:
      raw.portions === undefined
        ? null
        : {
            greenShoe: greenShoeExercised,
            retailReserved: raw.portions.retail_reserved,
            nonRetail: raw.portions.non_retail,
            mfIcReserved: raw.portions.mf_ic_reserved ?? null,
            employee: raw.portions.employee ?? null,
          },
    allocation: raw.allocation as Offer['allocation'],
    tDay,
    t1Day,
    settlementDelayMs: raw.settlement_delay_seconds === undefined ? null : raw.settlement_delay_seconds * 1000,
  };
  const problems = offerTermsProblems(offer);
  if (problems.length > 0) throw new AdminError(problems.map((p) => `[${i}].${p}`).join('; '));
  return offer;
}

export class AdminService {
  constructor(
    private readonly users: UserRepository,
    /** The OFS registry: offers, and the issues of the one-listing format that an import writes with them. */
    private readonly offers: OfsOfferRepository,
    private readonly now: () => number = Date.now,
    /** The cost of new password hashes; OWASP's by default. */
    private readonly hasher: PasswordHasher = OWASP_PASSWORD_HASHER,
    /** The exchanges' holidays, which an offer's days are checked against; weekends only by default. */
    private readonly holidays: Pick<TradingHolidayRepository, 'calendar'> = { calendar: async () => NO_HOLIDAYS },
  ) {}

  /** Creates a user; fails, changing nothing, when the user id is taken. */
  async addUser(
    userId: string,
    password: string,
    options: { category?: UserCategory | BidderCategory; marginType?: MarginType; totp?: boolean } = {},
  ): Promise<NewUser> {
    if (!USER_ID_PATTERN.test(userId))
      throw new AdminError('user_id must be 1 to 64 letters, digits, dots, dashes or underscores');
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
    const disabledDemoUsers = DEMO_USER_IDS.includes(userId) ? [] : await this.disableDemoLogins();
    return { userId, totpSecret, disabledDemoUsers };
  }

  /**
   * A database with a real user is no demo any more: every demo user that still has the published
   * password is disabled and its sessions end. Answers those that were.
   */
  private async disableDemoLogins(): Promise<string[]> {
    const disabled: string[] = [];
    for (const userId of DEMO_USER_IDS) {
      const demo = await this.users.find(userId);
      if (demo === undefined || demo.disabledAt !== null || !(await verifyPassword(DEMO_PASSWORD, demo.passwordHash)))
        continue;
      await this.disableUser(userId);
      disabled.push(userId);
    }
    return disabled;
  }

  /**
   * Sets the user's OFS category (RETAIL, NII, MF, IC, OTHS; NON_RETAIL is NII) and margin type (H, or T
   * for an MF, IC or OTHS user whose custodian confirms its bids). Bids already placed keep the category
   * they were placed under.
   */
  async setCategory(userId: string, category: string, marginType: MarginType = 'H'): Promise<UserCategory> {
    const stored = userCategoryOf(category);
    if (stored === undefined)
      throw new AdminError(`category must be one of ${[...USER_CATEGORIES, 'NON_RETAIL'].join(', ')}`);
    if (!(await this.users.setCategory(userId, stored, checkedMarginType(stored, marginType))))
      throw new AdminError(`no user ${userId}`);
    return stored;
  }

  /**
   * Sets the most the user's 0 %-margin bids (live, or allotted and not settled) may total, in rupees (`none`: no limit set, and no
   * 0 %-margin bid is taken), as the operator agrees it with the custodian arrangement (issue 47 row 3).
   * Bids already live stay; the next bid or raise is judged against the new limit. Answers the limit in paise.
   */
  async setZeroMarginLimit(userId: string, rupeesText: string): Promise<bigint | null> {
    let limit: bigint | null = null;
    if (rupeesText !== 'none') {
      const amount = parseRupeeAmount(rupeesText);
      if ('problem' in amount) throw new AdminError(amount.problem);
      limit = BigInt(amount.paise);
    }
    if (!(await this.users.setZeroMarginLimit(userId, limit))) throw new AdminError(`no user ${userId}`);
    return limit;
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

  /**
   * Enrols an existing user in TOTP with a new secret, replacing the one they had (its codes stop working
   * at once); every later login of the user needs a code of the new one. Answers the secret (base32) and
   * whether it replaced one. Open sessions stay open (`revokeSessions` ends them).
   */
  async enrolTotp(userId: string): Promise<{ totpSecret: string; replaced: boolean }> {
    const before = await this.existingUser(userId);
    const totpSecret = newTotpSecret();
    if (!(await this.users.setTotpSecret(userId, totpSecret, this.now()))) throw new AdminError(`no user ${userId}`);
    return { totpSecret, replaced: before.totpSecret !== null };
  }

  /**
   * The operator's unlock of a user's second factor (issue 47 row 2): clears the count of wrong TOTP codes
   * and the lock, recorded in the user's second-factor log. Answers the count cleared and whether it was
   * locked.
   */
  async unlockSecondFactor(userId: string): Promise<{ failures: number; wasLocked: boolean }> {
    const outcome = await this.users.unlockSecondFactor(userId, this.now());
    if (outcome === undefined) throw new AdminError(`no user ${userId}`);
    return outcome;
  }

  /** The user's second-factor locks and unlocks, oldest first, and its count and lock now. */
  async secondFactorLog(userId: string): Promise<{ count: SecondFactorCount; events: SecondFactorEvent[] }> {
    const user = await this.existingUser(userId);
    return { count: user.secondFactorCount, events: await this.users.secondFactorEvents(userId) };
  }

  /**
   * Exempts the user from the second factor at login (LOGIN_SECOND_FACTOR_REQUIRED: they log in with the
   * password alone) or ends the exemption; takes effect at the next login, on every node. Answers how the
   * user logs in now: an enrolled user gives a TOTP code whatever the exemption.
   */
  async setSecondFactorExempt(userId: string, exempt: boolean): Promise<SecondFactorState> {
    if (!(await this.users.setSecondFactorExempt(userId, exempt ? this.now() : null)))
      throw new AdminError(`no user ${userId}`);
    return secondFactorState(await this.existingUser(userId));
  }

  private async existingUser(userId: string) {
    const user = await this.users.find(userId);
    if (!user) throw new AdminError(`no user ${userId}`);
    return user;
  }

  /** A new API key for the user; the key is returned once and only its hash is kept. */
  /** A new API key; with `addresses` (the primary, then at most one secondary), bound to them at once. */
  async createApiKey(
    userId: string,
    addresses: readonly string[] = [],
  ): Promise<{ keyId: string; apiKey: string; addresses: string[] }> {
    await this.existingUser(userId);
    const canonical = addresses.length === 0 ? [] : this.keyAddresses(addresses);
    const key = newApiKey();
    await this.users.addApiKey({ keyId: key.id, userId, keyHash: key.hash, now: this.now(), addresses: canonical });
    return { keyId: key.id, apiKey: key.secret, addresses: canonical };
  }

  /**
   * Binds a key to new addresses, at once for every call that sends it; at most once a week (SEBI's rule)
   * unless `override`, which the record of the change keeps.
   */
  async setApiKeyAddresses(keyId: string, addresses: readonly string[], override: boolean): Promise<string[]> {
    const canonical = this.keyAddresses(addresses);
    const current = await this.users.apiKeyAddresses(keyId);
    if (current === undefined) throw new AdminError(`no active API key ${keyId}`);
    const now = this.now();
    const refusal = addressChangeRefusal(current, now, override);
    if (refusal !== null) throw new AdminError(`the addresses of ${keyId} cannot change now: ${refusal}`);
    if (!(await this.users.setApiKeyAddresses(keyId, current, canonical, now, override))) {
      throw new AdminError(`the addresses of ${keyId} changed meanwhile; run the command again`);
    }
    return canonical;
  }

  /** A key's addresses now and every setting of them, oldest first. */
  async apiKeyAddressHistory(keyId: string): Promise<{ addresses: readonly string[]; changes: ApiKeyAddressChange[] }> {
    const current = await this.users.apiKeyAddresses(keyId);
    if (current === undefined) throw new AdminError(`no active API key ${keyId}`);
    return { addresses: current.addresses, changes: await this.users.apiKeyAddressChanges(keyId) };
  }

  private keyAddresses(addresses: readonly string[]): string[] {
    const problem = keyAddressesProblem(addresses);
    if (problem !== null) throw new AdminError(problem);
    return addresses.map((address) => canonicalAddress(address)!);
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
    await this.importParsed({ offers: [], issues });
    return issues;
  }

  /**
   * Registers or updates the offers and issues of an import file (`ordergate ofs import`), all or none.
   * Answers what the file held and which offers existed before.
   */
  async importOfs(json: unknown): Promise<OfsImport & { updatedOffers: Set<string> }> {
    const parsed = parseOfsImport(json);
    return { ...parsed, ...(await this.importParsed(parsed)) };
  }

  /** Registers what parseOfsImport answered, all or none; answers which offers existed before. */
  async importParsed({
    offers,
    issues,
  }: Pick<OfsImport, 'offers' | 'issues'>): Promise<{ updatedOffers: Set<string> }> {
    if (offers.some((offer) => offer.settlementDelayMs === null)) {
      const calendar = await this.holidays.calendar();
      for (const offer of offers) {
        const problems = offerCalendarProblems(offer, calendar);
        if (problems.length > 0) throw new AdminError(`offer ${offer.offerId}: ${problems.join('; ')}`);
      }
    }
    try {
      return await this.offers.importAll(offers, issues, this.now());
    } catch (error) {
      if (error instanceof OfferConflictError) throw new AdminError(error.message);
      throw error;
    }
  }

  /**
   * Records the seller's green-shoe decision: the shares exercised (true: all, false: none), with the
   * portions the notice printed for it when given. Taken until the decision's deadline, and never once the
   * T allocation has run: the T allocation waits for it, or for the deadline.
   */
  async setGreenShoe(
    offerId: string,
    exercised: number | boolean,
    printed?: Omit<PrintedPortions, 'greenShoe'>,
  ): Promise<Offer> {
    const registration = await this.offers.find(offerId);
    if (registration === undefined) throw new AdminError(`no offer ${offerId}`);
    const { offer } = registration;
    const quantity = exercised === true ? offer.greenShoeQuantity : exercised === false ? 0 : exercised;
    if (!Number.isSafeInteger(quantity) || quantity < 0 || quantity > offer.greenShoeQuantity) {
      throw new AdminError(
        `offer ${offerId}: the green shoe is ${offer.greenShoeQuantity} shares; ${quantity} cannot be exercised`,
      );
    }
    const now = this.now();
    if (now >= offer.greenShoeDecisionBy && now >= offer.tDay.closesAt) {
      throw new AdminError(
        `offer ${offerId}: the decision was due by ${formatInstant(offer.greenShoeDecisionBy)}; the decision then in force (${offer.greenShoeExercised} shares) stands`,
      );
    }
    const printedPortions = printed === undefined ? null : { greenShoe: quantity, ...printed };
    const problems = printedPortionsProblems({ ...offer, greenShoeExercised: quantity, printedPortions });
    if (problems.length > 0) throw new AdminError(`offer ${offerId}: ${problems.join('; ')}`);
    if (!(await this.offers.setGreenShoe(offerId, quantity, printedPortions, now))) {
      throw new AdminError(
        `offer ${offerId}: the green shoe is decided until the T allocation runs, and it has run (or the offer was cancelled)`,
      );
    }
    return (await this.offers.find(offerId))!.offer;
  }

  /**
   * The operator's answer to an under-subscribed T day (non-retail demand short of the non-retail
   * portion): allot it anyway. The T allocation then runs at the next pass of the OMS.
   */
  async proceedOffer(offerId: string): Promise<void> {
    if ((await this.offers.find(offerId)) === undefined) throw new AdminError(`no offer ${offerId}`);
    if (!(await this.offers.proceed(offerId, this.now()))) {
      throw new AdminError(`offer ${offerId}: its T allocation has run already, or it was cancelled`);
    }
  }

  /**
   * The operator cancels the offer (the framework's answer to an under-subscribed T day): no bid is taken
   * any more, and the exchange cancels every live bid, releasing its block. Allotments made on T stand.
   */
  async cancelOffer(offerId: string): Promise<void> {
    if ((await this.offers.find(offerId)) === undefined) throw new AdminError(`no offer ${offerId}`);
    if (!(await this.offers.cancel(offerId, this.now()))) {
      throw new AdminError(`offer ${offerId}: it was cancelled already, or its T+1 allocation has run`);
    }
  }

  /**
   * Registers users as eligible employees of the offer (SEBI: the operator registers them on T-1), until
   * T+1 opens, when employees bid. Every user must exist; registering one again changes nothing.
   */
  async addEmployees(offerId: string, userIds: readonly string[]): Promise<void> {
    await this.employeesOpen(offerId);
    for (const userId of userIds) await this.existingUser(userId);
    await this.offers.addEmployees(offerId, userIds, this.now());
  }

  /** Takes users off the offer's eligible employees, until T+1 opens; answers how many were on it. */
  async removeEmployees(offerId: string, userIds: readonly string[]): Promise<number> {
    await this.employeesOpen(offerId);
    return this.offers.removeEmployees(offerId, userIds);
  }

  async employees(offerId: string): Promise<string[]> {
    if ((await this.offers.find(offerId)) === undefined) throw new AdminError(`no offer ${offerId}`);
    return this.offers.employees(offerId);
  }

  private async employeesOpen(offerId: string): Promise<void> {
    const registration = await this.offers.find(offerId);
    if (registration === undefined) throw new AdminError(`no offer ${offerId}`);
    const state = offerState(registration.offer, registration.progress, this.now());
    if (state === 'CANCELLED' || this.now() >= registration.offer.t1Day.opensAt) {
      throw new AdminError(
        `offer ${offerId}: its eligible employees are registered until T+1 opens (${new Date(registration.offer.t1Day.opensAt).toISOString()}); it is ${state} now`,
      );
    }
  }
}
