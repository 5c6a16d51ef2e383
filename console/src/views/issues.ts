/**
 * OFS issues: each issue's windows (retail and non-retail) with the time left, its floor, tick, retail
 * cut-off and offer, and a bid form while the caller's window is open.
 */
import { ApiError } from '../api.js';
import type { ConsoleContext, View } from '../context.js';
import { placeBid } from '../place-bid.js';
import { field, h } from '../dom.js';
import {
  formatDuration,
  formatInstant,
  formatPrice,
  formatQuantity,
  formatRupees,
  issueKey,
  issueName,
} from '../format.js';
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

/** The Rs 2,00,000 a retail bidder's live bids in one offer may total (across its listings). */
const RETAIL_LIMIT_RUPEES = 200_000;

/** What the caller's live retail bids in the issue's symbol are worth now (a cut-off bid at the cut-off price). */
function liveRetailValue(issue: OfsIssue, context: ConsoleContext): number {
  const cutoff = Number(issue.retail_cutoff_price ?? 0);
  return context.orders
    .list()
    .filter(
      (order) =>
        order.symbol === issue.symbol &&
        order.category === 'RETAIL' &&
        ['OMSXMITTED', 'EXXMITTED', 'PENDING'].includes(order.status),
    )
    .reduce(
      (sum, order) =>
        sum + order.pending_quantity * (order.order_type === 'RL-MKT' ? cutoff : Number(order.order_price)),
      0,
    );
}

/** The bid forms' order values, recomputed when the caller's orders change (a live bid counts in the limit). */
const valueRefreshers = new Set<() => void>();

function bidForm(issue: OfsIssue, context: ConsoleContext): HTMLFormElement {
  const retail = context.session.category !== 'NON_RETAIL';
  const quantity = h('input', {
    name: 'quantity',
    type: 'number',
    inputmode: 'numeric',
    min: 1,
    step: 1,
    required: true,
    value: 10,
  });
  const startPrice = formatPrice(issue.retail_cutoff_price ?? issue.floor_price);
  const price = h('input', {
    name: 'price',
    type: 'number',
    inputmode: 'decimal',
    min: 0,
    step: 'any',
    required: true,
    value: startPrice,
  });
  const cutOff = h('input', { name: 'cut_off', type: 'checkbox' });
  const tag = h('input', { name: 'order_identifier', maxlength: 10, autocomplete: 'off' });
  const outcome = h('p', { role: 'status', class: 'status-line outcome' });
  const submit = h('button', { type: 'submit' }, 'Review bid');
  const value = h('p', { class: 'bid-value', 'aria-live': 'polite' });
  const confirmation = h('div', { class: 'bid-confirm', hidden: true });

  /** The bid's value now: quantity x price, or x the cut-off price for a cut-off bid. */
  const bidRupees = () => {
    const shares = quantity.valueAsNumber;
    const each = cutOff.checked ? Number(issue.retail_cutoff_price ?? NaN) : price.valueAsNumber;
    return Number.isFinite(shares) && Number.isFinite(each) ? shares * each : null;
  };
  const showValue = () => {
    const rupees = bidRupees();
    const parts = [
      rupees === null
        ? 'Order value: -'
        : `Order value: ${formatRupees(rupees)}${cutOff.checked ? ' at the cut-off price' : ''}`,
    ];
    if (retail)
      parts.push(
        `the Rs 2,00,000 retail limit still allows ${formatRupees(Math.max(0, RETAIL_LIMIT_RUPEES - liveRetailValue(issue, context)))}`,
      );
    value.textContent = `${parts.join('; ')}.`;
  };
  const controls = { quantity, price, order_identifier: tag };
  const bodyOf = () => ({
    scrip_info: {
      exchange: issue.exchange,
      scrip_token: issue.scrip_token,
      symbol: issue.symbol,
      series: issue.series,
    },
    transaction_type: 'BUY',
    product_type: 'OFS',
    order_type: cutOff.checked ? 'RL-MKT' : 'RL',
    quantity: String(quantity.valueAsNumber),
    price: cutOff.checked ? 0 : price.valueAsNumber,
    ...(tag.value.trim() === '' ? {} : { order_identifier: tag.value.trim() }),
  });
  const editing = (on: boolean) => {
    confirmation.hidden = on;
    submit.hidden = !on;
    for (const control of [quantity, price, cutOff, tag])
      control.disabled = !on || (control === price && cutOff.checked);
  };
  /** After a placed bid the form is empty again: a second click places nothing until it is filled in. */
  const clear = () => {
    quantity.value = '';
    tag.value = '';
    showValue();
  };
  for (const control of [quantity, price, cutOff]) control.addEventListener('input', showValue);
  cutOff.addEventListener('change', () => {
    price.disabled = cutOff.checked;
    showValue();
  });
  const form = h(
    'form',
    {
      class: 'bid-form',
      'aria-label': `Bid for ${issueName(issue)}`,
      onSubmit: (event: Event) => {
        event.preventDefault();
        // Asked first: what the bid is and what it costs, then Confirm or Change.
        const rupees = bidRupees();
        const terms = cutOff.checked ? 'at the cut-off price' : `at ${formatPrice(price.valueAsNumber)}`;
        const confirm = h('button', { type: 'button', class: 'primary' }, 'Confirm bid');
        const change = h('button', { type: 'button' }, 'Change');
        confirm.addEventListener('click', () => {
          editing(true);
          placeBid(bodyOf(), outcome, submit, {
            controls,
            terms: { tick: issue.tick_size, floor: issue.floor_price, cutoff: issue.retail_cutoff_price },
            // The outcome follows the order until the OMS has decided, as the offers' ticket does.
            follow: context.orders,
            placed: clear,
          });
        });
        change.addEventListener('click', () => {
          editing(true);
          quantity.focus();
        });
        confirmation.replaceChildren(
          h(
            'p',
            {},
            `Buy ${formatQuantity(quantity.valueAsNumber)} ${issue.symbol} ${issue.series} ${terms} on ${issue.exchange}${rupees === null ? '' : `, ${formatRupees(rupees)}`}?`,
          ),
          confirm,
          change,
        );
        editing(false);
        confirm.focus();
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
    value,
    submit,
    confirmation,
    outcome,
  );
  showValue();
  valueRefreshers.add(showValue);
  return form;
}

/** Why the caller may not bid now, with when: it opens later, or it has closed. */
function windowNotice(window: BiddingWindow, now: number): string {
  return stateAt(window, now) === 'UPCOMING'
    ? `Your bidding window opens at ${formatInstant(new Date(window.opensAt).toISOString())} (in ${formatDuration(window.opensAt - now)}).`
    : `Your bidding window closed at ${formatInstant(new Date(window.closesAt).toISOString())}.`;
}

function issueCard(
  issue: OfsIssue,
  context: ConsoleContext,
  timers: { element: HTMLElement; window: BiddingWindow }[],
): HTMLElement {
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
    open
      ? bidForm(issue, context)
      : h('p', { class: 'window-notice' }, windowNotice(windowFor(issue, context.session.category), serverNow())),
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
  const callerOpen = (issue: OfsIssue, now: number) =>
    stateAt(windowFor(issue, context.session.category), now) === 'OPEN';
  const cardFor = (issue: OfsIssue): Card => {
    const timers: Card['timers'] = [];
    const element = issueCard(issue, context, timers);
    return { issue, element, timers, open: callerOpen(issue, serverNow()) };
  };
  const refresh = () => {
    loadIssues()
      .then((issues) => {
        valueRefreshers.clear();
        cards = issues.map(cardFor);
        list.replaceChildren(
          ...(cards.length === 0 ? [h('p', {}, 'No OFS issue is registered.')] : cards.map((card) => card.element)),
        );
      })
      .catch((error: unknown) => {
        list.replaceChildren(
          h('p', { role: 'alert' }, error instanceof ApiError ? error.describe() : 'The OFS issues could not be read'),
        );
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
    h(
      'div',
      { class: 'view-head' },
      h('h2', { id: 'view-title', tabindex: -1 }, 'OFS issues'),
      h('button', { type: 'button', onClick: refresh }, 'Refresh'),
    ),
    list,
  );
  // A bid of the caller's that goes live (or ends) changes what the retail limit still allows.
  const unsubscribe = context.orders.subscribe(() => {
    for (const refresh of valueRefreshers) refresh();
  });
  return {
    element,
    dispose: () => {
      clearInterval(ticker);
      unsubscribe();
      valueRefreshers.clear();
    },
  };
}
