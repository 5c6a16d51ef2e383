/** Wire shapes of GET /authentication/v1/user/balance: a user's funds (docs/design/funds.md). */
import Type, { type Static } from 'typebox';
import { SuccessEnvelope } from './common.js';
import { PriceText } from './odin-fields.js';

/** cash and available can be below zero in one case only: an allotment that cost more than its block (docs/design/funds.md). */
const SignedPriceText = (description: string) =>
  Type.String({ pattern: '^-?[0-9]+\\.[0-9]{2}$', description, examples: ['100000.00'] });

export const FundsBalance = Type.Object(
  {
    client_id: Type.String({ description: 'Your user id.' }),
    funds_checked: Type.Boolean({
      description:
        'Whether you have a funds account. With one, each live bid blocks its value and a bid that needs more than `available` is rejected by the OMS (OMSREJECT); without one, your bids are not funds-checked and every amount is "0.00".',
    }),
    cash: SignedPriceText('Deposits - withdrawals - debits, in rupees with two decimals.'),
    blocked: PriceText(
      'What your live bids hold: quantity x price for each (a cut-off bid at the retail cut-off price).',
    ),
    available: SignedPriceText(
      'cash - blocked: what a new bid (or a withdrawal) may use. Below zero only after an allotment that cost more than its block (a cut-off price raised after the bid was blocked).',
    ),
    debited: PriceText('The cost of every allotment so far (allotted quantity x allotment price), in total.'),
  },
  { additionalProperties: false },
);
export type FundsBalance = Static<typeof FundsBalance>;

export const BalanceResponse = SuccessEnvelope(FundsBalance, 'Funds fetched successfully');
