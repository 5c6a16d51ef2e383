/**
 * `ordergate ofs forecast|exchange-terms` (issue 50; docs/operations.md, "Forecast and the exchange's terms"):
 * with a real exchange linked, what the exchange says settles, and these show the operator ordergate's own
 * view beside it. `forecast`: ordergate's own allocation over its own orders of an offer, labelled as a
 * forecast. `exchange-terms`: the imported offer against the terms the exchange answered (NSE's
 * `activeSecurities`, kept by the session holder: src/oms/exchange-terms.ts); nothing is applied.
 */
import { Command, Option } from 'commander';
import { formatPrice } from '../domain/ofs/issue/issue.js';
import { FORECAST_DAYS, type ForecastDay, type OfferForecast } from '../domain/ofs/offer/forecast.js';
import {
  describeTermsDifference,
  exchangeTermsDifferences,
  type TermsDifference,
} from '../domain/ofs/offer/exchange-terms.js';
import type { Offer, OfferListing } from '../domain/ofs/offer/offer.js';
import { AdminError } from '../domain/errors.js';
import { listingTermsOf } from '../oms/exchange-terms.js';
import type { NseActiveSecurity } from '../oms/links/nse-eofs/mapping.js';
import { OfferForecastService } from '../services/offer-forecast.js';
import { ExchangeTermsRepository } from '../store/ofs/exchange-terms.js';
import { OfferOrderReads } from '../store/ofs/offer-orders.js';
import { CliError, isoInstant, withWorkspace, type CliIo } from './context.js';

const price = (paise: number | null) => (paise === null ? 'none' : formatPrice(paise));
const rupees = (paise: number | null) => (paise === null ? null : paise / 100);
/** A sum as JSON: a number while exact, else its digits as a string. */
const exact = (n: bigint) => (n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : n.toString());
const key = (name: string) => name.replace(/[^A-Za-z]+/g, '_').toLowerCase();

/** The forecast as `name: value` lines, the label first. */
export function forecastLines(forecast: OfferForecast, withBids: boolean): string[] {
  const p = forecast.portions;
  const lines = [
    forecast.label,
    `offer: ${forecast.offerId} ${forecast.symbol}`,
    `day: ${forecast.day}`,
    `at: ${isoInstant(forecast.at)}`,
    `portions: total=${p.total} retail_reserved=${p.retailReserved} non_retail=${p.nonRetail} mf_ic_reserved=${p.mfIcReserved} employee=${p.employee} single_bidder_cap=${p.singleBidderCap}`,
    `cutoff: ${price(forecast.cutoffPricePaise)}${forecast.day === 'T+1' ? ` t_cutoff=${price(forecast.tCutoffPricePaise)}` : ''}`,
  ];
  for (const step of forecast.steps) {
    lines.push(
      `step: ${key(step.name)} on_offer=${step.portion} demand=${step.demand} allotted=${step.allotted} clearing=${price(step.clearingPricePaise)}`,
    );
  }
  for (const c of forecast.categories) {
    const prices =
      c.lowestPricePaise === c.highestPricePaise
        ? price(c.lowestPricePaise)
        : `${price(c.lowestPricePaise)}-${price(c.highestPricePaise)}`;
    lines.push(
      `category: ${c.category} portion=${key(c.portion)} on_offer=${c.sharesOnOffer} cutoff=${price(c.cutoffPricePaise)} demand=${c.demand} allotted=${c.allotted} price=${prices} value=${formatPrice(Number(c.allottedValuePaise))} bids_allotted=${c.bids.allotted} bids_partly=${c.bids.partly} bids_not=${c.bids.not}`,
    );
  }
  if (withBids) {
    for (const b of forecast.bids) {
      lines.push(
        `bid: ${b.orderId} ${b.userId} ${b.category} ${b.exchange}:${b.scripToken} ${b.status} price=${b.pricePaise === 0 ? 'cutoff' : formatPrice(b.pricePaise)} quantity=${b.quantity} allotted=${b.allottedQuantity} at=${price(b.allottedPricePaise)}`,
      );
    }
  }
  for (const l of forecast.leftOut) lines.push(`left_out: ${l.orderId} ${l.category} ${l.status}: ${l.why}`);
  for (const note of forecast.notes) lines.push(`note: ${note}`);
  return lines;
}

/** The forecast as one JSON object: prices in rupees, sums as numbers while exact. */
export function forecastJson(forecast: OfferForecast): Record<string, unknown> {
  const p = forecast.portions;
  return {
    label: forecast.label,
    offer_id: forecast.offerId,
    symbol: forecast.symbol,
    day: forecast.day,
    at: isoInstant(forecast.at),
    portions: {
      total: p.total,
      retail_reserved: p.retailReserved,
      non_retail: p.nonRetail,
      mf_ic_reserved: p.mfIcReserved,
      employee: p.employee,
      single_bidder_cap: p.singleBidderCap,
    },
    cutoff_price: rupees(forecast.cutoffPricePaise),
    t_cutoff_price: rupees(forecast.tCutoffPricePaise),
    steps: forecast.steps.map((s) => ({
      name: key(s.name),
      on_offer: s.portion,
      demand: exact(s.demand),
      allotted: s.allotted,
      clearing_price: rupees(s.clearingPricePaise),
    })),
    categories: forecast.categories.map((c) => ({
      category: c.category,
      portion: key(c.portion),
      on_offer: c.sharesOnOffer,
      cutoff_price: rupees(c.cutoffPricePaise),
      demand: exact(c.demand),
      allotted: c.allotted,
      allotted_value: Number(c.allottedValuePaise) / 100,
      lowest_price: rupees(c.lowestPricePaise),
      highest_price: rupees(c.highestPricePaise),
      bids: c.bids,
    })),
    bids: forecast.bids.map((b) => ({
      order_id: b.orderId,
      user_id: b.userId,
      category: b.category,
      exchange: b.exchange,
      scrip_token: b.scripToken,
      status: b.status,
      price: rupees(b.pricePaise),
      quantity: b.quantity,
      allotted_quantity: b.allottedQuantity,
      allotted_price: rupees(b.allottedPricePaise),
      reason: b.reason,
    })),
    left_out: forecast.leftOut.map((l) => ({
      order_id: l.orderId,
      category: l.category,
      status: l.status,
      why: l.why,
    })),
    notes: forecast.notes,
  };
}

/** One listing of the offer against the exchange's last answer for it. */
export interface ListingComparison {
  exchange: string;
  scripToken: number;
  /** When the answer compared was read; null: none is kept. */
  readAt: number | null;
  differences: TermsDifference[];
  notes: string[];
}

/** The exit code of `ofs exchange-terms` when it shows a difference (1 is a failure of the command). */
export const TERMS_DIFFER_EXIT_CODE = 3;

/** Each listing of the offer against what the exchange last answered for its symbol there; nothing is written. */
export async function compareWithExchange(
  offer: Offer,
  repository: Pick<ExchangeTermsRepository, 'find' | 'reads'>,
): Promise<ListingComparison[]> {
  const comparisons: ListingComparison[] = [];
  for (const listing of offer.listings) comparisons.push(await compareListing(offer, listing, repository));
  return comparisons;
}

async function compareListing(
  offer: Offer,
  listing: OfferListing,
  repository: Pick<ExchangeTermsRepository, 'find' | 'reads'>,
): Promise<ListingComparison> {
  const [stored, reads] = await Promise.all([
    repository.find(listing.exchange, offer.symbol),
    repository.reads(listing.exchange),
  ]);
  const notes: string[] = [];
  if (reads?.errorAt != null && reads.error !== null && (reads.readAt === null || reads.errorAt > reads.readAt))
    notes.push(
      `the last read of ${listing.exchange}'s listings failed at ${isoInstant(reads.errorAt)}: ${reads.error}`,
    );
  const base = { exchange: listing.exchange, scripToken: listing.scripToken, notes };
  if (stored === undefined) return { ...base, readAt: null, differences: [] };
  if (reads?.readAt != null && reads.readAt > stored.readAt)
    notes.push(
      `the exchange's last answer (${isoInstant(reads.readAt)}) did not list ${offer.symbol}: compared with the answer of ${isoInstant(stored.readAt)}`,
    );
  const terms =
    typeof stored.terms === 'object' && stored.terms !== null
      ? listingTermsOf(stored.terms as NseActiveSecurity)
      : { symbol: offer.symbol, tickSizePaise: Number.NaN, lotSize: Number.NaN, series: [] };
  return { ...base, readAt: stored.readAt, differences: exchangeTermsDifferences(offer, listing, terms) };
}

/** A comparison as lines: the listing's state, then each difference and note. */
export function comparisonLines(c: ListingComparison): string[] {
  const listing = `${c.exchange} ${c.scripToken}`;
  const state =
    c.readAt === null
      ? 'not yet read from the exchange'
      : c.differences.length === 0
        ? `matches the exchange as read at ${isoInstant(c.readAt)}`
        : `${c.differences.length} difference${c.differences.length === 1 ? '' : 's'} with the exchange as read at ${isoInstant(c.readAt)}`;
  return [
    `listing: ${listing}: ${state}`,
    ...c.differences.map((d) => `difference: ${describeTermsDifference(d)}`),
    ...c.notes.map((note) => `note: ${listing}: ${note}`),
  ];
}

const asCliError = (error: unknown) => (error instanceof AdminError ? new CliError(error.message) : error);

/** The commands this file adds to `ordergate ofs`. */
export function ofsExchangeCommands(io: CliIo): Command[] {
  const forecast = new Command('forecast')
    .description(
      "FORECAST: what ordergate's own allocation would allot now over ordergate's own orders of the offer (both listings, the orders at the exchange or waiting to be), per category; with a real exchange linked, the exchange's allocation settles, not this",
    )
    .argument('<offer_id>')
    .addOption(
      new Option('--day <day>', 'the allocation to forecast (default: T until T+1 opens, then T+1)').choices(
        FORECAST_DAYS,
      ),
    )
    .option('--bids', 'a line per order taken, with its forecast allotment')
    .option('--json', 'print one JSON object instead (every order in it)')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout, the label first:',
        `  FORECAST — ordergate's own computation over its own orders; the exchange's allocation file / messages settle`,
        '  offer: <offer_id> <symbol>',
        '  day: T|T+1',
        '  at: <instant>',
        '  portions: total=<n> retail_reserved=<n> non_retail=<n> mf_ic_reserved=<n> employee=<n> single_bidder_cap=<n>',
        '  cutoff: <rupees>            (T: the T-day cut-off; T+1: the retail cut-off, and t_cutoff=<rupees>)',
        '  step: <name> on_offer=<n> demand=<n> allotted=<n> clearing=<rupees|none>',
        '  category: <category> portion=<name> on_offer=<n> cutoff=<rupees|none> demand=<n> allotted=<n>',
        '    price=<rupees>[-<rupees>]|none value=<rupees> bids_allotted=<n> bids_partly=<n> bids_not=<n>',
        '  bid: <order_id> <user_id> <category> <exchange>:<token> <status> price=<rupees|cutoff> quantity=<n> allotted=<n> at=<rupees|none>   (--bids)',
        '  left_out: <order_id> <category> <status>: <why>',
        '  note: <what to know>',
      ].join('\n'),
    )
    .action(async (offerId: string, options: { day?: ForecastDay; bids?: boolean; json?: boolean }) => {
      await withWorkspace(io, async ({ store, offers }) => {
        const service = new OfferForecastService(offers, new OfferOrderReads(store.db));
        const result = await service.forecast(offerId, options.day).catch((error: unknown) => {
          throw asCliError(error);
        });
        io.stdout.write(
          options.json === true
            ? `${JSON.stringify(forecastJson(result), null, 2)}\n`
            : `${forecastLines(result, options.bids === true).join('\n')}\n`,
        );
      });
    });
  const exchangeTerms = new Command('exchange-terms')
    .description(
      "compare the imported offer with what the exchange last answered for each of its listings (NSE's activeSecurities, read by the session holder every few minutes): the floor, tick, lot, each series' day, window, modify/cancel window and value limit; nothing is applied",
    )
    .argument('<offer_id>')
    .option('--json', 'print one JSON object instead')
    .addHelpText(
      'after',
      [
        '',
        'Prints on stdout, per listing:',
        '  offer: <offer_id> <symbol>',
        '  listing: <exchange> <token>: matches the exchange as read at <instant>',
        '  listing: <exchange> <token>: <n> differences with the exchange as read at <instant>',
        "  difference: <exchange> <token>[ series <series>]: <field>: ours <value>, the exchange's <value>",
        '  listing: <exchange> <token>: not yet read from the exchange',
        '  note: <exchange> <token>: <a failed last read, or a listing the last answer left out>',
        'Fields: tick, lot, series, floor, date, opens, closes, mod_cxl_opens, mod_cxl_closes, value_limit.',
        `Exit code: 0 when no difference is shown (every listing read matches, or is not read yet);`,
        `${TERMS_DIFFER_EXIT_CODE} when at least one is (the import or the exchange is to be checked); 1 when the command fails.`,
      ].join('\n'),
    )
    .action(async (offerId: string, options: { json?: boolean }) => {
      const differences = await withWorkspace(io, async ({ store, offers }) => {
        const registration = await offers.find(offerId);
        if (registration === undefined) throw new CliError(`no OFS offer has offer_id ${JSON.stringify(offerId)}`);
        const { offer } = registration;
        const comparisons = await compareWithExchange(offer, new ExchangeTermsRepository(store.db));
        if (options.json === true) {
          const json = {
            offer_id: offer.offerId,
            symbol: offer.symbol,
            listings: comparisons.map((c) => ({
              exchange: c.exchange,
              scrip_token: c.scripToken,
              state: c.readAt === null ? 'not-read' : c.differences.length === 0 ? 'matches' : 'differs',
              read_at: c.readAt === null ? null : isoInstant(c.readAt),
              differences: c.differences.map((d) => ({
                series: d.series,
                field: d.field,
                ours: d.ours,
                exchange: d.theirs,
              })),
              notes: c.notes,
            })),
          };
          io.stdout.write(`${JSON.stringify(json, null, 2)}\n`);
        } else {
          const lines = [`offer: ${offer.offerId} ${offer.symbol}`, ...comparisons.flatMap(comparisonLines)];
          io.stdout.write(`${lines.join('\n')}\n`);
        }
        return comparisons.reduce((n, c) => n + c.differences.length, 0);
      });
      if (differences > 0) {
        throw new CliError(
          `${differences} difference${differences === 1 ? '' : 's'} between the offer and the exchange's terms (nothing applied)`,
          TERMS_DIFFER_EXIT_CODE,
        );
      }
    });
  return [forecast, exchangeTerms];
}
