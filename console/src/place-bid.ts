/**
 * Sends a bid from a bid form (the issues and the offers views): the form's submit button is held while it
 * travels, and its outcome line says what became of it: a success and a refusal look different (a mark,
 * a colour) and are read to screen readers; a refusal is said once, in a trader's words, beside the field
 * it is about when there is one. The API's own message stays in its envelope.
 */
import { ApiError, call } from './api.js';
import { clearFieldError, h, showFieldError } from './dom.js';
import { formatPrice } from './format.js';

/** The form's controls a refusal may be about, by the bid's field name. */
export type BidControls = Partial<Record<'quantity' | 'price' | 'order_identifier', HTMLInputElement>>;

/** What a refused bid says to a trader, and the bid's field it is about (if any). */
export function bidRefusal(
  error: ApiError,
  terms: { tick?: string | number | null; floor?: string | number | null; cutoff?: string | number | null } = {},
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
      return { text: `The price must be a multiple of the tick (${formatPrice(terms.tick)}).`, field: 'price' };
    case 'e-356':
      return { text: `The price is below the floor price (${formatPrice(terms.floor)}).`, field: 'price' };
    case 'e-359':
      return {
        text: `A retail bid may not be below the retail cut-off price (${formatPrice(terms.cutoff)}): raise it, or bid at the cut-off.`,
        field: 'price',
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
    default:
      return { text: error.message, field: null };
  }
}

/** Shows the outcome: a mark and a sentence, styled as a success or a refusal. */
export function showOutcome(outcome: HTMLElement, kind: 'ok' | 'refused' | 'pending', text: string): void {
  outcome.className = `status-line outcome ${kind}`;
  const mark = kind === 'ok' ? '\u2713' : kind === 'refused' ? '\u2715' : '';
  outcome.replaceChildren(
    ...(mark === '' ? [] : [h('span', { class: 'outcome-mark', 'aria-hidden': 'true' }, mark)]),
    text,
  );
}

/**
 * Places the bid. `controls` are the form's fields (a refusal about one is shown beside it); `terms` the
 * issue's prices a refusal may name; `placed` runs after a success (the form clears itself there).
 */
export function placeBid(
  body: Record<string, unknown>,
  outcome: HTMLElement,
  submit: HTMLButtonElement,
  options: { controls?: BidControls; terms?: Parameters<typeof bidRefusal>[1]; placed?: () => void } = {},
): void {
  const controls = options.controls ?? {};
  for (const control of Object.values(controls)) if (control) clearFieldError(control);
  submit.disabled = true;
  showOutcome(outcome, 'pending', 'Sending the bid...');
  call<{ orderId: string }>('POST', '/transactional/v1/orders/regular', { body, orderEntry: true })
    .then(({ body: answer }) => {
      showOutcome(outcome, 'ok', `Bid placed: order ${answer.data.orderId}. Its status follows in Orders.`);
      outcome.dataset.orderId = answer.data.orderId;
      options.placed?.();
    })
    .catch((error: unknown) => {
      if (!(error instanceof ApiError))
        return showOutcome(outcome, 'refused', 'The bid could not be sent: check your connection and try again.');
      const refusal = bidRefusal(error, options.terms);
      const control = refusal.field === null ? undefined : controls[refusal.field];
      if (control === undefined) return showOutcome(outcome, 'refused', `Bid refused: ${refusal.text}`);
      showOutcome(outcome, 'refused', 'Bid refused: see the field above.');
      showFieldError(control, refusal.text);
      control.focus();
    })
    .finally(() => {
      submit.disabled = false;
    });
}
