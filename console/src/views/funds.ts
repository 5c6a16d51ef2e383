/** Funds (cash, blocked by live bids, available, debited), open positions and holdings; read again as orders change. */
import { ApiError, get } from '../api.js';
import type { ConsoleContext, View } from '../context.js';
import { h, row, table } from '../dom.js';
import { formatInstant, formatPrice, formatQuantity, formatRupees, parseInstant } from '../format.js';
import { serverNow } from '../ofs-issues.js';
import type { Balance, Holding, Position } from '../types.js';

const POSITION_COLUMNS = ['Instrument', 'Allotted', 'Average price', 'Settles'];
/** A holding's `value` is what its shares cost, not what they are worth now: the column says so. */
const HOLDING_COLUMNS = ['Instrument', 'Quantity', 'Average price', 'Cost (quantity \u00d7 average price)', 'Settled'];

export function fundsView(context: ConsoleContext): View {
  const fundsArea = h('div', { class: 'card' }, h('p', {}, 'Loading...'));
  const positionsArea = h('div', { class: 'table-wrap' });
  const holdingsArea = h('div', { class: 'table-wrap' });

  // A position becomes a holding when it settles, which no order event announces: the view reads again
  // shortly after the earliest settlement it shows (and every few seconds while one is overdue).
  let settling: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;
  const readAtSettlement = (positions: Position[]) => {
    clearTimeout(settling);
    // settles_at is given to the second (ODIN's India time): read a second after it.
    const due = positions.map((p) => parseInstant(p.settles_at)).filter((at) => Number.isFinite(at));
    if (disposed || due.length === 0) return;
    const wait = Math.min(...due) - serverNow() + 1_000;
    settling = setTimeout(show, Math.min(Math.max(wait, 2_000), 2_147_000_000));
  };

  async function refresh(): Promise<void> {
    const [balance, positions, holdings] = await Promise.all([
      get<Balance>('/authentication/v1/user/balance'),
      get<Position[]>('/transactional/v1/portfolio/positions/all'),
      get<Holding[]>('/transactional/v1/portfolio/holdings'),
    ]);
    const amount = (label: string, value: string) => [
      h('dt', {}, label),
      h('dd', { 'data-amount': label.toLowerCase(), class: 'amount' }, formatRupees(value)),
    ];
    fundsArea.replaceChildren(
      h('h3', {}, 'Funds'),
      balance.funds_checked
        ? h(
            'dl',
            { class: 'facts' },
            amount('Cash', balance.cash),
            amount('Blocked', balance.blocked),
            amount('Available', balance.available),
            amount('Debited', balance.debited),
          )
        : h('p', {}, 'You have no funds account: your bids are not funds-checked.'),
    );
    positionsArea.replaceChildren(
      positions.length === 0
        ? h('p', {}, 'No open positions.')
        : table(
            'Positions: allotted shares not yet settled',
            POSITION_COLUMNS,
            positions.map((p) =>
              row(POSITION_COLUMNS, [
                `${p.symbol} ${p.series} ${p.exchange}`,
                formatQuantity(p.buy_quantity),
                formatPrice(p.buy_average_price),
                formatInstant(p.settles_at),
              ]),
            ),
          ),
    );
    holdingsArea.replaceChildren(
      holdings.length === 0
        ? h('p', { class: 'holdings-empty' }, 'No holdings yet: allotted shares become holdings once they settle.')
        : table(
            'Holdings: settled shares',
            HOLDING_COLUMNS,
            holdings.map((x) =>
              row(HOLDING_COLUMNS, [
                `${x.symbol} ${x.series} ${x.exchange}`,
                formatQuantity(x.quantity),
                formatPrice(x.average_price),
                formatRupees(x.value),
                formatInstant(x.settled_at),
              ]),
            ),
          ),
    );
    readAtSettlement(positions);
  }

  const show = () =>
    void refresh().catch((error: unknown) => {
      fundsArea.replaceChildren(
        h(
          'p',
          { role: 'alert' },
          error instanceof ApiError ? error.describe() : 'Funds and holdings could not be read',
        ),
      );
    });
  show();
  // A bid that reaches the exchange blocks funds, an allotment debits them: read again shortly after a change.
  let pending: ReturnType<typeof setTimeout> | undefined;
  const unsubscribe = context.orders.subscribe(() => {
    clearTimeout(pending);
    pending = setTimeout(show, 500);
  });

  const element = h(
    'section',
    { 'aria-labelledby': 'view-title' },
    h(
      'div',
      { class: 'view-head' },
      h('h2', { id: 'view-title', tabindex: -1 }, 'Funds and holdings'),
      h('button', { type: 'button', onClick: show }, 'Refresh'),
    ),
    fundsArea,
    h('h3', {}, 'Positions'),
    positionsArea,
    h('h3', {}, 'Holdings'),
    holdingsArea,
  );
  return {
    element,
    dispose: () => {
      disposed = true;
      clearTimeout(pending);
      clearTimeout(settling);
      unsubscribe();
    },
  };
}
