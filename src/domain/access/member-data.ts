/**
 * The member's data of a client (issue 49 row 5): what a trading member sends with each of the client's
 * bids to the exchange, and what the rules read of it. The UCC (the exchange's Unique Client Code: NSE's
 * `clientId`, BSE's UCC field), the PAN (the retail limit counts per PAN; the exchanges register each UCC
 * against one), the client type (`CLI` a client's bid, `PRO` the member's own: NSE's `clientType`) and the
 * custodian code (NSE's `participantId`, BSE's custodian field) of an institution whose custodian confirms
 * its bids. The rules (docs/design/member-data.md): plain functions, no I/O.
 */
import { ApiError, Errors } from '../errors.js';
import { ZERO_MARGIN_CATEGORIES, type MarginType, type OfferCategory, type UserCategory } from '../ofs/offer/offer.js';

export const CLIENT_TYPES = ['CLI', 'PRO'] as const;
export type ClientType = (typeof CLIENT_TYPES)[number];

/** A user's member data as stored: each field null until the operator sets it (the client type defaults to CLI). */
export interface MemberData {
  ucc: string | null;
  pan: string | null;
  clientType: ClientType;
  custodianCode: string | null;
}

/**
 * What a line of the clients file sets (`ordergate users import-clients`): the UCC and the PAN always; the
 * client type and the custodian code when the file has their columns (absent: what is recorded stays).
 */
export type ClientMember = { ucc: string; pan: string } & Partial<Pick<MemberData, 'clientType' | 'custodianCode'>>;

/** A user's member data and its category (an issue's bids need a custodian by the user's category). */
export interface Member extends MemberData {
  category: UserCategory;
}

/**
 * A UCC: 1 to 10 capital letters or digits. NSE's `clientId` holds at most 10 characters and BSE's UCC at
 * most 12: a code that both exchanges take fits NSE's; no separators, which BSE's comma- or pipe-separated
 * files would split.
 */
export const UCC_PATTERN = /^[A-Z0-9]{1,10}$/;
/** A PAN: five letters, four digits, a letter; the fourth letter is the holder's kind (P a person, C a company, ...). */
export const PAN_PATTERN = /^[A-Z]{3}[ABCFGHJLPT][A-Z][0-9]{4}[A-Z]$/;
/** A custodian code (NSE's participant id, BSE's custodian code): 1 to 12 capital letters or digits (BSE's field is 12). */
export const CUSTODIAN_CODE_PATTERN = /^[A-Z0-9]{1,12}$/;

/** The operator's text of a code: surrounding blanks dropped, letters capitalised (a UCC, PAN or custodian code has no small letters). */
export function normalizedCode(text: string): string {
  return text.trim().toUpperCase();
}

/** Why `ucc` (normalized) is no UCC, or null. */
export function uccProblem(ucc: string): string | null {
  return UCC_PATTERN.test(ucc)
    ? null
    : `ucc "${ucc}" must be 1 to 10 letters or digits (NSE's client code holds 10 characters, BSE's 12: a UCC both take fits in 10)`;
}

/** Why `pan` (normalized) is no PAN, or null. */
export function panProblem(pan: string): string | null {
  if (/^[A-Z]{5}[0-9]{4}[A-Z]$/.test(pan) && !PAN_PATTERN.test(pan))
    return `pan "${pan}": its fourth letter must be the holder's kind, one of A, B, C, F, G, H, J, L, P, T (P: a person, C: a company)`;
  return PAN_PATTERN.test(pan) ? null : `pan "${pan}" must be five letters, four digits and a letter, e.g. ABCPE1234F`;
}

/** Why `clientType` is no client type, or null. */
export function clientTypeProblem(clientType: string): string | null {
  return (CLIENT_TYPES as readonly string[]).includes(clientType)
    ? null
    : `client_type "${clientType}" must be CLI (a client's bids) or PRO (the member's own)`;
}

/** Why `code` (normalized) is no custodian code, or null. */
export function custodianCodeProblem(code: string): string | null {
  return CUSTODIAN_CODE_PATTERN.test(code)
    ? null
    : `custodian_code "${code}" must be 1 to 12 letters or digits (the custodian's participant id)`;
}

/** The operator's change of a user's member data: the fields given (null custodian code: none any more). */
export interface MemberDataChange {
  ucc?: string;
  pan?: string;
  clientType?: string;
  custodianCode?: string | null;
}

/** The change, normalized, or every problem with it. */
export function checkedMemberDataChange(
  change: MemberDataChange,
): { change: Partial<MemberData>; problems: [] } | { change: null; problems: string[] } {
  const checked: Partial<MemberData> = {};
  const problems: string[] = [];
  const field = <K extends keyof MemberData>(
    key: K,
    text: string | undefined,
    problemOf: (value: string) => string | null,
  ) => {
    if (text === undefined) return;
    const value = normalizedCode(text);
    const problem = problemOf(value);
    if (problem === null) checked[key] = value as MemberData[K];
    else problems.push(problem);
  };
  field('ucc', change.ucc, uccProblem);
  field('pan', change.pan, panProblem);
  field('clientType', change.clientType, clientTypeProblem);
  if (change.custodianCode === null) checked.custodianCode = null;
  else field('custodianCode', change.custodianCode, custodianCodeProblem);
  return problems.length === 0 ? { change: checked, problems: [] } : { change: null, problems };
}

/**
 * Whether a bid of `category` at `marginType` needs the client's custodian code: an institution's (MF, IC,
 * OTHS: its custodian confirms it) and every 0 %-margin bid (the custodian pays; NSE Clearing settles it as
 * type T).
 */
export function needsCustodian(category: OfferCategory | UserCategory, marginType: MarginType): boolean {
  return marginType === 'T' || (ZERO_MARGIN_CATEGORIES as readonly string[]).includes(category);
}

/**
 * The member data a bid of `category` at `marginType` needs and its client lacks (the fields' names): a UCC
 * and a PAN always (the exchange knows the client by its UCC; the retail limit counts per PAN), and a
 * custodian code where needsCustodian says. The client type always has one (CLI by default).
 */
export function missingMemberData(
  member: MemberData | undefined,
  category: OfferCategory | UserCategory,
  marginType: MarginType,
): string[] {
  const missing: string[] = [];
  if (member?.ucc == null) missing.push('ucc');
  if (member?.pan == null) missing.push('pan');
  if (needsCustodian(category, marginType) && member?.custodianCode == null) missing.push('custodian_code');
  return missing;
}

/** The refusal (422 e-385) of a bid whose client lacks what the exchange needs for it, each field listed; null: nothing is missing. */
export function memberDataRefusal(
  member: MemberData | undefined,
  category: OfferCategory | UserCategory,
  marginType: MarginType,
): ApiError | null {
  const missing = missingMemberData(member, category, marginType);
  if (missing.length === 0) return null;
  const why = missing.includes('custodian_code')
    ? ` (a ${marginType === 'T' ? '0 %-margin' : category} bid needs a custodian code)`
    : '';
  return new ApiError(
    Errors.MEMBER_DATA_MISSING,
    `The exchange needs your ${missing.join(', ')} for this bid${why}, and your broker has not recorded ${missing.length === 1 ? 'it' : 'them'}: ask your broker`,
    missing.map((field) => ({ field, message: 'not recorded for you; the exchange needs it for this bid' })),
  );
}
