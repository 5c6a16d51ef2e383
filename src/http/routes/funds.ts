/** GET /authentication/v1/user/balance: the caller's funds (docs/design/funds.md). Needs the token. */
import { Errors } from '../../domain/errors.js';
import { NoQuery } from '../../schemas/common.js';
import { BalanceResponse } from '../../schemas/funds.js';
import type { FundsService } from '../../services/funds.js';
import type { App } from '../app-type.js';
import { callerOf } from '../plugins/authentication.js';
import { errorResponses, success, TOKEN_ERRORS } from '../responses.js';

export const BALANCE_PATH = '/authentication/v1/user/balance';

export function registerFundsRoutes(app: App, funds: FundsService): void {
  app.get(
    BALANCE_PATH,
    {
      config: { auth: 'token' },
      schema: {
        tags: ['funds'],
        summary: 'Your funds: cash, blocked by live bids, available for new bids, and debited by allotments',
        description:
          'Amounts are rupee strings with two decimals. A user without a funds account is not funds-checked: `funds_checked` is false and every amount is "0.00". No query parameters.',
        security: [{ bearerAuth: [] }],
        querystring: NoQuery,
        response: { 200: BalanceResponse, ...errorResponses(...TOKEN_ERRORS, Errors.INVALID_QUERY) },
      },
    },
    async (request) => success('Funds fetched successfully', await funds.balance(callerOf(request))),
  );
}
