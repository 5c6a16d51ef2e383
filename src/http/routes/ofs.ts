/**
 * The OFS read calls: the registered issues (GET /transactional/v1/ofs/issues) and offers
 * (GET /transactional/v1/ofs/offers, .../{offer_id}), for any logged-in user, and the caller's allotment in
 * an offer explained (.../{offer_id}/allotment); an issue's book of demand
 * (GET /operator/v1/ofs/{exchange}/{scrip_token}/book, operators only) and an offer's book per category
 * and listing (GET /operator/v1/ofs/offers/{offer_id}/book, operators only); reconciliation of an offer's
 * listings with the exchange's book, requested (POST) and read (GET) at
 * /operator/v1/ofs/offers/{offer_id}/reconciliations, operators only (docs/reconciliation.md).
 */
import { Errors } from '../../domain/errors.js';
import { NoQuery } from '../../schemas/common.js';
import { OfsBookParams, OfsBookResponse, OfsIssuesResponse } from '../../schemas/ofs.js';
import type { OfsBookService } from '../../services/ofs-book.js';
import {
  CURRENT_OFFER_DAYS,
  OfsAllotmentResponse,
  DEFAULT_OFFERS_PAGE_SIZE,
  MAX_OFFERS_PAGE_SIZE,
  OfsOfferBookResponse,
  OfsOfferParams,
  OfsOfferResponse,
  OfsOffersQuery,
  OfsOffersResponse,
} from '../../schemas/ofs-offer.js';
import type { OfsOfferService } from '../../services/ofs-offers.js';
import {
  ReconciliationListQuery,
  ReconciliationListResponse,
  ReconciliationQuery,
  ReconciliationRequestResponse,
} from '../../schemas/reconciliations.js';
import type { ReconciliationService } from '../../services/reconciliations.js';
import type { App } from '../app-type.js';
import { callerOf } from '../plugins/authentication.js';
import { errorResponses, page, success, TOKEN_ERRORS } from '../responses.js';

const READ_SECURITY = [{ bearerAuth: [] }];

export function registerOfsRoutes(
  app: App,
  ofsBook: OfsBookService,
  ofsOffers: OfsOfferService,
  reconciliations?: ReconciliationService,
): void {
  if (reconciliations !== undefined) registerReconciliationRoutes(app, reconciliations);

  app.get(
    '/transactional/v1/ofs/offers',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['ofs'],
        summary:
          'The OFS offers, current ones by default: their terms, portions in shares, days and state, T day latest first, a page at a time',
        description: [
          "The offers under the exchanges' framework, T day latest first, then by `offer_id`: listed on NSE and/or BSE (each listing names the series of each category), base quantity and green shoe, the portions as the notices print them, the two days, `current_day` and `state` by the server's clock, and the T-day cut-off once the T allocation has found it.",
          `\`state\` chooses the offers: \`current\` (the default) those not finished (ANNOUNCED, T_OPEN, T_ALLOCATED, T1_OPEN) and the finished ones (ALLOCATED, CANCELLED) whose T+1 closed, or that finished, less than ${CURRENT_OFFER_DAYS} days ago, so that their results stay in view through the settlement; \`all\` every offer; or one state.`,
          `\`offset\` is the page number (from 1, default 1) and \`limit\` the page size (1 to ${MAX_OFFERS_PAGE_SIZE}, default ${DEFAULT_OFFERS_PAGE_SIZE}), as the order book pages; \`metadata.total_records\` counts the offers the filter keeps on all pages. \`server_time\` is the server's clock.`,
        ].join(' '),
        security: READ_SECURITY,
        querystring: OfsOffersQuery,
        response: { 200: OfsOffersResponse, ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_QUERY) },
      },
    },
    async (request) => page('OFS offers fetched successfully', await ofsOffers.list(request.query)),
  );

  app.get(
    '/transactional/v1/ofs/offers/:offer_id',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['ofs'],
        summary: 'One OFS offer, as the list gives it',
        security: READ_SECURITY,
        params: OfsOfferParams,
        querystring: NoQuery,
        response: {
          200: OfsOfferResponse,
          ...errorResponses(...TOKEN_ERRORS, Errors.OFS_OFFER_NOT_FOUND, Errors.INVALID_QUERY),
        },
      },
    },
    async (request) => success('OFS offer fetched successfully', await ofsOffers.get(request.params.offer_id)),
  );

  app.get(
    '/transactional/v1/ofs/offers/:offer_id/allotment',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['ofs'],
        summary:
          'The allotment explained: each of your bids in an offer, what each day allotted it and why, what it paid, its funds and when it settles',
        description: [
          "For any logged-in user, about their own bids only (every listing of the offer, oldest first): each bid's outcome, its allotment per day (T, and T+1) with a reason code and a sentence in a trader's words, the price paid, the funds it blocks, debited and released (from the funds ledger) and when each day's allotment is paid out.",
          'The exchanges report allotments without a reason: the reason is derived from the T-day and retail cut-offs, the single-bidder cap counted over all your bids in the offer (MF and IC exempt), whether the bid was carried forward, cancelled, rejected, or the offer cancelled. A day its allocation has not reached yet is AWAITING_ALLOCATION.',
          'An unknown offer is 404 e-368, as the offer read answers it.',
        ].join(' '),
        security: READ_SECURITY,
        params: OfsOfferParams,
        querystring: NoQuery,
        response: {
          200: OfsAllotmentResponse,
          ...errorResponses(...TOKEN_ERRORS, Errors.OFS_OFFER_NOT_FOUND, Errors.INVALID_QUERY),
        },
      },
    },
    async (request) =>
      success('Allotment fetched successfully', await ofsOffers.allotment(callerOf(request), request.params.offer_id)),
  );

  app.get(
    '/operator/v1/ofs/offers/:offer_id/book',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['operator'],
        summary:
          "An offer's book: the broker's bids and allotments per category and listing, and the open non-retail demand by price (operators only)",
        description:
          "For users the operator made operators; anyone else gets 403 e-214. `offer` is the offer as its read call answers it (portions, state, indicative price, cut-offs, `awaiting_operator`); `categories` sums the broker's bids of each category, in all and per listing: what is still bid for and what was allotted; `non_retail_demand` is the live non-retail demand by price, highest first, with the demand at or above each price.",
        security: READ_SECURITY,
        params: OfsOfferParams,
        querystring: NoQuery,
        response: {
          200: OfsOfferBookResponse,
          ...errorResponses(
            ...TOKEN_ERRORS,
            Errors.OPERATOR_REQUIRED,
            Errors.OFS_OFFER_NOT_FOUND,
            Errors.INVALID_QUERY,
          ),
        },
      },
    },
    async (request) =>
      success(
        'OFS offer book fetched successfully',
        await ofsBook.operatorOfferBook(callerOf(request), request.params.offer_id),
      ),
  );

  app.get(
    '/transactional/v1/ofs/issues',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['ofs'],
        summary: 'The registered OFS issues and where their bidding windows stand, newest first',
        description:
          "Every registered issue, allocated ones included. `state` is ALLOCATED once the allocation has run, else the state of the window of the caller's own category; `retail_window` and `non_retail_window` give both. `server_time` is the server's clock, to count down from.",
        security: READ_SECURITY,
        querystring: NoQuery,
        response: { 200: OfsIssuesResponse, ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_QUERY) },
      },
    },
    async (request) => success('OFS issues fetched successfully', await ofsBook.listIssues(callerOf(request))),
  );

  app.get(
    '/operator/v1/ofs/:exchange/:scrip_token/book',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['operator'],
        summary: "An OFS issue's book: demand by price, clearing prices and allotments (operators only)",
        description:
          "For users the operator made operators (`ordergate users set-operator`); anyone else gets 403 e-214. `demand` sums the live bids by price level, highest first, with the demand at or above each price; `clearing` is what each category's demand implies by the allocation's own rules, as if the windows closed now; `allotted` is what the allocation allotted, null until it has run.",
        security: READ_SECURITY,
        params: OfsBookParams,
        querystring: NoQuery,
        response: {
          200: OfsBookResponse,
          ...errorResponses(
            ...TOKEN_ERRORS,
            Errors.OPERATOR_REQUIRED,
            Errors.OFS_ISSUE_UNKNOWN,
            Errors.ROUTE_NOT_FOUND,
            Errors.INVALID_QUERY,
          ),
        },
      },
    },
    async (request) => {
      const { exchange, scrip_token } = request.params;
      return success(
        'OFS book fetched successfully',
        await ofsBook.operatorBook(callerOf(request), exchange, Number(scrip_token)),
      );
    },
  );
}

/** Reconciliation of an offer's listings with the exchange's book (docs/reconciliation.md), operators only. */
function registerReconciliationRoutes(app: App, reconciliations: ReconciliationService): void {
  const errors = errorResponses(
    ...TOKEN_ERRORS,
    Errors.OPERATOR_REQUIRED,
    Errors.OFS_OFFER_NOT_FOUND,
    Errors.INVALID_QUERY,
  );
  app.post(
    '/operator/v1/ofs/offers/:offer_id/reconciliations',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['operator'],
        summary:
          "Ask for a reconciliation of an offer's listings: the exchange's book of the broker's bids against ordergate's orders (operators only)",
        description:
          'For users the operator made operators; anyone else gets 403 e-214. One request per listing (or the one on `exchange`), queued: the node holding the exchange session runs it at its next pass (within seconds) and writes its report, which `GET` on the same path reads (`state` DONE, or FAILED with `error` when the exchange did not answer). Nothing in the orders is changed: a reconciliation only reports. Each difference names its kind and says in words what differs, with both sides. A 404 e-368 names an offer that does not exist, or an exchange it is not listed on.',
        security: READ_SECURITY,
        params: OfsOfferParams,
        querystring: ReconciliationQuery,
        response: { 200: ReconciliationRequestResponse, ...errors },
      },
    },
    async (request) =>
      success('Reconciliation requested', {
        reconciliations: await reconciliations.request(
          callerOf(request),
          request.params.offer_id,
          request.query.exchange,
        ),
      }),
  );

  app.get(
    '/operator/v1/ofs/offers/:offer_id/reconciliations',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['operator'],
        summary:
          "An offer's reconciliation reports, newest first: at each day's close and at the operator's request (operators only)",
        description:
          "For users the operator made operators; anyone else gets 403 e-214. Each report compares the exchange's book of one listing with ordergate's orders of it: the counts, and each difference with its kind, both sides and its words. `trigger` says what asked for it (`close-T`, `close-T1`, `operator`); a request not yet run is `QUEUED`.",
        security: READ_SECURITY,
        params: OfsOfferParams,
        querystring: ReconciliationListQuery,
        response: { 200: ReconciliationListResponse, ...errors },
      },
    },
    async (request) =>
      success('Reconciliation reports fetched successfully', {
        reconciliations: await reconciliations.list(callerOf(request), request.params.offer_id, {
          ...(request.query.exchange !== undefined && { exchange: request.query.exchange }),
          ...(request.query.limit !== undefined && { limit: Number(request.query.limit) }),
        }),
      }),
  );
}
