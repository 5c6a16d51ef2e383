/**
 * For operators: the OFS book of an issue (GET /operator/v1/ofs/{exchange}/{scrip_token}/book) as a chart,
 * retail and non-retail apart, with the same numbers in tables beside it for screen readers and for anyone
 * who wants them exact; after allocation, the demand the allocation took (its `at_close`) and what it
 * allotted.
 */
import { ApiError, readData } from '../api.js';
import { BOOK_LEGEND, bookChart, bookFigures, chartLegend } from '../chart/book-chart.js';
import type { View } from '../context.js';
import { field, h, row, select, table } from '../dom.js';
import { liveBook } from '../live-book.js';
import { formatPrice, formatQuantity, issueKey, issueName } from '../format.js';
import { loadIssues } from '../ofs-issues.js';
import type { CategoryClearing, OfsBook, OfsIssue } from '../types.js';
import { chartWidth } from '../chart/chart-width.js';

const DEMAND_COLUMNS = [
  'Price (Rs)',
  'Retail',
  'Of it at cut-off',
  'Retail at or above',
  'Non-retail',
  'Non-retail at or above',
  'Bids',
];
const SUMMARY_COLUMNS = ['Category', 'Offer', 'Portion', 'Demand', 'Clearing price', 'Allotted'];
const ALLOTTED_COLUMNS = ['Price (Rs)', 'Retail allotted', 'Non-retail allotted'];

const clearingText = (clearing: CategoryClearing) =>
  clearing.price === null ? 'none: the demand fits' : formatPrice(clearing.price);

/**
 * The chart and the tables, from the same figures: the live bids until the allocation has run, then the
 * bids it took (no bid is live any more), with what it allotted.
 */
function renderBook(book: OfsBook): HTMLElement[] {
  const allocated = book.allotted !== null;
  const figures = bookFigures(book);
  const caption = allocated
    ? `The book of ${issueName(book.issue)} at close: the demand the allocation took by price against the offer of ${formatQuantity(book.offer.total)} shares, and what it allotted`
    : `The book of ${issueName(book.issue)}: demand by price against the offer of ${formatQuantity(book.offer.total)} shares`;
  const summary = table(
    'Offer, demand and clearing by category',
    SUMMARY_COLUMNS,
    (['retail', 'non_retail'] as const).map((side) =>
      row(
        SUMMARY_COLUMNS,
        [
          side === 'retail' ? 'Retail' : 'Non-retail',
          formatQuantity(book.offer[side]),
          formatQuantity(figures.clearing[side].portion),
          formatQuantity(figures.clearing[side].demand),
          clearingText(figures.clearing[side]),
          book.allotted === null ? 'not allocated yet' : formatQuantity(book.allotted[side]),
        ],
        { 'data-side': side },
      ),
    ),
    'summary-table',
  );
  const demand =
    figures.demand.length === 0
      ? h('p', {}, allocated ? 'No bid reached the allocation.' : 'No live bids yet.')
      : table(
          allocated
            ? 'Demand at close by price: the bids the allocation took, highest first (the chart in numbers)'
            : 'Live demand by price, highest first (the chart in numbers)',
          DEMAND_COLUMNS,
          figures.demand.map((level) =>
            row(
              DEMAND_COLUMNS,
              [
                formatPrice(level.price),
                formatQuantity(level.retail_quantity),
                formatQuantity(level.retail_cutoff_quantity),
                formatQuantity(level.retail_cumulative),
                formatQuantity(level.non_retail_quantity),
                formatQuantity(level.non_retail_cumulative),
                String(level.bids),
              ],
              { 'data-price': formatPrice(level.price) },
            ),
          ),
          'demand-table',
        );
  const allotted =
    book.allotted === null
      ? null
      : table(
          'Allotted by trade price, highest first',
          ALLOTTED_COLUMNS,
          book.allotted.by_price.map((level) =>
            row(ALLOTTED_COLUMNS, [
              formatPrice(level.price),
              formatQuantity(level.retail_quantity),
              formatQuantity(level.non_retail_quantity),
            ]),
          ),
          'allotted-table',
        );
  const { ineligible } = figures;
  const leftOut = `${ineligible.bids} ${allocated ? '' : 'live '}bids (${formatQuantity(ineligible.retail_quantity)} retail, ${formatQuantity(ineligible.non_retail_quantity)} non-retail shares)`;
  const ineligibleNote =
    ineligible.bids === 0
      ? null
      : h(
          'p',
          {},
          allocated
            ? `${leftOut} are left out: the allocation refused them.`
            : `${leftOut} are left out: the allocation would refuse them.`,
        );
  const chart = bookChart(book, caption, chartWidth(640));
  return [
    h('figure', { class: 'card chart' }, chartLegend(chart, BOOK_LEGEND), chart, h('figcaption', {}, caption)),
    h('div', { class: 'table-wrap' }, summary),
    ineligibleNote ?? '',
    h('div', { class: 'table-wrap' }, demand),
    allotted === null ? '' : h('div', { class: 'table-wrap' }, allotted),
  ].filter((node): node is HTMLElement => node !== '');
}

/** The book of one issue, chosen from the registered issues, read again while live so that the chart fills as bids come in. */
export function operatorBookView(): View {
  let issues: OfsIssue[] = [];
  const choice = select('issue', []);
  // The status line speaks once, when the issue is allotted.
  const panel = liveBook(
    async () => {
      const issue = issues.find((i) => issueKey(i) === choice.value);
      if (issue === undefined) return null;
      const book = await readData((client) => client.issueBook(issue.exchange, issue.scrip_token));
      if (issueKey(issue) !== choice.value) return null;
      // The exchange allots at once, and its answer reaches each bid at the OMS's next pass: until then the
      // bid is still live (in the demand) and its allotment not counted. Read again until none waits.
      const settled =
        book.allotted !== null && book.demand.every((level) => level.bids === 0) && book.ineligible.bids === 0;
      const status = settled
        ? `Allotted: ${formatQuantity(book.allotted!.retail)} retail and ${formatQuantity(book.allotted!.non_retail)} non-retail shares.`
        : '';
      return { draw: renderBook(book), status, settled };
    },
    { readAfter: () => true, failure: 'The book could not be read' },
  );
  choice.addEventListener('change', panel.again);
  loadIssues()
    .then((loaded) => {
      issues = loaded;
      choice.replaceChildren(...issues.map((issue) => h('option', { value: issueKey(issue) }, issueName(issue))));
      panel.again();
    })
    .catch((error: unknown) =>
      panel.area.replaceChildren(
        h('p', { role: 'alert' }, error instanceof ApiError ? error.describe() : 'The OFS issues could not be read'),
      ),
    );
  const element = h(
    'section',
    { 'aria-labelledby': 'view-title' },
    h(
      'div',
      { class: 'view-head' },
      h('h2', { id: 'view-title', tabindex: -1 }, 'OFS book'),
      h('button', { type: 'button', onClick: panel.again }, 'Refresh'),
    ),
    h(
      'div',
      { class: 'field-row' },
      field('Issue', choice),
      h(
        'div',
        { class: 'field checkbox' },
        h('label', {}, panel.live, ' Live: read the book every 2 s until it is allotted'),
      ),
    ),
    panel.readAt,
    panel.status,
    panel.area,
  );
  return { element, dispose: panel.dispose };
}
