/**
 * Sends a bid from a bid form (the issues and the offers views): the form's submit button is held while it
 * travels, and its outcome line says what became of it: a success and a refusal look different (a mark,
 * a colour) and are read to screen readers; a refusal is said once, in a trader's words, beside the field
 * it is about when there is one. The API's own message stays in its envelope. Given the caller's order book
 * (`follow`), the outcome line follows the order until the OMS has decided: placed, then accepted (funds
 * blocked, sent to or live at the exchange) or rejected with the reason in a trader's words.
 */
import '../styles/words.css';
import { ApiError, entry, inWords } from './api.js';
import { clearFieldError, h, showFieldError, supportLine } from './dom.js';
import { formatPrice } from './format.js';
import type { OrderStore } from './orders-store.js';
import type { Order, PlaceBid } from './types.js';

/** The form's controls a refusal may be about, by the bid's field name. */
export type BidControls = Partial<Record<'quantity' | 'price' | 'order_identifier', HTMLInputElement>>;

/** What a refused bid says to a trader, and the bid's field it is about (if any). */
export interface BidTerms {
  tick?: string | number | null;
  floor?: string | number | null;
  cutoff?: string | number | null;
  /** What the cut-off a retail price bid may not be under is called: an issue's retail cut-off (the default), an offer's T-day cut-off. */
  cutoffName?: string;
}

/** " (0.05)": a price the refusal names, or nothing when it is not known (never "(-)"). */
const named = (price: string | number | null | undefined) =>
  price === null || price === undefined || price === '' ? '' : ` (${formatPrice(price)})`;

export function bidRefusal(
  error: ApiError,
  terms: BidTerms = {},
): {
  text: string;
  field: keyof BidControls | null;
} {
  switch (error.code) {
    case 'e-305':
      return { text: 'Enter a whole number of shares, from 1.', field: 'quantity' };
    case 'e-306':
    case 'e-304':
      return { text: 'Enter a price above 0, or bid at the cut-off price.', field: 'price' };
    case 'e-353':
      return { text: `The price must be a multiple of the tick${named(terms.tick)}.`, field: 'price' };
    case 'e-356':
      return { text: `The price is below the floor price${named(terms.floor)}.`, field: 'price' };
    case 'e-359':
      return {
        text: `A retail bid may not be below the ${terms.cutoffName ?? 'retail cut-off price'}${named(terms.cutoff)}: raise it, or bid at the cut-off.`,
        field: 'price',
      };
    case 'e-362':
      return {
        text: 'This listing takes no such bid from you: choose another listing or what you bid as.',
        field: null,
      };
    case 'e-363':
      return { text: 'You are not registered as an employee of this offer: bid as retail.', field: null };
    case 'e-364':
      return { text: 'Employees bid at the cut-off price only.', field: 'price' };
    case 'e-365':
      return {
        text: 'This bid would take your employee bids in this offer above Rs 5,00,000 at the T-day cut-off: lower it.',
        field: 'quantity',
      };
    case 'e-366':
      return {
        text: 'New non-retail bids are taken on day T only: on T+1, carry a bid forward from Orders.',
        field: null,
      };
    case 'e-357':
      return { text: 'Only retail bidders may bid at the cut-off price: enter a price.', field: 'price' };
    case 'e-358':
      return { text: 'The cut-off price is not set yet: enter a price.', field: 'price' };
    case 'e-360':
      return {
        text: 'This bid would take your live retail bids in this offer above Rs 2,00,000: lower it, or cancel another bid.',
        field: 'quantity',
      };
    case 'e-313':
      return { text: 'Your tag takes at most 10 characters.', field: 'order_identifier' };
    case 'e-354':
      return { text: 'Your bidding window has not opened yet.', field: null };
    case 'e-355':
      return { text: 'Your bidding window has closed.', field: null };
    case 'e-429':
    case 'e-603':
      return { text: 'Too many orders in this second: wait a moment, then place it again.', field: null };
    case 'e-503':
      return { text: 'The service cannot take the bid right now: try again in a moment.', field: null };
    default: {
      // Any other fault of a field the form has is said beside it, in the API's words without its path.
      const fault = error.faults().find((f) => f.key !== null && BID_FIELDS.includes(f.key));
      return fault === undefined
        ? { text: error.describe(), field: null }
        : { text: fault.text, field: fault.key as keyof BidControls };
    }
  }
}

const BID_FIELDS: readonly string[] = ['quantity', 'price', 'order_identifier'];

/**
 * Shows the outcome: a mark and a sentence, styled as a success or a refusal; under a refusal the API's
 * code and request id for support (`support`), muted.
 */
export function showOutcome(
  outcome: HTMLElement,
  kind: 'ok' | 'refused' | 'pending',
  text: string,
  support?: string,
): void {
  outcome.className = `status-line outcome ${kind}`;
  const mark = kind === 'ok' ? '\u2713' : kind === 'refused' ? '\u2715' : '';
  outcome.replaceChildren(
    ...(mark === '' ? [] : [h('span', { class: 'outcome-mark', 'aria-hidden': 'true' }, mark)]),
    text,
    ...(support === undefined ? [] : [supportLine(support)]),
  );
}

/**
 * Why the OMS or the exchange ended a bid, in a trader's words: the OMS's prefix left out, a funds shortfall
 * said as such ("Not enough funds: the bid needs Rs 20,000.00; Rs 10,000.00 available.").
 */
export function endReason(reason: string): string {
  const text = reason.replace(/^Rejected by the OMS:\s*/, '').trim();
  if (text === '') return 'No reason was given.';
  return inWords(
    /^the (bid|new terms) needs? /.test(text) ? `Not enough funds: ${text.replace(/ of funds;/, ';')}` : text,
  );
}

/** What the outcome line says of a placed order as its status stands; null while the OMS has not decided. */
export function decision(order: Order, blocks: string | null): { kind: 'ok' | 'refused'; text: string } | null {
  const id = order.order_id;
  const blocked = blocks === null ? 'Accepted' : `Accepted: ${blocks} of your funds blocked`;
  switch (order.status) {
    case 'OMSXMITTED':
      return null;
    case 'EXXMITTED':
      return { kind: 'ok', text: `Bid placed: order ${id}. ${blocked}; sent to the exchange.` };
    case 'PENDING':
      return { kind: 'ok', text: `Bid placed: order ${id}. ${blocked}; live at the exchange.` };
    case 'EXECUTED':
      return { kind: 'ok', text: `Bid placed: order ${id}. Accepted and allotted: see Orders.` };
    case 'CANCELLED':
      return { kind: 'refused', text: `Bid cancelled: order ${id}. ${endReason(order.error_reason)}` };
    default:
      return { kind: 'refused', text: `Bid rejected: order ${id}. ${endReason(order.error_reason)}` };
  }
}

/**
 * Keeps the outcome line on the order until it is live at the exchange or finished, from the order book's
 * events. It stops when another bid is placed from the form, or the form leaves the page.
 */
function followOrder(outcome: HTMLElement, orderId: string, store: OrderStore, blocks: string | null): void {
  let stop = () => {};
  const show = (order: Order | undefined) => {
    if (outcome.dataset.orderId !== orderId || (!outcome.isConnected && order !== undefined)) return stop();
    if (order === undefined) return;
    const said = decision(order, blocks);
    if (said === null) return;
    showOutcome(outcome, said.kind, said.text);
    if (order.status !== 'EXXMITTED') stop();
  };
  stop = store.subscribe((order) => {
    if (order.order_id === orderId) show(order);
  });
  show(store.find(orderId));
}

/**
 * Places the bid. `controls` are the form's fields (a refusal about one is shown beside it); `terms` the
 * issue's prices a refusal may name; `placed` runs after a success (the form clears itself there); `follow`,
 * the caller's order book, keeps the outcome on the order until the OMS has decided; `blocks`, what the bid
 * blocks of the caller's funds ("Rs 1,000.00"; null when not funds-checked), is named once it is accepted.
 */
export function placeBid(
  body: Record<string, unknown>,
  outcome: HTMLElement,
  submit: HTMLButtonElement,
  options: {
    controls?: BidControls;
    terms?: BidTerms;
    placed?: () => void;
    follow?: OrderStore;
    blocks?: string | null;
  } = {},
): void {
  const controls = options.controls ?? {};
  for (const control of Object.values(controls)) if (control) clearFieldError(control);
  submit.disabled = true;
  delete outcome.dataset.orderId;
  showOutcome(outcome, 'pending', 'Sending the bid...');
  entry(['place', body], (client, key) => client.place(body as PlaceBid, key))
    .then((answer) => {
      const orderId = answer.data.orderId;
      outcome.dataset.orderId = orderId;
      if (options.follow === undefined)
        showOutcome(outcome, 'ok', `Bid placed: order ${orderId}. Its status follows in Orders.`);
      else {
        showOutcome(outcome, 'pending', `Bid placed: order ${orderId}. Waiting for the OMS to check it...`);
        followOrder(outcome, orderId, options.follow, options.blocks ?? null);
      }
      options.placed?.();
    })
    .catch((error: unknown) => {
      if (!(error instanceof ApiError))
        return showOutcome(outcome, 'refused', 'The bid could not be sent: check your connection and try again.');
      const refusal = bidRefusal(error, options.terms);
      const control = refusal.field === null ? undefined : controls[refusal.field];
      if (control === undefined)
        return showOutcome(outcome, 'refused', `Bid refused: ${refusal.text}`, error.support());
      showOutcome(outcome, 'refused', 'Bid refused: see the field above.', error.support());
      showFieldError(control, refusal.text);
      control.focus();
    })
    .finally(() => {
      submit.disabled = false;
    });
}
