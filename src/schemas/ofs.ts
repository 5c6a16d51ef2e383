/**
 * Wire shapes of the console's reading calls: the registered OFS issues (GET /transactional/v1/ofs/issues),
 * an issue's book of demand for operators (GET /operator/v1/ofs/{exchange}/{scrip_token}/book), and the
 * caller's profile (GET /authentication/v1/user/profile), which tells a console whether to offer the book.
 * Prices are rupees as JSON numbers and instants ISO 8601 in UTC, as in the issue import format.
 */
import Type, { type Static, type TObject } from 'typebox';
import { Errors } from '../domain/errors.js';
import { ISSUE_STATES, WINDOW_STATES } from '../domain/ofs/issue/book.js';
import { MARGIN_TYPES, USER_CATEGORIES } from '../domain/ofs/offer/offer.js';
import { SuccessEnvelope, withCode } from './common.js';

const Instant = (description: string) =>
  Type.String({ format: 'date-time', description, examples: ['2026-11-24T03:45:00.000Z'] });
const Rupees = (description: string) => Type.Number({ minimum: 0, description, examples: [101.5] });
/**
 * A number of shares; a sum of bids may pass 2^53 (issue 47 row 3), so the answer carries every digit of a
 * bigint (the serializer writes it as a JSON integer). A JavaScript client that needs such sums exactly
 * parses the answer with a big-number reader.
 */
export const Shares = (description: string) =>
  Type.Unsafe<number | bigint>({ type: 'integer', minimum: 0, description });

/**
 * An object or null, as `type: ["object", "null"]` (OpenAPI 3.1) rather than a union: the serializer picks
 * the branch by looking, where for a union it validates, and a validator takes no bigint for an integer,
 * so that a Shares sum inside would fail the answer.
 */
export function ObjectOrNull<T extends TObject>(schema: T) {
  return Type.Unsafe<Static<T> | null>({ ...schema, type: ['object', 'null'] });
}
/** A string of one of `values` (shared by the OFS wire shapes). */
export const StringEnum = <const Values extends string[]>(values: readonly [...Values], description: string) =>
  Type.Enum([...values], { type: 'string', description });

const WindowState = (description: string) =>
  StringEnum(
    WINDOW_STATES,
    `${description}: UPCOMING before it opens, OPEN while bids are taken (opens_at <= now < closes_at), CLOSED after.`,
  );

export const OfsIssueEntry = Type.Object(
  {
    exchange: StringEnum(['NSE_EQ', 'BSE_EQ'], 'Exchange segment.'),
    scrip_token: Type.Integer({ description: 'Exchange token of the instrument.' }),
    symbol: Type.String({ description: 'Trading symbol.' }),
    series: Type.String({ description: 'Series.' }),
    floor_price: Rupees('Floor price in rupees; no bid below it.'),
    tick_size: Rupees('Tick size in rupees; every price is a multiple of it.'),
    offer_quantity: Shares('Shares offered.'),
    retail_reserve_pct: Type.Number({ description: 'Percent of the offer reserved for retail bidders (at least 10).' }),
    retail_cutoff_price: Type.Union(
      [Rupees('Retail cut-off price in rupees: cut-off bids (RL-MKT) are valued and traded at it.'), Type.Null()],
      {
        description: 'Retail cut-off price in rupees; null until it is set (day T).',
      },
    ),
    allocation: StringEnum(['PROPORTIONATE', 'PRICE_PRIORITY'], 'How an oversubscribed portion is allotted.'),
    order_value_upper_limit: Type.Union([Type.Number(), Type.Null()], {
      description:
        "The series' order value upper limit in rupees, as the exchange sets it for the issue: a bid's value (quantity times price; a cut-off bid at the retail cut-off) above it is refused (e-383). Null: none.",
    }),
    non_retail_opens_at: Instant('Start of the non-retail window (day T).'),
    non_retail_closes_at: Instant('End of the non-retail window.'),
    retail_opens_at: Instant('Start of the retail window (day T+1).'),
    retail_closes_at: Instant('End of the retail window.'),
    retail_window: WindowState('The retail window'),
    non_retail_window: WindowState('The non-retail window'),
    allocated: Type.Boolean({ description: 'Whether the allocation has run (within seconds of the later close).' }),
    state: StringEnum(
      ISSUE_STATES,
      "ALLOCATED once the allocation has run; before that, the state of the window of the caller's own category (retail_window or non_retail_window).",
    ),
  },
  { additionalProperties: false, description: 'A registered OFS issue and where its windows stand now.' },
);
export type OfsIssueEntry = Static<typeof OfsIssueEntry>;

const ServerTime = Instant(
  "The server's clock when it answered: count down to a window's open or close from it, not from the client's clock.",
);

export const OfsIssuesData = Type.Object(
  {
    server_time: ServerTime,
    issues: Type.Array(OfsIssueEntry, {
      description:
        'Every registered issue, allocated ones included; newest windows first (by the later of the two openings).',
    }),
  },
  { additionalProperties: false },
);
export type OfsIssuesData = Static<typeof OfsIssuesData>;

export const OfsIssuesResponse = SuccessEnvelope(OfsIssuesData, 'OFS issues fetched successfully');

/** A path that names no registered issue answers 404 e-361, as an unknown issue does. */
export const OfsBookParams = Type.Object(
  {
    exchange: withCode(Errors.OFS_ISSUE_UNKNOWN, StringEnum(['NSE_EQ', 'BSE_EQ'], 'Exchange segment of the issue.')),
    scrip_token: withCode(
      Errors.OFS_ISSUE_UNKNOWN,
      Type.String({
        pattern: '^[1-9][0-9]{0,9}$',
        description: 'Exchange token of the issue, in decimal digits.',
        examples: ['500112'],
      }),
    ),
  },
  { additionalProperties: false },
);
export type OfsBookParams = Static<typeof OfsBookParams>;

const DemandLevel = Type.Object(
  {
    price: Rupees('The price level in rupees; cut-off bids count at the retail cut-off price.'),
    retail_quantity: Shares('Shares bid by retail bidders at this price.'),
    retail_cutoff_quantity: Shares('The part of retail_quantity bid at cut-off (RL-MKT).'),
    non_retail_quantity: Shares('Shares bid by non-retail bidders at this price.'),
    retail_cumulative: Shares('Retail shares bid at this price or above.'),
    non_retail_cumulative: Shares('Non-retail shares bid at this price or above.'),
    bids: Shares('How many bids this level sums.'),
  },
  { additionalProperties: false },
);

const CategoryClearing = (category: string) =>
  Type.Object(
    {
      portion: Shares(
        `The shares ${category} bidders can be allotted: their part of the offer, plus what the other category leaves unsubscribed, or minus what ${category} leaves to it.`,
      ),
      demand: Shares(`Shares bid by ${category} bidders in all (eligible live bids).`),
      price: Type.Union([Rupees('The clearing price in rupees.'), Type.Null()], {
        description:
          'When demand exceeds portion: with PROPORTIONATE allocation the one price the allotted bids trade at (cut-off bids at the cut-off price), with PRICE_PRIORITY the lowest price allotted. Null when demand fits the portion (every bid is allotted in full: at the lowest bid price with PROPORTIONATE, at its own price with PRICE_PRIORITY) or nothing is left of it.',
      }),
    },
    {
      additionalProperties: false,
      description: `What the ${category} demand implies, worked out by the allocation's own rules as if the windows closed now.`,
    },
  );

const AllottedLevel = Type.Object(
  {
    price: Rupees('The trade price in rupees.'),
    retail_quantity: Shares('Shares allotted to retail bidders at this price.'),
    non_retail_quantity: Shares('Shares allotted to non-retail bidders at this price.'),
  },
  { additionalProperties: false },
);

const Ineligible = (bids: 'live bids' | 'bids') =>
  Type.Object(
    {
      retail_quantity: Shares(`Retail shares of the ${bids} the allocation would refuse.`),
      non_retail_quantity: Shares(`Non-retail shares of the ${bids} the allocation would refuse.`),
      bids: Shares('How many such bids.'),
    },
    {
      additionalProperties: false,
      description: `${bids === 'bids' ? 'Bids' : 'Live bids'} left out of demand because the allocation would not allot them: the issue was re-registered with a higher floor price, or without a retail cut-off price for its cut-off bids.`,
    },
  );

const Clearing = Type.Object(
  { retail: CategoryClearing('retail'), non_retail: CategoryClearing('non-retail') },
  { additionalProperties: false },
);

export const OfsBookData = Type.Object(
  {
    server_time: ServerTime,
    issue: OfsIssueEntry,
    offer: Type.Object(
      {
        total: Shares('Shares offered.'),
        retail: Shares('The retail reserve: offer times retail_reserve_pct / 100, rounded down.'),
        non_retail: Shares('The rest of the offer.'),
      },
      { additionalProperties: false },
    ),
    demand: Type.Array(DemandLevel, {
      description:
        'The live bids (queued, sent or pending at the exchange) by price, highest first. After the allocation none are left: at_close keeps the demand it took.',
    }),
    ineligible: Ineligible('live bids'),
    clearing: Clearing,
    allotted: ObjectOrNull(
      Type.Object(
        {
          retail: Shares('Shares allotted to retail bidders.'),
          non_retail: Shares('Shares allotted to non-retail bidders.'),
          by_price: Type.Array(AllottedLevel, { description: 'By trade price, highest first.' }),
        },
        {
          additionalProperties: false,
          description: "What the allocation allotted (the executed orders' traded quantities); null until it has run.",
        },
      ),
    ),
    at_close: ObjectOrNull(
      Type.Object(
        {
          demand: Type.Array(DemandLevel, {
            description:
              'Every bid the allocation took, by bid price, highest first, with the quantity bid: those it allotted (EXECUTED), those it closed without an allotment, and any still waiting for its answer. Bids cancelled by their bidders or rejected are not in it.',
          }),
          ineligible: Ineligible('bids'),
          clearing: Clearing,
        },
        {
          additionalProperties: false,
          description:
            "Null until the allocation has run (as allotted); then the book as the allocation took it at close, which stays when no bid is live any more: its demand and what that demand implies by the allocation's rules (demand, ineligible and clearing over the bids the allocation took instead of the live ones).",
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type OfsBookData = Static<typeof OfsBookData>;

export const OfsBookResponse = SuccessEnvelope(OfsBookData, 'OFS book fetched successfully');

export const ProfileData = Type.Object(
  {
    user_id: Type.String({ description: 'The caller.' }),
    category: StringEnum(
      ['RETAIL', 'NON_RETAIL'],
      'The bidder category an OFS issue of the one-listing model sees: which window the caller bids in there.',
    ),
    offer_category: StringEnum(
      [...USER_CATEGORIES],
      'The OFS category the operator set: RETAIL, NII (individuals above Rs 2 lakh, HUFs, corporates), MF, IC or OTHS.',
    ),
    margin_type: StringEnum(
      [...MARGIN_TYPES],
      "The margin of the caller's offer bids: H (100 %) or T (0 %, institutions whose custodian confirms).",
    ),
    operator: Type.Boolean({ description: 'Whether the caller is an operator, who may read the book of every issue.' }),
  },
  { additionalProperties: false },
);
export type ProfileData = Static<typeof ProfileData>;

export const ProfileResponse = SuccessEnvelope(ProfileData, 'Profile fetched successfully');
