/**
 * OFS issues: each issue's windows (retail and non-retail) with the time left, its floor, tick, retail
 * cut-off and offer, and a bid form while the caller's window is open.
 */
import { ApiError } from '../api.js';
import type { ConsoleContext, View } from '../context.js';
import { placeBid } from '../place-bid.js';
import { field, h, statusLine } from '../dom.js';
import { formatDuration, formatInstant, formatPrice, formatQuantity, issueKey, issueName } from '../format.js';
import { loadIssues, serverNow, stateAt, windowFor, windowsOf, type BiddingWindow } from '../ofs-issues.js';
import type { OfsIssue } from '../types.js';

function timeLeft(window: BiddingWindow, now: number): string {
  switch (stateAt(window, now)) {
    case 'UPCOMING':
      return `opens in ${formatDuration(window.opensAt - now)}`;
    case 'OPEN':
      return `open, closes in ${formatDuration(window.closesAt - now)}`;
    case 'CLOSED':
      return 'closed';
  }
}

function bidForm(issue: OfsIssue, context: ConsoleContext): HTMLFormElement {
  const retail = context.session.category !== 'NON_RETAIL';
  const quantity = h('input', { name: 'quantity', type: 'number', inputmode: 'numeric', min: 1, step: 1, required: true, value: 10 });
  const price = h('input', {
    name: 'price',
    type: 'number',
    inputmode: 'decimal',
    min: 0,
    step: 'any',
    required: true,
    value: formatPrice(issue.retail_cutoff_price ?? issue.floor_price),
  });
  const cutOff = h('input', { name: 'cut_off', type: 'checkbox' });
  cutOff.addEventListener('change', () => {
    price.disabled = cutOff.checked;
  });
  const tag = h('input', { name: 'order_identifier', maxlength: 10, autocomplete: 'off' });
  const status = statusLine();
  const submit = h('button', { type: 'submit' }, 'Place bid');
  const form = h(
    'form',
    {
      class: 'bid-form',
      'aria-label': `Bid for ${issueName(issue)}`,
      onSubmit: (event: Event) => {
        event.preventDefault();
        const body = {
          scrip_info: { exchange: issue.exchange, scrip_token: issue.scrip_token, symbol: issue.symbol, series: issue.series },
          transaction_type: 'BUY',
          product_type: 'OFS',
          order_type: cutOff.checked ? 'RL-MKT' : 'RL',
          quantity: String(quantity.valueAsNumber),
          price: cutOff.checked ? 0 : price.valueAsNumber,
          ...(tag.value.trim() === '' ? {} : { order_identifier: tag.value.trim() }),
        };
        placeBid(body, status, submit);
      },
    },
    h(
      'div',
      { class: 'field-row' },
      field('Quantity', quantity),
      field('Price (Rs)', price, `Tick ${formatPrice(issue.tick_size)}`),
      retail ? h('div', { class: 'field checkbox' }, h('label', {}, cutOff, ' Bid at the cut-off price')) : null,
      field('Your tag (optional)', tag),
    ),
    submit,
    status,
  );
  return form;
}

function issueCard(issue: OfsIssue, context: ConsoleContext, timers: { element: HTMLElement; window: BiddingWindow }[]): HTMLElement {
  const headingId = `issue-${issueKey(issue).replace(/\W/g, '-')}`;
  const windows = windowsOf(issue).map((window) => {
    const left = h('span', { class: 'time-left' }, timeLeft(window, serverNow()));
    timers.push({ element: left, window });
    return h(
      'li',
      {},
      h('strong', {}, `${window.label}: `),
      `${formatInstant(new Date(window.opensAt).toISOString())} to ${formatInstant(new Date(window.closesAt).toISOString())}, `,
      left,
    );
  });
  const open = stateAt(windowFor(issue, context.session.category), serverNow()) === 'OPEN';
  return h(
    'article',
    { class: 'card issue', 'aria-labelledby': headingId, 'data-issue': issueKey(issue) },
    h('h3', { id: headingId }, issueName(issue)),
    h(
      'dl',
      { class: 'facts' },
      h('dt', {}, 'Floor price'),
      h('dd', {}, formatPrice(issue.floor_price)),
      h('dt', {}, 'Tick'),
      h('dd', {}, formatPrice(issue.tick_size)),
      h('dt', {}, 'Retail cut-off'),
      h('dd', {}, issue.retail_cutoff_price === null ? 'not set' : formatPrice(issue.retail_cutoff_price)),
      h('dt', {}, 'Offer'),
      h('dd', {}, `${formatQuantity(issue.offer_quantity)} shares, ${issue.retail_reserve_pct}% reserved for retail`),
      h('dt', {}, 'Allocation'),
      h('dd', {}, issue.allocated ? `${issue.allocation}, allotted` : issue.allocation),
    ),
    h('ul', { class: 'windows', 'aria-label': 'Bidding windows' }, windows),
    open ? bidForm(issue, context) : h('p', {}, 'Your bidding window is not open.'),
  );
}

/** An issue's card, its countdowns, and whether the caller's window was open when it was drawn. */
interface Card {
  issue: OfsIssue;
  element: HTMLElement;
  timers: { element: HTMLElement; window: BiddingWindow }[];
  open: boolean;
}

export function issuesView(context: ConsoleContext): View {
  const list = h('div', { class: 'cards' }, h('p', {}, 'Loading the OFS issues...'));
  let cards: Card[] = [];
  const callerOpen = (issue: OfsIssue, now: number) => stateAt(windowFor(issue, context.session.category), now) === 'OPEN';
  const cardFor = (issue: OfsIssue): Card => {
    const timers: Card['timers'] = [];
    const element = issueCard(issue, context, timers);
    return { issue, element, timers, open: callerOpen(issue, serverNow()) };
  };
  const refresh = () => {
    loadIssues()
      .then((issues) => {
        cards = issues.map(cardFor);
        list.replaceChildren(...(cards.length === 0 ? [h('p', {}, 'No OFS issue is registered.')] : cards.map((card) => card.element)));
      })
      .catch((error: unknown) => {
        list.replaceChildren(h('p', { role: 'alert' }, error instanceof ApiError ? error.describe() : 'The OFS issues could not be read'));
      });
  };
  refresh();
  // The countdowns tick; they are not a live region, which would read every second aloud. When the
  // caller's window of an issue opens or closes, that card alone is drawn again: its bid form comes or goes,
  // and a bid being typed on another issue is left alone.
  const ticker = setInterval(() => {
    const now = serverNow();
    cards = cards.map((card) => {
      if (callerOpen(card.issue, now) !== card.open) {
        const next = cardFor(card.issue);
        card.element.replaceWith(next.element);
        return next;
      }
      for (const { element, window } of card.timers) element.textContent = timeLeft(window, now);
      return card;
    });
  }, 1000);
  const element = h(
    'section',
    { 'aria-labelledby': 'view-title' },
    h('div', { class: 'view-head' }, h('h2', { id: 'view-title', tabindex: -1 }, 'OFS issues'), h('button', { type: 'button', onClick: refresh }, 'Refresh')),
    list,
  );
  return { element, dispose: () => clearInterval(ticker) };
}
