/**
 * Operator actions behind the `ordergate` CLI (and the tests' fixtures): users, API keys and the OFS
 * registry. Each works directly on the database; no server needs to run.
 */
import { AdminError, DatabaseUnavailableError } from '../domain/errors.js';
import { parseRupeeAmount } from '../domain/funds/funds.js';
import { canonicalAddress } from '../domain/access/ip-address.js';
import { addressChangeRefusal, keyAddressesProblem } from '../domain/access/static-ip.js';
import { secondFactorState, type SecondFactorCount, type SecondFactorState } from '../domain/access/second-factor.js';
import type { ApiKeyInfo } from '../domain/access/user.js';
import { checkedMemberDataChange, type MemberData, type MemberDataChange } from '../domain/access/member-data.js';
import { parseClientsFile, USER_ID_PATTERN, type ClientLine } from '../schemas/client-import.js';
import {
  NO_PASSWORD_HASH,
  newApiKey,
  newTotpSecret,
  OWASP_PASSWORD_HASHER,
  verifyPassword,
  type PasswordHasher,
} from '../auth/credentials.js';
import { type OfsIssue } from '../domain/ofs/issue/issue.js';
import { parseOfsImport, parseOfsIssues, type OfsImport } from '../schemas/ofs-import.js';
import { OfferConflictError, type OfsOfferRepository } from '../store/ofs/offers.js';
import type { TradingHolidayRepository } from '../store/ofs/trading-holidays.js';
import { NO_HOLIDAYS } from '../domain/ofs/trading-calendar.js';
import { formatInstant, type BidderCategory } from '../domain/ofs/rules.js';
import {
  offerCalendarProblems,
  offerState,
  marginTypeProblem,
  printedPortionsProblems,
  USER_CATEGORIES,
  userCategoryOf,
  type MarginType,
  type Offer,
  type PrintedPortions,
  type UserCategory,
} from '../domain/ofs/offer/offer.js';
import type {
  ApiKeyAddressChange,
  ClientOutcome,
  ClientRecord,
  SecondFactorEvent,
  UserRepository,
} from '../store/access/users.js';

/** A line of the clients file and what became of it (`ordergate users import-clients`' report). */
export interface ClientImportLine {
  line: number;
  userId: string | null;
  outcome: ClientOutcome['outcome'];
  /** Why a refused line was refused. */
  reason?: string;
}

/** How many records of a clients file go in one transaction. */
const CLIENT_IMPORT_BATCH = 500;

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

/**
 * The demo users' member data (made up: `DEMO...` UCCs and PANs of no real holder, a custodian for the
 * mutual fund), so that their bids pass the member-data rule (docs/design/member-data.md).
 */
export const DEMO_MEMBER_DATA: Readonly<Record<string, MemberData>> = {
  [DEMO_USER_ID]: { ucc: 'DEMO', pan: 'DMOPD0001A', clientType: 'CLI', custodianCode: null },
  [DEMO_NII_USER_ID]: { ucc: 'DEMONII', pan: 'DMOPN0002A', clientType: 'CLI', custodianCode: null },
  [DEMO_MF_USER_ID]: { ucc: 'DEMOMF', pan: 'DMOTM0003A', clientType: 'CLI', custodianCode: 'DEMOCUST' },
};

function checkPassword(password: string): void {
  if (password.length < 8 || password.length > 256) throw new AdminError('the password must have 8 to 256 characters');
}

/** Margin type T (0 % margin) is for institutions only (domain: marginTypeProblem). */
function checkedMarginType(category: string, marginType: MarginType): MarginType {
  const problem = marginTypeProblem(category, marginType);
  if (problem !== null) throw new AdminError(problem);
  return marginType;
}

/** The import stopped by a database that cannot be used: what was applied stays, and running it again is safe. */
function importStopped(line: number, error: DatabaseUnavailableError): AdminError {
  return new AdminError(
    `${error.message}: the lines from line ${line} on were not applied (those before it were); the import is idempotent: run it again`,
  );
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
    options: {
      category?: UserCategory | BidderCategory;
      marginType?: MarginType;
      totp?: boolean;
      /** Its member data (a UCC no other user holds). */
      member?: MemberDataChange;
    } = {},
  ): Promise<NewUser> {
    if (!USER_ID_PATTERN.test(userId))
      throw new AdminError('user_id must be 1 to 64 letters, digits, dots, dashes or underscores');
    checkPassword(password);
    const member = checkedMemberDataChange(options.member ?? {});
    if (member.change === null) throw new AdminError(member.problems.join('; '));
    const totpSecret = options.totp ? newTotpSecret() : null;
    const created = await this.users.create({
      userId,
      passwordHash: await this.hasher.hash(password),
      category: options.category ?? 'RETAIL',
      marginType: checkedMarginType(options.category ?? 'RETAIL', options.marginType ?? 'H'),
      totpSecret,
      now: this.now(),
      member: member.change,
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

  /**
   * Sets the given fields of a user's member data (docs/design/member-data.md): its UCC (no other user's),
   * PAN, client type and custodian code (null: none). Takes effect at the user's next bid, on every node;
   * bids already live stay. Answers the user's member data now.
   */
  async setMemberData(userId: string, change: MemberDataChange): Promise<MemberData> {
    const checked = checkedMemberDataChange(change);
    if (checked.change === null) throw new AdminError(checked.problems.join('; '));
    const outcome = await this.users.setMemberData(userId, checked.change);
    if (outcome === 'no-user') throw new AdminError(`no user ${userId}`);
    if ('uccOf' in outcome)
      throw new AdminError(`ucc ${checked.change.ucc} is user ${outcome.uccOf}'s: a UCC is one client's`);
    return outcome;
  }

  /**
   * Imports a clients file (`ordergate users import-clients`, docs/operations.md): each record sets its
   * user's member data whole, creating the user (RETAIL, margin H, with no usable password until
   * `users reset-password`) when there is none. Each record is applied or refused on its own, the refused
   * with their reasons: one bad record never stops the others. Records go in transactions of
   * CLIENT_IMPORT_BATCH; a batch the database refuses whole (a change made meanwhile) is applied again record
   * by record. Throws an AdminError, changing nothing, for a file that is no clients file. Answers one
   * outcome per record, in the file's order, and the demo users a created user disabled.
   */
  async importClients(text: string): Promise<{ lines: ClientImportLine[]; disabledDemoUsers: string[] }> {
    let parsed: ClientLine[];
    try {
      parsed = parseClientsFile(text);
    } catch (error) {
      throw new AdminError(`the clients file: ${(error as Error).message}`);
    }
    const lines: ClientImportLine[] = [];
    const accepted: { line: ClientLine; record: ClientRecord }[] = [];
    for (const line of parsed) {
      if (line.problems !== undefined)
        lines.push({ line: line.line, userId: line.userId, outcome: 'refused', reason: line.problems.join('; ') });
      else {
        const report: ClientImportLine = { line: line.line, userId: line.userId, outcome: 'unchanged' };
        lines.push(report);
        accepted.push({ line, record: { userId: line.userId, member: line.member } });
      }
    }
    const reports = new Map(lines.map((report) => [report.line, report]));
    for (let i = 0; i < accepted.length; i += CLIENT_IMPORT_BATCH) {
      const batch = accepted.slice(i, i + CLIENT_IMPORT_BATCH);
      let outcomes: (ClientOutcome | { outcome: 'refused'; reason: string })[];
      try {
        outcomes = await this.users.importClients(
          batch.map((b) => b.record),
          NO_PASSWORD_HASH,
          this.now(),
        );
      } catch (error) {
        // A database that cannot be used refuses every line alike: nothing to set apart, and no line's fault.
        if (error instanceof DatabaseUnavailableError) throw importStopped(batch[0]!.line.line, error);
        // Refused whole (a UCC or user id taken meanwhile): record by record, each with its own answer.
        outcomes = [];
        for (const { line, record } of batch) {
          try {
            const [outcome] = await this.users.importClients([record], NO_PASSWORD_HASH, this.now());
            outcomes.push(outcome!);
          } catch (error) {
            if (error instanceof DatabaseUnavailableError) throw importStopped(line.line, error);
            outcomes.push({ outcome: 'refused', reason: `not written: ${(error as Error).message}` });
          }
        }
      }
      batch.forEach(({ line }, j) => {
        const report = reports.get(line.line)!;
        const outcome = outcomes[j]!;
        report.outcome = outcome.outcome;
        if (outcome.outcome === 'refused') report.reason = outcome.reason;
      });
    }
    const created = lines.some((report) => report.outcome === 'created' && !DEMO_USER_IDS.includes(report.userId!));
    return { lines, disabledDemoUsers: created ? await this.disableDemoLogins() : [] };
  }

  /**
   * Gives a demo user its member data (DEMO_MEMBER_DATA) when it has no UCC recorded; what an operator
   * recorded stays. Answers whether it was set.
   */
  async ensureDemoMemberData(userId: string): Promise<boolean> {
    const demo = DEMO_MEMBER_DATA[userId];
    if (demo === undefined) throw new RangeError(`${userId} is no demo user`);
    if ((await this.existingUser(userId)).member.ucc !== null) return false;
    await this.setMemberData(userId, {
      ucc: demo.ucc!,
      pan: demo.pan!,
      clientType: demo.clientType,
      custodianCode: demo.custodianCode,
    });
    return true;
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
