/**
 * The OFS import file of `ordergate ofs import` (docs/operations.md): a JSON array of offers of SEBI's
 * framework (entries with `offer_id`, OfsOfferImport) and issues of the one-listing format (OfsIssueImport),
 * checked against their schemas and read into the domain's units. Parsed here, with the other wire
 * shapes; an AdminError names each problem and its entry.
 */
import { AdminError } from '../domain/errors.js';
import { rupeesToPaise, type OfsIssue } from '../domain/ofs/issue/issue.js';
import {
  defaultGreenShoeDecisionBy,
  offerTermsProblems,
  type Discount,
  type Offer,
} from '../domain/ofs/offer/offer.js';
import { OfsIssueImport as OfsIssueImportSchema, type OfsIssueImport } from './ofs-issue.js';
import { OfsOfferImport as OfsOfferImportSchema, type OfsOfferImport } from './ofs-offer.js';
import { compileChecker, createAjv } from './validator.js';

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
