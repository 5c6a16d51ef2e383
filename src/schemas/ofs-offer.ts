/**
 * The import format of an OFS offer under the SEBI framework (shared/spec/ofs-framework.md, "What users
 * and operators see"): `ordergate ofs import` takes a JSON array whose entries are offers (they carry
 * `offer_id`) or issues of the one-listing format (schemas/ofs-issue.ts). The field names are fixed, so
 * that every tool reads the same file.
 */
import Type, { type Static } from 'typebox';
import { ALLOTMENT_OUTCOMES, ALLOTMENT_REASONS } from '../domain/ofs/offer/allotment-explained.js';
import { OFFER_CATEGORIES, OFFER_STATES } from '../domain/ofs/offer/offer.js';
import { PagedEnvelope, SuccessEnvelope } from './common.js';
import { PAGE_QUERY_FIELDS, PageMetadata } from './odin-fields.js';
import { ObjectOrNull, Shares, StringEnum } from './ofs.js';
import { ExchangeSeries, ExchangeSymbol, SettlementDelaySeconds, ValueLimit } from './ofs-issue.js';

/** An instant of the years 1900 to 2999: the trading calendar's arithmetic stays in four-digit years. */
const Instant = (description: string) =>
  Type.String({ format: 'date-time', pattern: '^(19|2\\d)\\d\\d-', description });
const Rupees = (description: string) => Type.Number({ exclusiveMinimum: 0, maximum: 1_000_000_000, description });
const Quantity = (minimum: number, description: string) =>
  Type.Integer({ minimum, maximum: 999_999_999_999_999, description });

const Session = (description: string) =>
  Type.Object(
    { opens_at: Instant('When bids are first taken.'), closes_at: Instant('When bids are no longer taken.') },
    { additionalProperties: false, description },
  );

const Discount = (description: string) =>
  Type.Union(
    [
      Type.Object({ rupees: Rupees('So many rupees off the price.') }, { additionalProperties: false }),
      Type.Object(
        {
          pct: Type.Number({
            exclusiveMinimum: 0,
            exclusiveMaximum: 100,
            description: 'So many percent off the price, with at most two decimals.',
          }),
        },
        { additionalProperties: false },
      ),
      Type.Null(),
    ],
    { description },
  );

export const OfsListingImport = Type.Object(
  {
    exchange: Type.Enum(['NSE_EQ', 'BSE_EQ']),
    scrip_token: Type.Integer({ minimum: 1, maximum: 2147483647 }),
    series: Type.Object(
      {
        RETAIL: ExchangeSeries('The series retail bids are sent in (NSE: RS)'),
        NON_RETAIL: ExchangeSeries('The series non-retail bids are sent in (NSE: IS)'),
        EMPLOYEE: Type.Optional(
          Type.Union([ExchangeSeries('The series employee bids are sent in (NSE: ES)'), Type.Null()], {
            description: 'Absent or null: none on this listing.',
          }),
        ),
      },
      { additionalProperties: false },
    ),
    order_value_upper_limit: Type.Optional(
      Type.Object(
        {
          RETAIL: Type.Optional(ValueLimit('Retail series.')),
          NON_RETAIL: Type.Optional(ValueLimit('Non-retail series.')),
          EMPLOYEE: Type.Optional(ValueLimit('Employee series.')),
        },
        {
          additionalProperties: false,
          description:
            "Each series' order value upper limit in rupees, as the exchange sets it for the offer (NSE's orderValueUpperLimit): a bid's value (quantity times price; a cut-off bid at the cut-off) above it is refused (e-383). Absent: none.",
        },
      ),
    ),
  },
  { additionalProperties: false },
);

export const OfsOfferImport = Type.Object(
  {
    offer_id: Type.String({
      pattern: '^[A-Za-z0-9._-]{1,40}$',
      description: "The offer's id: 1 to 40 letters, digits, dots, dashes or underscores.",
    }),
    symbol: ExchangeSymbol("The offer's symbol"),
    listings: Type.Array(OfsListingImport, {
      minItems: 1,
      maxItems: 2,
      description: 'One per exchange: NSE_EQ and/or BSE_EQ.',
    }),
    floor_price: Rupees('Floor price in rupees; no non-retail bid below it.'),
    tick_size: Rupees('Tick size in rupees: 0.01, 0.05 and 0.10 all occur.'),
    base_quantity: Quantity(1, 'Shares offered, without the green shoe.'),
    green_shoe_quantity: Type.Optional(Quantity(0, 'The over-allotment option; absent: 0.')),
    green_shoe_exercised: Type.Optional(
      Type.Union([Type.Boolean(), Quantity(0, 'Shares of the green shoe exercised.')], {
        description:
          "The default decision: the shares of the green shoe exercised (true: all, false: none; absent: none). It stands at green_shoe_decision_by unless the operator records the seller's decision before (`ordergate ofs green-shoe`).",
      }),
    ),
    green_shoe_decision_by: Type.Optional(
      Instant(
        "The deadline of the seller's green-shoe decision: the T allocation waits for it (or this) once T closes. Absent: 17:00 India time on T (or T's close when later). Between t_day.closes_at and t1_day.opens_at.",
      ),
    ),
    retail_reserve_pct: Type.Number({
      minimum: 10,
      maximum: 100,
      description: 'At least 10 % of the total is reserved for retail (12.5 and 20 occur), with at most two decimals.',
    }),
    retail_discount: Type.Optional(Discount('The retail discount: {"rupees": 10}, {"pct": 5} or null (absent: none).')),
    retail_allocation_price: Type.Optional(
      Type.Enum(['UNIFORM', 'BID'], {
        description:
          'UNIFORM: every retail allotment at the retail cut-off less the discount; BID: at its own price less the discount. Absent: UNIFORM.',
      }),
    ),
    employee_quantity: Type.Optional(Quantity(0, 'Shares for eligible employees, on top of the total; absent: 0.')),
    employee_green_shoe_quantity: Type.Optional(
      Quantity(
        0,
        "The employees' part of the green shoe, exercised in the offer's proportion (rounded up); absent: 0.",
      ),
    ),
    employee_discount: Type.Optional(Discount('The employee discount, as retail_discount.')),
    allocation: Type.Enum(['PROPORTIONATE', 'PRICE_PRIORITY']),
    t_day: Session('Day T: non-retail bids.'),
    t1_day: Session('Day T+1: retail, employee and carried-forward bids.'),
    settlement_delay_seconds: SettlementDelaySeconds(
      'absent: by trading day (T-day allotments on T+1, T+1 allotments on T+2, at the 13:30 India time pay-out). Set, the offer is a drill: its days need not be trading days.',
    ),
    portions: Type.Optional(
      Type.Object(
        {
          retail_reserved: Quantity(0, 'The retail reservation as printed.'),
          non_retail: Quantity(
            0,
            'The non-retail portion as printed; with retail_reserved, the total of the default decision.',
          ),
          mf_ic_reserved: Type.Optional(
            Quantity(0, 'The MF/IC reservation as printed (at least 25 % of the total); absent: computed.'),
          ),
          employee: Type.Optional(Quantity(0, 'The employee portion as printed; absent: computed.')),
        },
        {
          additionalProperties: false,
          description:
            "The portions as the exchange's notice prints them, for the default green-shoe decision: they win over the computed ones while that is the decision.",
        },
      ),
    ),
  },
  { additionalProperties: false },
);
export type OfsOfferImport = Static<typeof OfsOfferImport>;

// ---- The read calls: GET /transactional/v1/ofs/offers and /transactional/v1/ofs/offers/{offer_id} ----

const Price = (description: string) => Type.Number({ description });
const IndicativeFigures = (description: string) =>
  Type.Object(
    { price: Type.Union([Type.Number(), Type.Null()]), quantity: Shares('The shares they bid.') },
    { additionalProperties: false, description },
  );
const NullablePrice = (description: string) => Type.Union([Type.Number(), Type.Null()], { description });
const NullableInstant = (description: string) => Type.Union([Type.String(), Type.Null()], { description });
const DiscountOut = (description: string) =>
  Type.Union(
    [
      Type.Object({ rupees: Type.Number() }, { additionalProperties: false }),
      Type.Object({ pct: Type.Number() }, { additionalProperties: false }),
      Type.Null(),
    ],
    {
      description,
    },
  );

export const OfsOfferEntry = Type.Object(
  {
    offer_id: Type.String(),
    symbol: Type.String(),
    listings: Type.Array(
      Type.Object(
        {
          exchange: StringEnum(['NSE_EQ', 'BSE_EQ'], 'Exchange segment of the listing.'),
          scrip_token: Type.Integer(),
          series: Type.Object(
            { RETAIL: Type.String(), NON_RETAIL: Type.String(), EMPLOYEE: Type.Union([Type.String(), Type.Null()]) },
            { additionalProperties: false, description: 'The series each category bids in on this listing.' },
          ),
          order_value_upper_limit: Type.Object(
            {
              RETAIL: Type.Union([Price('Rupees.'), Type.Null()]),
              NON_RETAIL: Type.Union([Price('Rupees.'), Type.Null()]),
              EMPLOYEE: Type.Union([Price('Rupees.'), Type.Null()]),
            },
            {
              additionalProperties: false,
              description:
                "Each series' order value upper limit in rupees (null: none): a bid's value above it is refused (e-383).",
            },
          ),
        },
        { additionalProperties: false },
      ),
    ),
    floor_price: Price('Rupees.'),
    tick_size: Price('Rupees.'),
    base_quantity: Type.Integer(),
    green_shoe_quantity: Type.Integer(),
    green_shoe_exercised: Type.Integer({
      description:
        "Shares of the green shoe exercised: the seller's decision once recorded, else the import's default, which stands at green_shoe_decision_by; fixed once the T allocation runs.",
    }),
    green_shoe_decided_at: NullableInstant(
      "When the operator recorded the seller's green-shoe decision; null: not yet (the default stands at the deadline).",
    ),
    green_shoe_decision_by: Type.String({
      description: "The deadline of the seller's green-shoe decision (17:00 India time on T unless the notice says).",
    }),
    retail_reserve_pct: Type.Number(),
    portions: Type.Object(
      {
        total: Type.Integer({ description: 'Base plus the green shoe when exercised.' }),
        retail_reserved: Type.Integer({ description: 'ceil(retail_reserve_pct x total / 100).' }),
        non_retail: Type.Integer({ description: 'total - retail_reserved: allotted on T.' }),
        mf_ic_reserved: Type.Integer({
          description: 'ceil(25 % of total), out of the non-retail portion, for mutual funds and insurers first.',
        }),
        employee: Type.Integer({ description: 'On top of the total.' }),
        single_bidder_cap: Type.Integer({
          description: 'floor(25 % of total): the most any bidder but an MF or IC is allotted.',
        }),
        source: StringEnum(
          ['notice', 'computed'],
          "notice: the portions as the exchange's notice printed them for this green-shoe decision (they win); computed: by the rules above.",
        ),
      },
      {
        additionalProperties: false,
        description: 'The offer in shares, as the exchanges print it, for the green-shoe decision in force.',
      },
    ),
    employee_quantity: Type.Integer({
      description: 'Shares for eligible employees, on top of the total, without their green-shoe part.',
    }),
    employee_green_shoe_quantity: Type.Integer({
      description:
        "The employees' part of the green shoe; exercised in the offer's proportion, it is in portions.employee.",
    }),
    retail_discount: DiscountOut('{"rupees": n}, {"pct": n} or null.'),
    retail_allocation_price: StringEnum(
      ['UNIFORM', 'BID'],
      'UNIFORM: every retail allotment at the T-day cut-off less the discount; BID: at its own price less it (price priority only).',
    ),
    employee_discount: DiscountOut('{"rupees": n}, {"pct": n} or null.'),
    allocation: StringEnum(['PROPORTIONATE', 'PRICE_PRIORITY'], 'How an oversubscribed portion is allotted.'),
    t_day: Type.Object(
      { opens_at: Type.String(), closes_at: Type.String() },
      { additionalProperties: false, description: 'Day T: non-retail bids.' },
    ),
    t1_day: Type.Object(
      { opens_at: Type.String(), closes_at: Type.String() },
      { additionalProperties: false, description: 'Day T+1: retail, employee and carried-forward bids.' },
    ),
    current_day: StringEnum(
      ['T-1', 'T', 'T+1', 'CLOSED'],
      "Which day it is by the server's clock: T-1 before T opens, T until T+1 opens, T+1 until it closes, CLOSED after.",
    ),
    state: StringEnum(
      ['ANNOUNCED', 'T_OPEN', 'T_ALLOCATED', 'T1_OPEN', 'ALLOCATED', 'CANCELLED'],
      'ANNOUNCED until T opens; T_OPEN until the T allocation has run (it waits for the operator when non-retail demand is short); T_ALLOCATED until T+1 opens; T1_OPEN until the T+1 allocation; ALLOCATED after it; CANCELLED when the operator cancelled the offer.',
    ),
    t_cutoff_price: NullablePrice(
      'The T-day cut-off price the T allocation found; null until it has run. Retail bids on T+1 are at or above it.',
    ),
    employee_price: NullablePrice(
      'What employees pay: the T-day cut-off less the employee discount; null until the cut-off is known.',
    ),
    retail_cutoff_price: NullablePrice(
      'The retail clearing price the T+1 allocation found (the T-day cut-off unless retail was oversubscribed); null until it has run. It decides who is allotted, not what UNIFORM allottees pay.',
    ),
    retail_price: NullablePrice(
      'UNIFORM: what every retail allotment pays, the T-day cut-off less the retail discount; null until the T allocation has found the cut-off, and for BID (each bid pays its own price less the discount).',
    ),
    indicative: ObjectOrNull(
      Type.Object(
        {
          at: Type.String({ description: 'When the exchange published these figures.' }),
          price: NullablePrice('The volume-weighted average price of all valid non-retail bids; null when none.'),
          quantity: Shares('The shares they bid (every digit, past 2^53 too).'),
          margin_100: IndicativeFigures('100 %-margin (H) bids.'),
          margin_0: IndicativeFigures('0 %-margin (T) bids.'),
        },
        {
          additionalProperties: false,
          description:
            'The indicative price the exchange publishes through T (the latest figures); null before the first non-retail bid is published. None is published for retail.',
        },
      ),
    ),
    awaiting_operator: Type.Boolean({
      description:
        'True when the exchange has held the T allocation because T closed with valid non-retail demand (each bidder counted within the single-bidder cap) short of the non-retail portion: it waits for the operator to go on (`ordergate ofs proceed`) or cancel the offer.',
    }),
    awaiting_green_shoe_until: NullableInstant(
      "Set when T has closed and the seller's green-shoe decision is not recorded: the T allocation waits for it until this instant, then takes the default decision.",
    ),
    settlement: Type.String({
      description:
        '"by-day" (T-day allotments settle on T+1, T+1 allotments on T+2, trading days), or "<seconds>s" after each allotment (a drill offer).',
    }),
    settlement_dates: Type.Union(
      [
        Type.Object(
          {
            t_day: Type.String({
              description: 'When T-day allotments are paid out: 13:30 India time on the first trading day after T.',
            }),
            t1_day: Type.String({
              description: 'When T+1 allotments are paid out: 13:30 India time on the first trading day after T+1.',
            }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      {
        description:
          'The pay-out instants by the trading calendar (weekends and the imported holidays); null for a drill offer.',
      },
    ),
  },
  { additionalProperties: false },
);
export type OfsOfferEntry = Static<typeof OfsOfferEntry>;

export const OfsOffersData = Type.Object(
  {
    server_time: Type.String({ description: "The server's clock, to count down from." }),
    offers: Type.Array(OfsOfferEntry, {
      description: 'This page of the offers the `state` filter keeps, T day latest first, then by offer_id.',
    }),
  },
  { additionalProperties: false },
);
export type OfsOffersData = Static<typeof OfsOffersData>;

/** The offers list's page size: 50 by default, at most 200 (an offer is about 1 KB of JSON: a page stays within about 200 KB). */
export const DEFAULT_OFFERS_PAGE_SIZE = 50;
export const MAX_OFFERS_PAGE_SIZE = 200;
/** How long a finished offer (allocated or cancelled) stays among the current ones: its results through the settlement. */
export const CURRENT_OFFER_DAYS = 7;

/** The offers list's `state` filter: the current offers (the default), all of them, or those in one state. */
export const OFFER_LIST_STATES = ['current', 'all', ...OFFER_STATES] as const;
export type OfferListState = (typeof OFFER_LIST_STATES)[number];

/** The order book's paging parameters (ODIN's `offset` page and `limit` size), with the offers' page size and their filter. */
export const OfsOffersQuery = Type.Object(
  {
    offset: PAGE_QUERY_FIELDS.offset,
    limit: Type.Optional(
      Type.String({
        pattern: '^(200|1[0-9]{2}|[1-9][0-9]?)$',
        description: `The page size, 1 to ${MAX_OFFERS_PAGE_SIZE} (default ${DEFAULT_OFFERS_PAGE_SIZE}).`,
        examples: ['50'],
      }),
    ),
    state: Type.Optional(
      StringEnum(
        OFFER_LIST_STATES,
        `Which offers: current (the default) those not finished (ANNOUNCED, T_OPEN, T_ALLOCATED, T1_OPEN) and the finished ones (ALLOCATED, CANCELLED) whose T+1 closed, or that finished, less than ${CURRENT_OFFER_DAYS} days ago, so that their results stay in view through the settlement; all: every offer; or one state by the server's clock.`,
      ),
    ),
  },
  { additionalProperties: false },
);
export type OfsOffersQuery = Static<typeof OfsOffersQuery>;

export const OfsOfferData = Type.Object(
  {
    server_time: Type.String(),
    offer: OfsOfferEntry,
    indicative_history: Type.Array(
      Type.Object(
        { at: Type.String(), price: Type.Union([Type.Number(), Type.Null()]), quantity: Shares('The shares bid.') },
        { additionalProperties: false },
      ),
      {
        description:
          'The indicative price of all valid non-retail bids each time the exchange published a change, the latest 500, oldest first: the T session as a chart.',
      },
    ),
  },
  { additionalProperties: false },
);
export type OfsOfferData = Static<typeof OfsOfferData>;

const BookFigures = {
  bids: Type.Integer({ description: 'Bids live or allotted.' }),
  open_quantity: Shares('Shares the live bids still bid for.'),
  allotted_quantity: Shares('Shares allotted (on T and T+1).'),
  allotted_value: Type.Number({ description: 'What the allotments cost, in rupees (exact up to Rs 90 lakh crore).' }),
};

/** An offer's book (operators only): the broker's bids per category and listing, and the open non-retail demand by price. */
export const OfsOfferBookData = Type.Object(
  {
    server_time: Type.String(),
    offer: OfsOfferEntry,
    categories: Type.Array(
      Type.Object(
        {
          category: StringEnum(OFFER_CATEGORIES, 'The bid category.'),
          ...BookFigures,
          by_listing: Type.Array(
            Type.Object(
              { exchange: Type.String(), scrip_token: Type.Integer(), ...BookFigures },
              { additionalProperties: false },
            ),
          ),
        },
        { additionalProperties: false },
      ),
      {
        description:
          "Every category in the framework's order; its portion is in offer.portions (MF and IC share mf_ic_reserved, then the rest of non_retail with NII and OTHS).",
      },
    ),
    non_retail_demand: Type.Array(
      Type.Object(
        {
          price: Type.Number(),
          quantity: Shares('Open non-retail shares at this price.'),
          cumulative: Shares('Open non-retail demand at or above this price.'),
          bids: Type.Integer(),
        },
        { additionalProperties: false },
      ),
      { description: 'The live non-retail bids by price, highest first.' },
    ),
  },
  { additionalProperties: false },
);
export type OfsOfferBookData = Static<typeof OfsOfferBookData>;
export const OfsOfferBookResponse = SuccessEnvelope(OfsOfferBookData, 'OFS offer book fetched successfully');

export const OfsOfferParams = Type.Object(
  { offer_id: Type.String({ minLength: 1, maxLength: 200 }) },
  { additionalProperties: false },
);

export const OfsOffersResponse = PagedEnvelope(OfsOffersData, PageMetadata, 'OFS offers fetched successfully');
export const OfsOfferResponse = SuccessEnvelope(OfsOfferData, 'OFS offer fetched successfully');

// ---- The allotment explained: GET /transactional/v1/ofs/offers/{offer_id}/allotment (issue 51) ----

const Rupee = (description: string) => Type.Number({ description });
const Count = (description: string) => Type.Integer({ description });

export const AllotmentDay = Type.Object(
  {
    day: StringEnum(['T', 'T+1'], 'The allocation day: T (non-retail) or T+1 (retail, employees, carried forward).'),
    bid_quantity: Count(
      "What the bid asked of that day's allocation: on T its quantity at T's close; on T+1 a retail or employee bid's quantity, a non-retail bid's what it carried forward (or, not carried forward, what T left of it).",
    ),
    allotted_quantity: Count('Shares allotted that day.'),
    price: NullablePrice(
      'The trade price that day in rupees (the average when more than one); null: nothing allotted.',
    ),
    value: Rupee(
      "Rupees debited from the funds account for that day's allotment; 0 when nothing was, or the bid is not funds-checked (a 0 %-margin bid, or a bidder without a funds account).",
    ),
    reason: StringEnum(
      ALLOTMENT_REASONS,
      "Why: AWAITING_ALLOCATION (the day's allocation has not reached the bid), ALLOTTED_IN_FULL, PROPORTIONATE (shared in proportion at or above the clearing price), PRICE_PRIORITY (higher bids first; the bid was at the lowest price allotted), SINGLE_BIDDER_CAP (the bidder's allotments in the offer reached 25 % of it), BELOW_CUTOFF (below the T-day cut-off), BELOW_RETAIL_CUTOFF (below the retail cut-off), NOT_CARRIED_FORWARD, NOTHING_LEFT_FOR_CARRIED_FORWARD (retail left no shares for it), REJECTED, CANCELLED (by the bidder), OFFER_CANCELLED. Derived from the cut-offs, the cap and the bid's own record: the exchanges report no reason.",
    ),
    explanation: Type.String({
      description: 'One sentence in a trader\'s words: rupees in the Indian grouping, times in India time ("IST").',
    }),
    settles_at: NullableInstant("When that day's allotment is paid out (ISO instant); null: nothing allotted."),
  },
  { additionalProperties: false },
);

export const AllotmentBid = Type.Object(
  {
    order_id: Type.String({ description: "The bid's order id." }),
    exchange: Type.String({ description: 'The listing it was placed on: NSE_EQ or BSE_EQ.' }),
    symbol: Type.String({ description: "The listing's symbol." }),
    series: Type.String({ description: 'The series it was placed in.' }),
    bid_category: StringEnum(OFFER_CATEGORIES, 'The bid category.'),
    margin_type: StringEnum(['H', 'T'], 'H: 100 % margin; T: 0 % margin (blocks and debits nothing).'),
    status: Type.String({ description: "The order's status now (the order book's)." }),
    price: NullablePrice('The bid price in rupees as it stands now; null: a cut-off bid.'),
    quantity: Count('The whole bid, as it stands now.'),
    carried_forward: Type.Boolean({ description: 'Carried forward to T+1.' }),
    outcome: StringEnum(
      ALLOTMENT_OUTCOMES,
      'AWAITING (still live, or a day not yet allocated), ALLOTTED (in full), PART_ALLOTTED, NOT_ALLOTTED, REJECTED, CANCELLED (by the bidder or with the offer, nothing allotted).',
    ),
    allotted_quantity: Count('Shares allotted over both days.'),
    not_allotted_quantity: Count('quantity - allotted_quantity: not allotted (while AWAITING, not yet).'),
    average_price: NullablePrice('Rupees paid per share over its allotments (to the paisa); null: none.'),
    days: Type.Array(AllotmentDay, {
      description:
        "Each day that concerns the bid, T first: a non-retail bid's T, and T+1 when T left some of it; a retail or employee bid's T+1.",
    }),
    funds: Type.Object(
      {
        blocked: Rupee('Rupees the bid still blocks now.'),
        debited: Rupee('Rupees its allotments debited.'),
        released: Rupee('Rupees released back to the account (unallotted, cancelled, lowered).'),
      },
      {
        additionalProperties: false,
        description:
          'From the funds ledger: debited + released + blocked is what it ever blocked. All 0 for a bid that is not funds-checked.',
      },
    ),
    explanation: Type.String({ description: "One line summing the bid up, in a trader's words." }),
  },
  { additionalProperties: false },
);

export const OfsAllotmentData = Type.Object(
  {
    server_time: Type.String({ description: "The server's clock (ISO instant)." }),
    offer_id: Type.String({ description: "The offer's id." }),
    state: StringEnum(OFFER_STATES, "The offer's state, as its read call answers it."),
    allocated: Type.Object(
      {
        t_day: Type.Boolean({
          description: "The T allocation has run: the offer records it, or one of the caller's bids shows its report.",
        }),
        t1_day: Type.Boolean({ description: 'The T+1 allocation has run (likewise).' }),
      },
      { additionalProperties: false, description: "Whether each day's allocation has run." },
    ),
    t_cutoff_price: NullablePrice('The T-day cut-off in rupees, as in OfsOfferEntry.'),
    retail_cutoff_price: NullablePrice('The retail cut-off in rupees, as in OfsOfferEntry.'),
    retail_price: NullablePrice('What UNIFORM retail allotments pay, as in OfsOfferEntry.'),
    employee_price: NullablePrice('What employees pay, as in OfsOfferEntry.'),
    t1_opens_at: Type.String({ description: 'When T+1 opens (ISO instant).' }),
    settlement_dates: Type.Union(
      [
        Type.Object(
          {
            t_day: Type.String({ description: 'When T-day allotments are paid out.' }),
            t1_day: Type.String({ description: 'When T+1 allotments are paid out.' }),
          },
          { additionalProperties: false },
        ),
        Type.Null(),
      ],
      { description: 'As OfsOfferEntry.settlement_dates; null for a drill offer.' },
    ),
    bids: Type.Array(AllotmentBid, {
      description: "The caller's bids in this offer on every listing, oldest first; no one else's.",
    }),
    totals: Type.Object(
      {
        bid_quantity: Count("The bids' quantities summed."),
        allotted_quantity: Count('Shares allotted.'),
        not_allotted_quantity: Count('Shares not allotted (yet).'),
        blocked: Rupee('Rupees still blocked.'),
        debited: Rupee('Rupees debited.'),
        released: Rupee('Rupees released.'),
      },
      { additionalProperties: false, description: "The bids' figures summed." },
    ),
  },
  { additionalProperties: false },
);
export type OfsAllotmentData = Static<typeof OfsAllotmentData>;
export const OfsAllotmentResponse = SuccessEnvelope(OfsAllotmentData, 'Allotment fetched successfully');
