/**
 * The order book, kept current by the order events, in three tabs: the open orders (in flight or live), the
 * finished ones (executed, cancelled, rejected) and the trades. Each row's status changes in place while
 * the page is open, an order moving from the open tab to the finished one as it ends, and a notice above
 * the tabs tells each change worth telling (a polite live region). Open bids can be modified or cancelled
 * in a dialog, and a live non-retail bid in an offer carried forward to T+1 (at a revised price when it is
 * below the T-day cut-off, or when the trader wants); any order's history can be read, with its full id to
 * copy. Ids are shortened in the tables (their last 8 characters), times are
 * India time to the second.
 */
import { ApiError, entry, MOST_TRADES, readData, readTrades } from '../api.js';
import type { ConsoleContext, View } from '../context.js';
import { field, h, instantElement, row, sayFormRefusal, sayRefusal, select, statusLine, table } from '../dom.js';
import {
  amountOf,
  formatClock,
  formatInstant,
  formatOrderId,
  formatPrice,
  formatQuantity,
  formatRupees,
  instantParts,
  parseInstant,
} from '../format.js';
import { serverNow, syncServerClock } from '../ofs-issues.js';
import { loadOffer, NON_RETAIL_BID_CATEGORIES } from '../ofs-offers.js';
import { isOpen, newerFirst, type OrderChange } from '../orders-store.js';
import type { Exchange, ModifyBid, OfsOffer, Order, Trade } from '../types.js';
import { orderAllotment } from './allotment.js';

const COLUMNS = ['Order', 'Instrument', 'Quantity', 'Price', 'Allotted', 'Status', 'Last change', 'Actions'];
const TRADE_COLUMNS = ['Time', 'Order', 'Instrument', 'Quantity', 'Price', 'Amount'];
/** How many notices the view shows, newest first. */
const NOTICES_SHOWN = 3;

/** The five states a status badge tells apart: each its own style. */
type BadgeState = 'in-flight' | 'live' | 'executed' | 'cancelled' | 'rejected';
const BADGES: Record<string, { state: BadgeState; meaning: string }> = {
  OMSXMITTED: { state: 'in-flight', meaning: 'In flight: sent to the OMS' },
  EXXMITTED: { state: 'in-flight', meaning: 'In flight: sent to the exchange' },
  PENDING: { state: 'live', meaning: 'Live at the exchange' },
  EXECUTED: { state: 'executed', meaning: 'Executed: allotted' },
  CANCELLED: { state: 'cancelled', meaning: 'Cancelled' },
  OMSREJECT: { state: 'rejected', meaning: 'Rejected by the OMS' },
  ORDERERROR: { state: 'rejected', meaning: 'Rejected by the exchange' },
};

/** A status as a badge: the status in words, its state (in flight, live, executed, cancelled, rejected) in its style. */
function badge(status: string): HTMLElement {
  const { state, meaning } = BADGES[status] ?? { state: 'in-flight', meaning: status };
  return h('span', { class: `badge badge-${state}`, 'data-state': state, title: meaning }, status);
}

/** An order id as the tables show it: shortened, the full id in its title; then the user's tag, if any. */
const orderIdCell = (orderId: string, tag: string) =>
  h(
    'span',
    {},
    h('code', { class: 'order-id', title: orderId }, formatOrderId(orderId)),
    tag === '' ? null : h('small', {}, ` (${tag})`),
  );

/**
 * An order's last change for its one-line row: its date and its time in parts, so that a desktop row shows
 * the time alone for today and the date alone for an older day (app.css), a phone's both as before; the
 * whole instant in its title.
 */
function lastChange(text: string): HTMLElement | string {
  const parts = instantParts(text);
  if (parts === null) return text;
  return h(
    'time',
    {
      datetime: new Date(parseInstant(text)).toISOString(),
      title: formatInstant(text),
      class: parts.today ? 'instant-today' : 'instant-older',
    },
    h('span', { class: 'instant-date' }, parts.date),
    h('span', { class: 'instant-sep' }, ', '),
    h('span', { class: 'instant-clock' }, parts.clock),
  );
}

/** A trade's amount, quantity times price, worked out in paise. */
const tradeAmount = (trade: Trade) =>
  ((Math.round(Number(trade.traded_price) * 100) * trade.traded_quantity) / 100).toFixed(2);

type TabName = 'open' | 'finished' | 'trades';
const TABS: { name: TabName; label: string }[] = [
  { name: 'open', label: 'Open' },
  { name: 'finished', label: 'Finished' },
  { name: 'trades', label: 'Trades' },
];
const priceText = (order: Order) => (order.order_type === 'RL-MKT' ? 'cut-off' : formatPrice(order.order_price));
const describeOrder = (order: Order) =>
  `${order.symbol} ${formatQuantity(order.total_quantity)} at ${priceText(order)}`;
/** A non-retail bid in an offer: the one kind of bid carried forward to T+1 (the server says when it may be). */
const isOfferNonRetailBid = (order: Order) =>
  order.offer_id !== '' && NON_RETAIL_BID_CATEGORIES.has(order.bid_category);
/** A bid that carrying forward could take, by its own fields: live, non-retail in an offer, not carried forward, some of it unallotted. */
const mayCarry = (order: Order) =>
  isOpen(order) &&
  isOfferNonRetailBid(order) &&
  !order.carried_forward &&
  order.total_quantity - order.traded_quantity > 0;
/**
 * Whether the server takes a carry-forward in the offer now (its rule, carryForwardViolations): during T+1,
 * once the T allocation has run (the offer T_ALLOCATED or T1_OPEN as last read), by the server's clock.
 */
const carryOpen = (offer: OfsOffer, now: number) =>
  (offer.state === 'T_ALLOCATED' || offer.state === 'T1_OPEN') &&
  parseInstant(offer.t1_day.opens_at) <= now &&
  now < parseInstant(offer.t1_day.closes_at);
/** How often an offer whose T allocation has not run is read again while a bid of it could be carried forward. */
const OFFER_READ_MS = 15_000;

/** One dialog for every order action; native <dialog> keeps the focus inside and closes on Escape. */
function orderDialog(): { dialog: HTMLDialogElement; open(title: string, ...content: Node[]): void; close(): void } {
  const title = h('h3', { id: 'order-dialog-title' });
  const body = h('div');
  const dialog = h(
    'dialog',
    { 'aria-labelledby': 'order-dialog-title', class: 'card' },
    title,
    body,
    h('button', { type: 'button', class: 'secondary', onClick: () => dialog.close() }, 'Close'),
  );
  let opener: Element | null = null;
  dialog.addEventListener('close', () => {
    if (opener instanceof HTMLElement && opener.isConnected) opener.focus();
  });
  return {
    dialog,
    open(text, ...content) {
      opener = document.activeElement;
      title.textContent = text;
      body.replaceChildren(...content);
      dialog.showModal();
      (dialog.querySelector<HTMLElement>('input, select, button') ?? dialog).focus();
    },
    close: () => dialog.close(),
  };
}

/** A bid's quantity and price as inputs, filled with its terms: the modification and the carry-forward both revise them. */
function termInputs(order: Order): { quantity: HTMLInputElement; price: HTMLInputElement } {
  return {
    quantity: h('input', {
      name: 'quantity',
      type: 'number',
      inputmode: 'numeric',
      min: 1,
      step: 1,
      required: true,
      value: order.total_quantity,
    }),
    price: h('input', {
      name: 'price',
      type: 'number',
      inputmode: 'decimal',
      min: 0,
      step: 'any',
      required: true,
      value: formatPrice(order.order_price),
    }),
  };
}

export function ordersView(context: ConsoleContext): View {
  const dialog = orderDialog();
  const rows = new Map<string, HTMLTableRowElement>();
  const openBody = h('tbody');
  const finishedBody = h('tbody');
  const openEmpty = h('p');
  const finishedEmpty = h('p');
  const note = h('p', { class: 'book-note' });
  const bodyOf = (order: Order) => (isOpen(order) ? openBody : finishedBody);

  /**
   * The offers of the bids that could be carried forward, as last read: Carry forward is offered only when
   * the server would take it (T+1, after the T allocation). An offer is read again when a bid of it changes,
   * every OFFER_READ_MS while its T allocation has not run, and its rows redrawn when T+1 opens and closes.
   */
  const offers = new Map<string, OfsOffer>();
  const offerTimers = new Map<string, ReturnType<typeof setTimeout>[]>();
  const offersReading = new Set<string>();
  const ordersOf = (offerId: string) => context.orders.list().filter((order) => order.offer_id === offerId);
  function redrawOffer(offerId: string): void {
    for (const order of ordersOf(offerId)) {
      if (!rows.has(order.order_id)) continue;
      drawn.delete(order.order_id);
      draw(order);
    }
  }
  function readOffer(offerId: string): void {
    if (disposed || offersReading.has(offerId)) return;
    offersReading.add(offerId);
    const started = Date.now();
    loadOffer(offerId)
      .then(({ offer, server_time }) => {
        if (disposed) return;
        syncServerClock(server_time, started);
        offers.set(offerId, offer);
        for (const timer of offerTimers.get(offerId) ?? []) clearTimeout(timer);
        const now = serverNow();
        const timers: ReturnType<typeof setTimeout>[] = [];
        // Redrawn as T+1 opens and closes (a second after, on the server's clock).
        for (const at of [parseInstant(offer.t1_day.opens_at), parseInstant(offer.t1_day.closes_at)]) {
          if (at > now && at - now < 2_000_000_000)
            timers.push(setTimeout(() => redrawOffer(offerId), at - now + 1_000));
        }
        if ((offer.state === 'ANNOUNCED' || offer.state === 'T_OPEN') && ordersOf(offerId).some(mayCarry))
          timers.push(setTimeout(() => readOffer(offerId), OFFER_READ_MS));
        offerTimers.set(offerId, timers);
        redrawOffer(offerId);
      })
      .catch(() => {
        // Not offered while unknown; tried again a little later.
        if (!disposed) offerTimers.set(offerId, [setTimeout(() => readOffer(offerId), OFFER_READ_MS)]);
      })
      .finally(() => offersReading.delete(offerId));
  }
  /** Reads the offers of the bids that could be carried forward and are not read yet. */
  function readOffersNeeded(): void {
    for (const order of context.orders.list()) {
      if (mayCarry(order) && !offers.has(order.offer_id) && !offerTimers.has(order.offer_id)) readOffer(order.offer_id);
    }
  }

  function modifyForm(order: Order): HTMLFormElement {
    const orderType = select(
      'order_type',
      [
        ['RL', 'Limit (RL)'],
        ['RL-MKT', 'Cut-off (RL-MKT)'],
      ],
      order.order_type,
    );
    const { quantity, price } = termInputs(order);
    const syncPrice = () => {
      price.disabled = orderType.value === 'RL-MKT';
    };
    orderType.addEventListener('change', syncPrice);
    syncPrice();
    const status = statusLine();
    const submit = h('button', { type: 'submit' }, 'Save changes');
    return h(
      'form',
      {
        onSubmit: (event: Event) => {
          event.preventDefault();
          submit.disabled = true;
          const body = {
            order_type: orderType.value,
            quantity: String(quantity.valueAsNumber),
            price: orderType.value === 'RL-MKT' ? 0 : price.valueAsNumber,
            traded_quantity: order.traded_quantity,
          };
          entry(['modify', order.exchange, order.order_id, body], (client, key) =>
            client.modify(order.exchange as Exchange, order.order_id, body as ModifyBid, key),
          )
            .then(() => {
              context.announce(`Modification of order ${order.order_id} sent to the OMS`);
              dialog.close();
            })
            .catch((error: unknown) => {
              if (error instanceof ApiError)
                sayFormRefusal(status, 'Not modified', error, { order_type: orderType, quantity, price });
              else status.textContent = 'The modification could not be sent';
              submit.disabled = false;
            });
        },
      },
      field('Order type', orderType),
      field('Quantity', quantity),
      field('Price (Rs)', price),
      submit,
      status,
    );
  }

  function cancelForm(order: Order): HTMLElement {
    const status = statusLine();
    const confirm = h('button', { type: 'button', class: 'danger' }, 'Cancel the bid');
    confirm.addEventListener('click', () => {
      confirm.disabled = true;
      entry(['cancel', order.exchange, order.order_id], (client, key) =>
        client.cancel(order.exchange as Exchange, order.order_id, key),
      )
        .then(() => {
          context.announce(`Cancellation of order ${order.order_id} sent to the OMS`);
          dialog.close();
        })
        .catch((error: unknown) => {
          if (error instanceof ApiError) sayRefusal(status, 'Not cancelled', error);
          else status.textContent = 'The cancellation could not be sent';
          confirm.disabled = false;
        });
    });
    return h(
      'div',
      {},
      h('p', {}, `Cancel the bid ${describeOrder(order)} (order ${order.order_id})?`),
      confirm,
      status,
    );
  }

  /**
   * Carrying a non-retail bid forward to T+1, with its price (and quantity) revised if the trader wants: the
   * dialog reads the offer for its T-day cut-off, since a carried-forward bid stands at or above it (a bid
   * below it goes forward only revised to at least it: the price field starts at the cut-off then), and says
   * what carrying forward blocks of the bidder's funds again (the T allocation released the block of what it
   * left unallotted). The body goes only with a change (or a bid below the cut-off): a plain carry-forward
   * sends none. The server judges the rest (outside T+1, nothing unallotted, e-380 below the cut-off), its
   * refusal shown in the status line.
   */
  function carryForwardForm(order: Order): HTMLFormElement {
    const bidPrice = Number(order.order_price);
    const { quantity, price } = termInputs(order);
    const priceField = field('Price (Rs)', price, 'At or above the T-day cut-off');
    const cutOffLine = h('p', { 'data-carry': 'cut-off' }, `Reading the T-day cut-off of offer ${order.offer_id}...`);
    const fundsLine = h('p', { class: 'hint', 'data-carry': 'funds' });
    const status = statusLine();
    const submit = h('button', { type: 'submit' }, 'Carry forward');
    /** The T-day cut-off: undefined until the offer is read, null while the T allocation has not found it. */
    let cutOff: number | null | undefined;
    let priceTouched = false;
    price.addEventListener('input', () => (priceTouched = true));

    const cents = (value: number) => Math.round(value * 100);
    const below = () => typeof cutOff === 'number' && cents(bidPrice) < cents(cutOff);
    /** What carrying forward blocks again: the shares not allotted on T, at the price it goes forward at. */
    const showFunds = () => {
      const unallotted = quantity.valueAsNumber - order.traded_quantity;
      const each = price.valueAsNumber;
      if (order.margin_type === 'T') {
        fundsLine.textContent =
          'A 0 %-margin bid blocks no funds (its custodian confirms it); it may be revised upward only.';
      } else if (!(unallotted > 0) || !(each > 0)) {
        fundsLine.textContent =
          'Carrying forward blocks the funds of the unallotted shares again, at the price they go forward at.';
      } else {
        fundsLine.replaceChildren(
          `Carrying forward blocks the funds of the ${formatQuantity(unallotted)} unallotted shares again (the T allocation released them): `,
          h(
            'strong',
            {},
            `${formatQuantity(unallotted)} \u00d7 ${formatPrice(each)} = ${formatRupees(amountOf(unallotted, each))}`,
          ),
          '. Short of it, the OMS refuses the carry-forward and the bid ends for good: executed for what T allotted, else cancelled.',
        );
      }
    };
    const showCutOff = () => {
      if (cutOff === undefined) return;
      if (cutOff === null) {
        cutOffLine.textContent =
          'The T-day cut-off is not known yet: bids are carried forward on T+1, once the T allocation has found it.';
      } else if (below()) {
        cutOffLine.textContent = `T-day cut-off ${formatPrice(cutOff)}: the bid's ${formatPrice(bidPrice)} is below it. A carried-forward bid stands at or above the cut-off, so this one goes forward only revised to at least ${formatPrice(cutOff)}.`;
      } else {
        cutOffLine.textContent = `T-day cut-off ${formatPrice(cutOff)}: the bid's ${formatPrice(bidPrice)} stands at or above it. You may revise it as you carry it forward, to a price at or above the cut-off.`;
      }
    };
    quantity.addEventListener('input', showFunds);
    price.addEventListener('input', showFunds);
    showFunds();
    loadOffer(order.offer_id).then(
      ({ offer }) => {
        cutOff = offer.t_cutoff_price;
        // A bid below the cut-off must be revised: the field starts at the least it may go forward at.
        if (below() && !priceTouched) price.value = formatPrice(cutOff);
        if (cutOff !== null)
          priceField.querySelector('.hint')!.textContent = `At or above the T-day cut-off, ${formatPrice(cutOff)}`;
        showCutOff();
        showFunds();
      },
      (error: unknown) => {
        cutOffLine.textContent = `The offer could not be read (${error instanceof ApiError ? error.describe() : 'no answer'}): the server still checks the price against the T-day cut-off.`;
      },
    );

    return h(
      'form',
      {
        class: 'carry-form',
        'aria-label': `Carry order ${order.order_id} forward`,
        onSubmit: (event: Event) => {
          event.preventDefault();
          submit.disabled = true;
          const priceChanged = cents(price.valueAsNumber) !== cents(bidPrice);
          const quantityChanged = quantity.valueAsNumber !== order.total_quantity;
          // Only what changed, and the price of a bid below the cut-off (which must go forward revised).
          const body = {
            ...(priceChanged || below() ? { price: price.valueAsNumber } : {}),
            ...(quantityChanged ? { quantity: String(quantity.valueAsNumber) } : {}),
          };
          const revised = Object.keys(body).length > 0;
          entry(['carryForward', order.exchange, order.order_id, revised ? body : null], (client, key) =>
            client.carryForward(order.exchange as Exchange, order.order_id, {
              ...key,
              ...(revised ? { revision: body } : {}),
            }),
          )
            .then(() => {
              const terms = revised
                ? ` (revised to ${formatQuantity(quantity.valueAsNumber)} at ${formatPrice(price.valueAsNumber)})`
                : '';
              context.announce(`Carry-forward of order ${order.order_id} sent to the OMS${terms}`);
              dialog.close();
            })
            .catch((error: unknown) => {
              if (error instanceof ApiError) sayFormRefusal(status, 'Not carried forward', error, { quantity, price });
              else status.textContent = 'The carry-forward could not be sent';
              submit.disabled = false;
            });
        },
      },
      h(
        'p',
        {},
        `Carry the ${formatQuantity(order.total_quantity - order.traded_quantity)} unallotted shares of the bid ${describeOrder(order)} (order ${order.order_id}) forward to the T+1 allocation?`,
      ),
      cutOffLine,
      h(
        'div',
        { class: 'field-row' },
        priceField,
        field(
          'Quantity',
          quantity,
          order.traded_quantity === 0
            ? 'The whole bid (none allotted on T)'
            : `The whole bid, with the ${formatQuantity(order.traded_quantity)} allotted on T`,
        ),
      ),
      fundsLine,
      h(
        'p',
        { class: 'hint' },
        'During T+1 only, once the T allocation has run. A bid not carried forward is cancelled at the close of T+1.',
      ),
      submit,
      status,
    );
  }

  /** The order's full id, to read and to copy (the tables show it shortened). */
  function fullId(order: Order): HTMLElement {
    const id = h('code', { class: 'full-order-id' }, order.order_id);
    const status = statusLine();
    const copy = h('button', { type: 'button', class: 'secondary' }, 'Copy order id');
    copy.addEventListener('click', () => {
      const selectIt = (why: string) => {
        getSelection()?.selectAllChildren(id);
        status.textContent = `${why}: the id is selected, press Ctrl+C (Cmd+C) to copy it`;
      };
      // The clipboard API exists on https and localhost only.
      if (navigator.clipboard === undefined) return selectIt('The browser gives no clipboard here');
      navigator.clipboard.writeText(order.order_id).then(
        () => (status.textContent = 'Order id copied'),
        () => selectIt('The browser refused the clipboard'),
      );
    });
    return h('div', { class: 'order-id-full' }, h('p', {}, 'Order id ', id), copy, status);
  }

  async function history(order: Order): Promise<HTMLElement> {
    const [entries, allotment] = await Promise.all([
      readData((client) => client.orderHistory(order.order_id)),
      // The allotment explained, for a bid in an offer; the history stands without it.
      orderAllotment(order).catch(() => null),
    ]);
    return h(
      'div',
      {},
      fullId(order),
      allotment,
      h(
        'ol',
        { class: 'history' },
        entries.map((entry) =>
          h(
            'li',
            {},
            h('strong', {}, String(entry.status)),
            typeof entry.reason === 'string' && entry.reason !== '' ? `: ${entry.reason}` : '',
            typeof entry.last_modified === 'string' ? ` (${formatInstant(entry.last_modified)})` : '',
          ),
        ),
      ),
    );
  }

  /** Whether the server would take this bid's carry-forward now, as far as the console knows. */
  function canCarry(order: Order): boolean {
    const offer = offers.get(order.offer_id);
    return mayCarry(order) && offer !== undefined && carryOpen(offer, serverNow());
  }

  /**
   * Modify, cancel and carry forward for an open order (carry forward only when the server would take it;
   * a bid carried forward says so); the history for any.
   */
  function actions(order: Order): HTMLElement {
    const current = () => context.orders.find(order.order_id) ?? order;
    const open = isOpen(order);
    return h(
      'div',
      { class: 'actions' },
      open
        ? h(
            'button',
            {
              type: 'button',
              'data-action': 'modify',
              'aria-label': `Modify order ${order.order_id}`,
              onClick: () => dialog.open(`Modify ${describeOrder(current())}`, modifyForm(current())),
            },
            'Modify',
          )
        : null,
      open
        ? h(
            'button',
            {
              type: 'button',
              'data-action': 'cancel',
              class: 'danger',
              'aria-label': `Cancel order ${order.order_id}`,
              onClick: () => dialog.open('Cancel the bid', cancelForm(current())),
            },
            'Cancel',
          )
        : null,
      open && isOfferNonRetailBid(order) && (order.carried_forward || canCarry(order))
        ? h(
            'button',
            {
              type: 'button',
              'data-action': 'carry-forward',
              disabled: order.carried_forward,
              'aria-label': `Carry forward order ${order.order_id}`,
              onClick: () => dialog.open('Carry the bid forward to T+1', carryForwardForm(current())),
            },
            order.carried_forward ? 'Carried forward' : 'Carry forward',
          )
        : null,
      h(
        'button',
        {
          type: 'button',
          class: 'secondary',
          'data-action': 'history',
          'aria-label': `History of order ${order.order_id}`,
          onClick: () =>
            void history(current())
              .then((list) => dialog.open(`History of order ${formatOrderId(order.order_id)}`, list))
              .catch((error: unknown) =>
                context.announce(error instanceof ApiError ? error.describe() : 'The history could not be read'),
              ),
        },
        'History',
      ),
    );
  }

  function renderRow(order: Order): HTMLTableRowElement {
    return row(
      COLUMNS,
      [
        orderIdCell(order.order_id, order.order_identifier),
        [
          `${order.symbol} ${order.series} `,
          h('span', { class: 'exchange' }, order.exchange),
          order.offer_id === ''
            ? null
            : h(
                'small',
                { class: 'offer-bid' },
                ` offer ${order.offer_id}, ${order.bid_category}${order.carried_forward ? ', carried forward' : ''}`,
              ),
        ],
        formatQuantity(order.total_quantity),
        priceText(order),
        order.traded_quantity > 0
          ? `${formatQuantity(order.traded_quantity)} at ${formatPrice(order.traded_price)}`
          : null,
        h(
          'span',
          {},
          badge(order.status),
          order.error_reason === ''
            ? null
            : h('small', { class: 'status-reason', title: order.error_reason }, ` ${order.error_reason}`),
        ),
        lastChange(order.last_modified),
        actions(order),
      ],
      { 'data-order-id': order.order_id, 'data-status': order.status },
    );
  }

  /** The order as its row shows it, to tell a changed order from one already drawn. */
  const drawn = new Map<string, Order>();

  /**
   * The row of an order, drawn afresh if the order changed. An existing row keeps its element and its
   * buttons (only the cells are replaced), so that the keyboard focus stays put: on the same button, or on
   * the history when the order finished (its modify and cancel are gone).
   */
  function draw(order: Order): HTMLTableRowElement {
    const existing = rows.get(order.order_id);
    if (existing !== undefined && drawn.get(order.order_id) === order) return existing;
    drawn.set(order.order_id, order);
    const fresh = renderRow(order);
    if (existing === undefined) {
      rows.set(order.order_id, fresh);
      return fresh;
    }
    const focused = existing.contains(document.activeElement)
      ? (document.activeElement as HTMLElement).dataset.action
      : undefined;
    existing.replaceChildren(...fresh.childNodes);
    existing.dataset.status = order.status;
    if (focused !== undefined) refocus(existing, focused);
    return existing;
  }

  function refocus(tr: HTMLTableRowElement, action: string): void {
    (
      tr.querySelector<HTMLElement>(`[data-action="${action}"]:not([disabled])`) ??
      tr.querySelector<HTMLElement>('[data-action="history"]')
    )?.focus();
  }

  /** Puts a row in its table (open or finished), where the book's order (newest first) puts it. */
  function place(tr: HTMLTableRowElement, order: Order): void {
    const body = bodyOf(order);
    if (tr.parentElement === body) return;
    const next = [...body.rows].find((other) => newerFirst(order.order_id, other.dataset.orderId ?? '') < 0);
    if (next === undefined) body.append(tr);
    else next.before(tr);
  }

  /**
   * One order changed: its row is redrawn, and moved to the finished table if it ended. A focus inside a
   * row that moved out of sight goes to the tab that was shown.
   */
  function update(order: Order): void {
    const focused = rows.get(order.order_id)?.contains(document.activeElement)
      ? (document.activeElement as HTMLElement).dataset.action
      : undefined;
    const tr = draw(order);
    place(tr, order);
    if (order.offer_id !== '' && isOfferNonRetailBid(order)) {
      if (mayCarry(order) || offers.has(order.offer_id)) readOffer(order.offer_id);
    }
    if (focused !== undefined && !tr.contains(document.activeElement)) {
      if (panels[shown].contains(tr)) refocus(tr, focused);
      else tabs[shown].focus();
    }
    showBookRead();
  }

  /** Every known order, in the book's order (once the book has been read). */
  function renderAll(): void {
    const focused = main.contains(document.activeElement) ? document.activeElement : null;
    const list = context.orders.list();
    openBody.replaceChildren(...list.filter(isOpen).map(draw));
    finishedBody.replaceChildren(...list.filter((order) => !isOpen(order)).map(draw));
    if (focused instanceof HTMLElement && focused.isConnected && focused !== document.activeElement) focused.focus();
    showBookRead();
    readOffersNeeded();
  }

  /** Says what the tables hold while the book is read, if it could not be read, or if it was cut short; counts them in the tabs. */
  function showBookRead(): void {
    const read = context.orders.read;
    const reading = read.state === 'reading';
    openEmpty.textContent = reading
      ? 'Reading your orders...'
      : 'No open orders: place a bid from OFS issues or OFS offers.';
    openEmpty.hidden = openBody.rows.length > 0;
    finishedEmpty.textContent = reading ? 'Reading your orders...' : 'No finished orders yet.';
    finishedEmpty.hidden = finishedBody.rows.length > 0;
    counts.open.textContent = ` (${formatQuantity(openBody.rows.length)})`;
    counts.finished.textContent = ` (${formatQuantity(finishedBody.rows.length)})`;
    note.hidden = read.state !== 'capped' && read.state !== 'failed';
    if (read.state === 'capped') {
      note.textContent = `Your ${formatQuantity(read.total)} orders are more than the console reads: the newest ${formatQuantity(read.read)} (and any placed since) are shown, older ones are not.`;
    } else if (read.state === 'failed') {
      note.textContent = `Your order book could not be read in full (${read.message}): the orders below may not be all of them. Log in again to read it again.`;
    }
  }

  // The notices: the last few changes worth telling, newest first, for the eye. Screen readers hear each
  // change once, from the page's announcer (main.ts), on every view: a second live region here would say
  // it twice.
  const notices = h('div', { class: 'order-notices', 'aria-label': 'Changes to your orders' });
  function notice({ order, previous }: OrderChange): HTMLElement {
    const parts: (Node | string)[][] = [];
    if (previous === undefined) parts.push(['now ', badge(order.status)]);
    else if (previous.status !== order.status)
      parts.push([badge(previous.status), ' ', h('span', { class: 'notice-to' }, 'to'), ' ', badge(order.status)]);
    const allotted = order.traded_quantity - (previous?.traded_quantity ?? 0);
    if (allotted > 0) parts.push([`allotted ${formatQuantity(allotted)} at ${formatPrice(order.traded_price)}`]);
    if (
      previous !== undefined &&
      (previous.total_quantity !== order.total_quantity || priceText(previous) !== priceText(order))
    ) {
      parts.push([`modified to ${formatQuantity(order.total_quantity)} at ${priceText(order)}`]);
    }
    if (previous !== undefined && order.carried_forward && !previous.carried_forward)
      parts.push(['carried forward to T+1']);
    if (order.error_reason !== '' && order.error_reason !== previous?.error_reason) parts.push([order.error_reason]);
    const at = parseInstant(order.last_modified);
    return h(
      'p',
      { class: 'order-notice', 'data-notice-order': order.order_id },
      // The time is for the eye: the region reads the change alone.
      Number.isNaN(at) ? null : h('time', { class: 'notice-time', 'aria-hidden': 'true' }, formatClock(at)),
      `Order ${formatOrderId(order.order_id)} (${order.symbol} ${formatQuantity(order.total_quantity)} at ${priceText(order)}): `,
      parts.flatMap((part, index) => (index === 0 ? part : ['; ', ...part])),
    );
  }
  notices.replaceChildren(...context.orders.recentChanges().slice(0, NOTICES_SHOWN).map(notice));

  // The trades: read when their tab is shown, and again when an order is allotted more while it is.
  const tradesEmpty = h('p', {}, 'Reading your trades...');
  const tradesNote = h('p', { class: 'trades-note', hidden: true });
  const tradesWrap = h('div', { class: 'table-wrap' });
  let tradesStale = true;
  let tradesTimer: ReturnType<typeof setTimeout> | undefined;
  let disposed = false;
  /** The latest read of the trades: an earlier one answering later is dropped. */
  let tradesRead = 0;
  async function showTrades(): Promise<void> {
    tradesStale = false;
    const read = ++tradesRead;
    try {
      const { trades, total } = await readTrades();
      if (disposed || read !== tradesRead) return;
      counts.trades.textContent = ` (${formatQuantity(total)})`;
      tradesEmpty.textContent = 'No trades yet: an allotment of a bid of yours is a trade.';
      tradesEmpty.hidden = trades.length > 0;
      tradesNote.hidden = total <= trades.length;
      tradesNote.textContent = `You have ${formatQuantity(total)} trades: the newest ${formatQuantity(MOST_TRADES)} are shown.`;
      tradesWrap.replaceChildren(
        trades.length === 0
          ? ''
          : table(
              'Your trades (allotments), newest first',
              TRADE_COLUMNS,
              trades.map((trade) =>
                row(
                  TRADE_COLUMNS,
                  [
                    instantElement(trade.trade_timestamp),
                    orderIdCell(trade.order_id, trade.order_identifier),
                    [`${trade.symbol} ${trade.series} `, h('span', { class: 'exchange' }, trade.exchange)],
                    formatQuantity(trade.traded_quantity),
                    formatPrice(trade.traded_price),
                    formatRupees(tradeAmount(trade)),
                  ],
                  { 'data-trade-id': trade.trade_id },
                ),
              ),
              'compact',
            ),
      );
    } catch (error) {
      if (disposed || read !== tradesRead) return;
      tradesStale = true;
      tradesEmpty.hidden = false;
      tradesEmpty.textContent = `Your trades could not be read: ${error instanceof ApiError ? error.describe() : 'no answer'}`;
    }
  }

  // The tabs (the ARIA tabs pattern: arrows move between them, each shows its panel).
  const counts = { open: h('span', {}), finished: h('span', {}), trades: h('span', {}) };
  const tabs = {} as Record<TabName, HTMLButtonElement>;
  const panels = {} as Record<TabName, HTMLElement>;
  let shown: TabName = 'open';
  function showTab(name: TabName, moveFocus: boolean): void {
    shown = name;
    for (const { name: other } of TABS) {
      tabs[other].setAttribute('aria-selected', String(other === name));
      tabs[other].tabIndex = other === name ? 0 : -1;
      panels[other].hidden = other !== name;
    }
    if (moveFocus) tabs[name].focus();
    if (name === 'trades' && tradesStale) void showTrades();
  }
  for (const { name, label } of TABS) {
    tabs[name] = h(
      'button',
      {
        type: 'button',
        role: 'tab',
        id: `orders-tab-${name}`,
        'aria-controls': `orders-panel-${name}`,
        onClick: () => showTab(name, false),
      },
      label,
      counts[name],
    );
  }
  const tablist = h(
    'div',
    {
      role: 'tablist',
      'aria-label': 'Your orders and trades',
      class: 'tabs',
      onKeydown: (event: Event) => {
        const key = (event as KeyboardEvent).key;
        const at = TABS.findIndex((tab) => tab.name === shown);
        const to =
          key === 'ArrowRight'
            ? at + 1
            : key === 'ArrowLeft'
              ? at - 1
              : key === 'Home'
                ? 0
                : key === 'End'
                  ? TABS.length - 1
                  : null;
        if (to === null) return;
        event.preventDefault();
        showTab(TABS[(to + TABS.length) % TABS.length]!.name, true);
      },
    },
    TABS.map(({ name }) => tabs[name]),
  );
  const ordersTable = (caption: string, body: HTMLTableSectionElement) => {
    const element = table(caption, COLUMNS, [], 'compact orders-table');
    element.querySelector('tbody')!.replaceWith(body);
    return h('div', { class: 'table-wrap' }, element);
  };
  const panel = (name: TabName, ...content: Node[]) =>
    (panels[name] = h(
      'div',
      { role: 'tabpanel', id: `orders-panel-${name}`, 'aria-labelledby': `orders-tab-${name}`, tabindex: 0 },
      content,
    ));
  panel(
    'open',
    openEmpty,
    ordersTable('Your open orders (in flight or live), newest first; statuses change live', openBody),
  );
  panel(
    'finished',
    finishedEmpty,
    ordersTable('Your finished orders (executed, cancelled or rejected), newest first', finishedBody),
  );
  panel('trades', tradesEmpty, tradesNote, tradesWrap);
  const main = h('div', {}, tablist, panels.open, panels.finished, panels.trades);
  showTab('open', false);

  renderAll();
  const unsubscribe = context.orders.subscribe((order, previous) => {
    update(order);
    const latest = context.orders.recentChanges()[0];
    if (latest?.order === order) {
      notices.prepend(notice(latest));
      while (notices.childElementCount > NOTICES_SHOWN) notices.lastElementChild?.remove();
    }
    if (order.traded_quantity !== (previous?.traded_quantity ?? 0)) {
      tradesStale = true;
      clearTimeout(tradesTimer);
      // Read again if shown, or if its count is (once read, the tab counts the trades).
      if (shown === 'trades' || counts.trades.textContent !== '')
        tradesTimer = setTimeout(() => void showTrades(), 300);
    }
  });
  const unsubscribeRead = context.orders.onRead(() => renderAll());

  const element = h(
    'section',
    { 'aria-labelledby': 'view-title' },
    h('h2', { id: 'view-title', tabindex: -1 }, 'Orders'),
    note,
    notices,
    main,
    dialog.dialog,
  );
  return {
    element,
    dispose: () => {
      disposed = true;
      clearTimeout(tradesTimer);
      for (const timers of offerTimers.values()) for (const timer of timers) clearTimeout(timer);
      unsubscribe();
      unsubscribeRead();
    },
  };
}
