/**
 * The trade book (GET /transactional/v1/trades), positions (GET /transactional/v1/portfolio/positions/{type})
 * and holdings (GET /transactional/v1/portfolio/holdings), as in ODIN. Reading needs the token.
 */
import { Errors } from '../../domain/errors.js';
import {
  HoldingsResponse,
  PositionsParams,
  PositionsQuery,
  TradeBookQuery,
  TradeBookResponse,
  PositionsResponse,
} from '../../schemas/portfolio.js';
import { NoQuery } from '../../schemas/common.js';
import type { PortfolioService } from '../../services/portfolio.js';
import type { App } from '../app-type.js';
import { callerOf } from '../plugins/authentication.js';
import { errorResponses, page, success, TOKEN_ERRORS } from '../responses.js';

const READ_SECURITY = [{ bearerAuth: [] }];

export function registerPortfolioRoutes(app: App, portfolio: PortfolioService): void {
  app.get(
    '/transactional/v1/trades',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['portfolio'],
        summary: 'The trade book: your trades (allotments), newest first',
        description:
          '`offset` is the page number (from 1, default 1) and `limit` the page size (1 to 1000, default 20); `order_id` and `order_ids` (comma-separated) select the trades of those orders. `data` is the list; `metadata.total_records` counts the matches on all pages.',
        security: READ_SECURITY,
        querystring: TradeBookQuery,
        response: { 200: TradeBookResponse, ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_QUERY) },
      },
    },
    async (request) =>
      page('Trade book fetched successfully', await portfolio.tradeBook(callerOf(request), request.query)),
  );

  app.get(
    '/transactional/v1/portfolio/positions/:type',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['portfolio'],
        summary: 'Your open positions: shares allotted and not yet settled',
        description:
          '`type` is `all`, `daily` (traded today, India time) or `expiry` (expiring today: none, OFS shares do not expire). A trade settles T+1 (09:00 India time the next day) unless its issue sets a shorter delay; then its shares are a holding.',
        security: READ_SECURITY,
        params: PositionsParams,
        querystring: PositionsQuery,
        response: {
          200: PositionsResponse,
          ...errorResponses(...TOKEN_ERRORS, Errors.POSITION_TYPE, Errors.INVALID_QUERY, Errors.ROUTE_NOT_FOUND),
        },
      },
    },
    async (request) =>
      success('Positions fetched successfully', await portfolio.positions(callerOf(request), request.params.type)),
  );

  app.get(
    '/transactional/v1/portfolio/holdings',
    {
      config: { auth: 'token' },
      schema: {
        tags: ['portfolio'],
        summary: 'Your holdings: settled shares',
        security: READ_SECURITY,
        querystring: NoQuery,
        response: { 200: HoldingsResponse, ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_QUERY) },
      },
    },
    async (request) => success('Holdings fetched successfully', await portfolio.holdings(callerOf(request))),
  );
}
