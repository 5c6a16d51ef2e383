/** The import format of `ordergate ofs import`: a JSON array of OFS issues (product.md). */
import Type, { type Static } from 'typebox';
import {
  EXCHANGE_SERIES_PATTERN,
  EXCHANGE_SERIES_RULE,
  EXCHANGE_SYMBOL_PATTERN,
  EXCHANGE_SYMBOL_RULE,
} from '../domain/ofs/display-text.js';

const Instant = (description: string) => Type.String({ format: 'date-time', description });
const Rupees = (description: string) => Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000, description });

/** Seconds from an allotment to its settlement, up to 30 days; `absent` says what no value means. */
export const SettlementDelaySeconds = (absent: string) =>
  Type.Optional(
    Type.Integer({
      minimum: 0,
      maximum: 30 * 24 * 60 * 60,
      description: `Seconds from an allotment to its settlement (the shares become a holding); ${absent}`,
    }),
  );

/**
 * An exchange's symbol and series, only as the exchanges write them (domain/ofs/display-text.ts): nothing
 * else reaches the database or a line of the CLI's output. The description is what a refusal says.
 */
export const ExchangeSymbol = (description: string) =>
  Type.String({ pattern: EXCHANGE_SYMBOL_PATTERN, description: `${description}: ${EXCHANGE_SYMBOL_RULE}.` });
export const ExchangeSeries = (description: string) =>
  Type.String({ pattern: EXCHANGE_SERIES_PATTERN, description: `${description}: ${EXCHANGE_SERIES_RULE}.` });

/** An order value upper limit in rupees, up to Rs 90 lakh crore (its paise stay exact as a number): an issue's, an offer's series'. */
export const ValueLimit = (description: string) =>
  Type.Number({ exclusiveMinimum: 0, maximum: 90_000_000_000_000, description });

export const OfsIssueImport = Type.Object(
  {
    exchange: Type.Enum(['NSE_EQ', 'BSE_EQ']),
    scrip_token: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    symbol: ExchangeSymbol("The issue's symbol"),
    series: ExchangeSeries('The series its bids are sent in (NSE: OF)'),
    floor_price: Rupees('Floor price in rupees; no bid below it.'),
    tick_size: Rupees('Tick size in rupees, e.g. 0.05.'),
    offer_quantity: Type.Integer({ minimum: 1, maximum: 999_999_999_999_999 }),
    // A whole percent: allocation splits the offer in whole shares with integer arithmetic.
    retail_reserve_pct: Type.Integer({
      minimum: 10,
      maximum: 100,
      description: 'At least 10% is reserved for retail, in whole percent.',
    }),
    retail_cutoff_price: Type.Union([Rupees('Set once day T closes.'), Type.Null()]),
    allocation: Type.Enum(['PROPORTIONATE', 'PRICE_PRIORITY']),
    non_retail_opens_at: Instant('Start of the non-retail window (day T).'),
    non_retail_closes_at: Instant('End of the non-retail window.'),
    retail_opens_at: Instant('Start of the retail window (day T+1).'),
    retail_closes_at: Instant('End of the retail window.'),
    settlement_delay_seconds: SettlementDelaySeconds('absent: T+1, 09:00 India time the next day.'),
    order_value_upper_limit: Type.Optional(
      ValueLimit(
        "The series' order value upper limit in rupees, as the exchange sets it for the issue (NSE's orderValueUpperLimit): a bid's value (quantity times price; a cut-off bid at the retail cut-off) above it is refused (e-383). Absent: none.",
      ),
    ),
  },
  { additionalProperties: false },
);
export type OfsIssueImport = Static<typeof OfsIssueImport>;

export const OfsIssueImportFile = Type.Array(OfsIssueImport, { minItems: 1, maxItems: 1000 });
