/**
 * The order book, kept current by the order events: each row's status changes in place while the page is
 * open. Live bids can be modified or cancelled in a dialog, and a live non-retail bid in an offer carried
 * forward to T+1; any order's history can be read.
 */
import { ApiError, call, get } from '../api.js';
import type { ConsoleContext, View } from '../context.js';
import { field, h, row, select, statusLine, table } from '../dom.js';
import { formatInstant, formatPrice, formatQuantity } from '../format.js';
import { NON_RETAIL_BID_CATEGORIES } from '../ofs-offers.js';
import { newerFirst } from '../orders-store.js';
import type { Order, OrderHistoryEntry } from '../types.js';

const COLUMNS = ['Order', 'Instrument', 'Quantity', 'Price', 'Status', 'Last change', 'Actions'];
const FINISHED = new Set(['OMSREJECT', 'ORDERERROR', 'CANCELLED', 'EXECUTED']);

const isLive = (order: Order) => !FINISHED.has(order.status);
const priceText = (order: Order) => (order.order_type === 'RL-MKT' ? 'cut-off' : formatPrice(order.order_price));
const describeOrder = (order: Order) => `${order.symbol} ${formatQuantity(order.total_quantity)} at ${priceText(order)}`;
/** A non-retail bid in an offer: the one kind of bid carried forward to T+1 (the server says when it may be). */
const isOfferNonRetailBid = (order: Order) => order.offer_id !== '' && NON_RETAIL_BID_CATEGORIES.has(order.bid_category);
const orderPath = (order: Order) => `/transactional/v1/orders/regular/${encodeURIComponent(order.exchange)}/${encodeURIComponent(order.order_id)}`;

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

export function ordersView(context: ConsoleContext): View {
  const dialog = orderDialog();
  const rows = new Map<string, HTMLTableRowElement>();
  const tbody = h('tbody');
  const empty = h('p');
  const note = h('p', { class: 'book-note' });

  function modifyForm(order: Order): HTMLFormElement {
    const orderType = select(
      'order_type',
      [
        ['RL', 'Limit (RL)'],
        ['RL-MKT', 'Cut-off (RL-MKT)'],
      ],
      order.order_type,
    );
    const quantity = h('input', { name: 'quantity', type: 'number', inputmode: 'numeric', min: 1, step: 1, required: true, value: order.total_quantity });
    const price = h('input', {
      name: 'price',
      type: 'number',
      inputmode: 'decimal',
      min: 0,
      step: 'any',
      required: true,
      value: formatPrice(order.order_price),
    });
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
          call('PUT', orderPath(order), { body, orderEntry: true })
            .then(() => {
              context.announce(`Modification of order ${order.order_id} sent to the OMS`);
              dialog.close();
            })
            .catch((error: unknown) => {
              status.textContent = error instanceof ApiError ? `Not modified: ${error.describe()}` : 'The modification could not be sent';
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
      call('DELETE', orderPath(order), { orderEntry: true })
        .then(() => {
          context.announce(`Cancellation of order ${order.order_id} sent to the OMS`);
          dialog.close();
        })
        .catch((error: unknown) => {
          status.textContent = error instanceof ApiError ? `Not cancelled: ${error.describe()}` : 'The cancellation could not be sent';
          confirm.disabled = false;
        });
    });
    return h('div', {}, h('p', {}, `Cancel the bid ${describeOrder(order)} (order ${order.order_id})?`), confirm, status);
  }

  /** Refused outside T+1, or with nothing unallotted: the server's message says which, as it does for a cancellation. */
  function carryForwardForm(order: Order): HTMLElement {
    const status = statusLine();
    const confirm = h('button', { type: 'button' }, 'Carry forward');
    confirm.addEventListener('click', () => {
      confirm.disabled = true;
      call('POST', `${orderPath(order)}/carry_forward`, { orderEntry: true })
        .then(() => {
          context.announce(`Carry-forward of order ${order.order_id} sent to the OMS`);
          dialog.close();
        })
        .catch((error: unknown) => {
          status.textContent = error instanceof ApiError ? `Not carried forward: ${error.describe()}` : 'The carry-forward could not be sent';
          confirm.disabled = false;
        });
    });
    const unallotted = order.total_quantity - order.traded_quantity;
    return h(
      'div',
      {},
      h(
        'p',
        {},
        `Carry the ${formatQuantity(unallotted)} unallotted shares of the bid ${describeOrder(order)} (order ${order.order_id}) forward to the T+1 allocation?`,
      ),
      h(
        'p',
        { class: 'hint' },
        'During T+1 only, once the T allocation has run. A bid not carried forward is cancelled at the close of T+1; once carried forward it may be revised to a price at or above the T-day cut-off.',
      ),
      confirm,
      status,
    );
  }

  async function history(order: Order): Promise<HTMLElement> {
    const entries = await get<OrderHistoryEntry[]>(`/transactional/v1/orders/${encodeURIComponent(order.order_id)}`);
    return h(
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
    );
  }

  function actions(order: Order): HTMLElement {
    const current = () => context.orders.find(order.order_id) ?? order;
    const live = isLive(order);
    return h(
      'div',
      { class: 'actions' },
      h(
        'button',
        {
          type: 'button',
          'data-action': 'modify',
          disabled: !live,
          'aria-label': `Modify order ${order.order_id}`,
          onClick: () => dialog.open(`Modify ${describeOrder(current())}`, modifyForm(current())),
        },
        'Modify',
      ),
      h(
        'button',
        {
          type: 'button',
          'data-action': 'cancel',
          class: 'danger',
          disabled: !live,
          'aria-label': `Cancel order ${order.order_id}`,
          onClick: () => dialog.open('Cancel the bid', cancelForm(current())),
        },
        'Cancel',
      ),
      isOfferNonRetailBid(order)
        ? h(
            'button',
            {
              type: 'button',
              'data-action': 'carry-forward',
              disabled: !live || order.carried_forward,
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
          'aria-label': `History of order ${order.order_id}`,
          onClick: () =>
            void history(current())
              .then((list) => dialog.open(`History of order ${order.order_id}`, list))
              .catch((error: unknown) => context.announce(error instanceof ApiError ? error.describe() : 'The history could not be read')),
        },
        'History',
      ),
    );
  }

  function renderRow(order: Order): HTMLTableRowElement {
    const tag = order.order_identifier === '' ? null : h('small', {}, ` (${order.order_identifier})`);
    return row(
      COLUMNS,
      [
        [h('code', {}, order.order_id), tag],
        [
          `${order.symbol} ${order.series} ${order.exchange}`,
          order.offer_id === ''
            ? null
            : h('small', { class: 'offer-bid' }, ` offer ${order.offer_id}, ${order.bid_category}${order.carried_forward ? ', carried forward' : ''}`),
        ],
        order.traded_quantity > 0
          ? `${formatQuantity(order.total_quantity)} (allotted ${formatQuantity(order.traded_quantity)} at ${formatPrice(order.traded_price)})`
          : formatQuantity(order.total_quantity),
        priceText(order),
        h(
          'span',
          { class: `order-status status-${order.status.toLowerCase()}` },
          order.status,
          order.error_reason === '' ? '' : h('small', {}, ` ${order.error_reason}`),
        ),
        formatInstant(order.last_modified),
        actions(order),
      ],
      { 'data-order-id': order.order_id, 'data-status': order.status },
    );
  }

  /** The order as its row shows it, to tell a changed order from one already drawn. */
  const drawn = new Map<string, Order>();

  /**
   * The row of an order, drawn afresh if the order changed. An existing row keeps its element and its
   * buttons (only the cells are replaced), so that the keyboard focus stays put.
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
    const focused = existing.contains(document.activeElement) ? (document.activeElement as HTMLElement).dataset.action : undefined;
    existing.replaceChildren(...fresh.childNodes);
    existing.dataset.status = order.status;
    if (focused !== undefined) existing.querySelector<HTMLElement>(`[data-action="${focused}"]:not([disabled])`)?.focus();
    return existing;
  }

  /** One order changed: its row is redrawn, or a new order's row goes where the book's order puts it. */
  function update(order: Order): void {
    const isNew = !rows.has(order.order_id);
    const tr = draw(order);
    if (isNew) {
      const next = [...tbody.rows].find((other) => newerFirst(order.order_id, other.dataset.orderId ?? '') < 0);
      if (next === undefined) tbody.append(tr);
      else next.before(tr);
    }
    showBookRead();
  }

  /** Every known order, in the book's order (once the book has been read). */
  function renderAll(): void {
    const focused = tbody.contains(document.activeElement) ? document.activeElement : null;
    tbody.replaceChildren(...context.orders.list().map(draw));
    if (focused instanceof HTMLElement && focused.isConnected && focused !== document.activeElement) focused.focus();
    showBookRead();
  }

  /** Says what the table holds while the book is read, if it could not be read, or if it was cut short. */
  function showBookRead(): void {
    const read = context.orders.read;
    empty.textContent = read.state === 'reading' ? 'Reading your orders...' : 'No orders yet: place a bid from OFS issues.';
    empty.hidden = rows.size > 0;
    note.hidden = read.state !== 'capped' && read.state !== 'failed';
    if (read.state === 'capped') {
      note.textContent = `Your ${formatQuantity(read.total)} orders are more than the console reads: the newest ${formatQuantity(read.read)} (and any placed since) are shown, older ones are not.`;
    } else if (read.state === 'failed') {
      note.textContent = `Your order book could not be read in full (${read.message}): the orders below may not be all of them. Log in again to read it again.`;
    }
  }

  const orderTable = table('Your orders, newest first; statuses change live', COLUMNS, []);
  orderTable.querySelector('tbody')!.replaceWith(tbody);
  renderAll();
  const unsubscribe = context.orders.subscribe((order) => update(order));
  const unsubscribeRead = context.orders.onRead(() => renderAll());

  const element = h(
    'section',
    { 'aria-labelledby': 'view-title' },
    h('h2', { id: 'view-title', tabindex: -1 }, 'Orders'),
    empty,
    note,
    h('div', { class: 'table-wrap' }, orderTable),
    dialog.dialog,
  );
  return {
    element,
    dispose: () => {
      unsubscribe();
      unsubscribeRead();
    },
  };
}
