/** Funds (cash, blocked by live bids, available, debited), open positions and holdings; read again as orders change. */
import { ApiError, readData } from '../api.js';
import type { ConsoleContext, View } from '../context.js';
import { h, row, table } from '../dom.js';
import { formatInstant, formatPrice, formatQuantity, formatRupees, parseInstant } from '../format.js';
import { serverNow } from '../ofs-issues.js';
import type { Holding, Position } from '../types.js';

const POSITION_COLUMNS = ['Instrument', 'Allotted', 'Average price', 'Settles'];
/** A holding's `value` is what its shares cost, not what they are worth now: the column says so. */
const HOLDING_COLUMNS = ['Company', 'Quantity', 'Average price', 'Cost (quantity \u00d7 average price)', 'Settled'];

const paise = (rupees: string) => Math.round(Number(rupees) * 100);

/**
 * The holdings one per company: the API (as ODIN's clients expect it) answers one entry per exchange listing
 * and bidding series (an offer's retail RS, its non-retail IS, BSE's A...), while a trader owns shares of a
 * company, wherever they were bought. Each company's lots keep the entries, in the API's order.
 */
interface Company {
  symbol: string;
  quantity: number;
  /** What the shares cost, in paise. */
  costPaise: number;
  settledAt: string;
  lots: Holding[];
}
function byCompany(holdings: Holding[]): Company[] {
  const companies = new Map<string, Company>();
  for (const lot of holdings) {
    const company = companies.get(lot.symbol) ?? {
      symbol: lot.symbol,
      quantity: 0,
      costPaise: 0,
      settledAt: lot.settled_at,
      lots: [],
    };
    company.quantity += lot.quantity;
    company.costPaise += paise(lot.value);
    if (parseInstant(lot.settled_at) > parseInstant(company.settledAt)) company.settledAt = lot.settled_at;
    company.lots.push(lot);
    companies.set(lot.symbol, company);
  }
  return [...companies.values()];
}

/** Where a lot was bought: its exchange, its token and the series it was bid in (the shares are the company's). */
const exchangeName = (exchange: string) => exchange.replace(/_EQ$/, '');
const lotLabel = (lot: Holding) => `${exchangeName(lot.exchange)} ${lot.scrip_token}, bid in ${lot.series}`;

/** A company's row, then its lots' rows (indented, lighter): quantity, average price, cost and settlement each. */
function holdingRows(company: Company): HTMLTableRowElement[] {
  const average = company.quantity > 0 ? (company.costPaise / company.quantity / 100).toFixed(2) : '0.00';
  const lots = company.lots.length;
  return [
    row(
      HOLDING_COLUMNS,
      [
        [
          h('strong', {}, company.symbol),
          h('small', { class: 'holding-lots' }, ` ${lots} ${lots === 1 ? 'lot' : 'lots'}`),
        ],
        formatQuantity(company.quantity),
        formatPrice(average),
        formatRupees((company.costPaise / 100).toFixed(2)),
        formatInstant(company.settledAt),
      ],
      { class: 'holding-row', 'data-symbol': company.symbol },
    ),
    ...company.lots.map((lot) =>
      row(
        HOLDING_COLUMNS,
        [
          lotLabel(lot),
          formatQuantity(lot.quantity),
          formatPrice(lot.average_price),
          formatRupees(lot.value),
          formatInstant(lot.settled_at),
        ],
        {
          class: 'lot-row',
          'data-symbol': company.symbol,
          'data-lot': `${lot.exchange}:${lot.scrip_token}:${lot.series}`,
        },
      ),
    ),
  ];
}

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
      readData((client) => client.balance()),
      readData((client) => client.positions('all')),
      readData((client) => client.holdings()),
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
            'Holdings: settled shares, one per company, with the lots bought on each exchange listing',
            HOLDING_COLUMNS,
            byCompany(holdings).flatMap(holdingRows),
            'holdings-table',
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
