/**
 * The wire shapes of reconciliation (docs/reconciliation.md): the operator's request for one, and the
 * reports, each the exchange's book of one listing of an offer against ordergate's orders of it.
 */
import Type, { type Static } from 'typebox';
import { DIFFERENCE_KINDS } from '../domain/ofs/reconciliation.js';
import { SuccessEnvelope } from './common.js';
import { StringEnum } from './ofs.js';

const Instant = (description: string) =>
  Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description });

export const ReconciliationQuery = Type.Object(
  {
    exchange: Type.Optional(
      StringEnum(['NSE_EQ', 'BSE_EQ'], "One listing's exchange; every listing of the offer when absent."),
    ),
  },
  { additionalProperties: false },
);

export const ReconciliationListQuery = Type.Object(
  {
    exchange: Type.Optional(StringEnum(['NSE_EQ', 'BSE_EQ'], "One listing's exchange; every listing's when absent.")),
    limit: Type.Optional(
      Type.String({ pattern: '^(100|[1-9][0-9]?)$', description: 'The newest reports, 1 to 100 (default 20).' }),
    ),
  },
  { additionalProperties: false },
);

const BidSide = Type.Union(
  [
    Type.Object(
      {
        status: Type.String({
          description: "ordergate's order status, or the exchange's (LIVE, CANCELLED, ALLOTTED, NOT_ALLOTTED).",
        }),
        order_type: Type.String({ description: 'RL (priced) or RL-MKT (at the cut-off).' }),
        price: Type.Union([Type.Number(), Type.Null()], { description: 'Rupees; null at the cut-off.' }),
        quantity: Type.Integer(),
        exchange_order_id: Type.Union([Type.String(), Type.Null()]),
      },
      { additionalProperties: false },
    ),
    Type.Null(),
  ],
  { description: 'The bid on this side; null: none.' },
);

export const ReconciliationDifference = Type.Object(
  {
    kind: StringEnum(
      DIFFERENCE_KINDS,
      "What differs: MISSING_AT_EXCHANGE (an order of ours the exchange's book lacks), UNKNOWN_TO_US (a bid of the book no order of ours names), QUANTITY_DIFFERS, PRICE_DIFFERS, STATUS_DIFFERS, BID_ID_DIFFERS, CARRY_FORWARD_NOT_SHOWN (carried forward by us, not in the book).",
    ),
    order_id: Type.Union([Type.String(), Type.Null()], { description: 'Our order; null: a bid unknown to us.' }),
    exchange_order_id: Type.Union([Type.String(), Type.Null()], { description: "The exchange's bid id." }),
    reference: Type.Union([Type.String(), Type.Null()], { description: "The reference the exchange's entry carries." }),
    ours: BidSide,
    theirs: BidSide,
    message: Type.String({ description: 'The difference in words.' }),
  },
  { additionalProperties: false },
);

export const ReconciliationReportSchema = Type.Object(
  {
    id: Type.Integer(),
    offer_id: Type.String(),
    exchange: Type.String(),
    symbol: Type.String(),
    trigger: StringEnum(['close-T', 'close-T1', 'operator'], "What asked for it: a day's close, or the operator."),
    state: StringEnum(['QUEUED', 'DONE', 'FAILED'], 'QUEUED until the node holding the exchange session runs it.'),
    requested_by: Type.Union([Type.String(), Type.Null()]),
    requested_at: Type.String({ format: 'date-time' }),
    run_at: Instant('When it ran; null while queued.'),
    book_as_of: Instant("When the exchange wrote the book compared (a download's time, or when it was read)."),
    ours: Type.Union([Type.Integer(), Type.Null()], { description: "ordergate's orders of the listing." }),
    book: Type.Union([Type.Integer(), Type.Null()], { description: "The entries of the exchange's book." }),
    matched: Type.Union([Type.Integer(), Type.Null()], { description: 'Our orders found in the book.' }),
    in_flight: Type.Union([Type.Integer(), Type.Null()], {
      description: 'Our orders not compared: work for the OMS still waited on them.',
    }),
    counts: Type.Union([Type.Record(Type.String(), Type.Integer()), Type.Null()], {
      description: 'The differences per kind; null until done.',
    }),
    differences: Type.Array(ReconciliationDifference),
    error: Type.Union([Type.String(), Type.Null()], { description: 'Why it failed (FAILED).' }),
    note: Type.Union([Type.String(), Type.Null()], {
      description:
        "Of a book older than its run (BSE's is its latest bid-book download): how old, and that orders changed since were left out.",
    }),
  },
  { additionalProperties: false },
);
export type ReconciliationReportData = Static<typeof ReconciliationReportSchema>;

const ReconciliationsData = Type.Object(
  { reconciliations: Type.Array(ReconciliationReportSchema) },
  { additionalProperties: false },
);
export type ReconciliationsData = Static<typeof ReconciliationsData>;

export const ReconciliationRequestResponse = SuccessEnvelope(
  ReconciliationsData,
  'Reconciliation requested: one request per listing, queued for the node holding the exchange session',
);
export const ReconciliationListResponse = SuccessEnvelope(ReconciliationsData, 'Reconciliation reports, newest first');
