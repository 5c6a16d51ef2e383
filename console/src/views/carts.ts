/**
 * Order carts: the list, an editor (name and lines; a new cart or an existing one, updated with If-Match so
 * that a change made elsewhere meanwhile is not overwritten), and the execution, answered line by line.
 * The editor offers only what this OMS can place (OFS bids, at a price or at the cut-off price). Lines are
 * numbered from 1, "Line 2", in the editor, its errors and the execution's results alike (the API names
 * it orders[1]: its words stay out of the page). A fault the server names is said once, beside the field
 * of the line it names; the code and the request go in a details line for support.
 */
import { api, ApiError, entry, faultsOf, inWords, type Fault } from '../api.js';
import type { ConsoleContext, View } from '../context.js';
import {
  clearFieldError,
  field,
  h,
  row,
  select,
  showFaultsBeside,
  statusLine,
  sayRefusal,
  supportLine,
  table,
  uniqueId,
} from '../dom.js';
import { formatInstant, formatPrice, issueKey, issueName } from '../format.js';
import { loadIssues } from '../ofs-issues.js';
import type { Cart, CartChange, CartLine, CartLineResult, NewCart, OfsIssue } from '../types.js';

/** The one product this OMS routes; a stored line of another is shown as such, not offered. */
const PRODUCTS: [CartLine['ProductType'], string][] = [['OFS', 'OFS']];
/** An OFS bid is at a price (RL) or at the cut-off price (RL-MKT). */
const ORDER_TYPES: [CartLine['OrderType'], string][] = [
  ['RL', 'RL (price)'],
  ['RL-MKT', 'RL-MKT (cut-off)'],
];
const EXCHANGES: [string, string][] = [
  ['NSE', 'NSE'],
  ['BSE', 'BSE'],
];
const MARKET_ORDER_TYPES: readonly string[] = ['RL-MKT', 'SL-MKT'];
const STOP_LOSS_ORDER_TYPES: readonly string[] = ['SL', 'SL-MKT'];
/** A line as people number it, from 1 (the API's `orders[i]` counts from 0). */
const lineName = (index: number) => `Line ${index + 1}`;
/** A blank name shows as no name at all; the server refuses it too (e-411). */
const BLANK_NAME = 'Cart name must hold a character other than white space: a name of spaces only shows as no name';
const LIST_COLUMNS = ['Name', 'Lines', 'Executed', 'Last change', 'Actions'];
const RESULT_COLUMNS = ['Line', 'Instrument', 'Result'];

/** The cart being edited: a new one (no id) or a stored one with the ETag and execution count it was read with. */
interface Draft {
  id: string | null;
  /** The name as stored, for the editor's title. */
  storedName: string;
  etag: string | null;
  executedNoTime: number;
  name: string;
  lines: CartLine[];
  /** The name and lines as stored (`snapshot`), to tell unsaved edits apart; null before the first save. */
  saved: string | null;
}

const snapshot = (draft: Pick<Draft, 'name' | 'lines'>) => JSON.stringify([draft.name, draft.lines]);

/** A line for an OFS issue: its instrument as the scrip master names it, at the issue's retail cut-off. */
function lineFor(issue: OfsIssue): CartLine {
  return {
    scripDetail: {
      symbol: issue.symbol,
      _Series: issue.series,
      _InstrumentName: 'EQUITIES',
      _ExchangeName: issue.exchange.replace(/_EQ$/, ''),
      MarketLot: 1,
      PriceTick: Number(issue.tick_size),
      scripToken: issue.scrip_token,
    },
    TransactionType: 'BUY',
    OrderType: 'RL',
    Quantity: 1,
    Price: formatPrice(issue.retail_cutoff_price ?? issue.floor_price),
    ProductType: 'OFS',
    validity: '',
  };
}

/** The offered options, and a stored value the editor does not offer, marked as such (never changed unseen). */
function choices(offered: [string, string][], stored: string | undefined, note: string): [string, string][] {
  if (stored === undefined || offered.some(([value]) => value === stored)) return offered;
  return [...offered, [stored, `${stored} (${note})`]];
}

/** What a line bids, in words: "12 at 101.50", "12 at the cut-off price". */
function lineTerms(line: CartLine): string {
  if (line.OrderType === 'RL-MKT') return `${line.Quantity} at the cut-off price`;
  if (line.OrderType === 'SL-MKT') return `${line.Quantity} at the market price`;
  return `${line.Quantity} at ${line.Price}`;
}

/** Where the error messages of a field or a line are shown, beside it; hidden while there are none. */
type LineControls = Partial<Record<string, HTMLInputElement | HTMLSelectElement>>;

/** "see Line 2 and Line 3": where the faults beside the lines are. */
function seeLines(faults: Fault[]): string {
  const lines = [...new Set(faults.flatMap((f) => (f.line === null ? [] : [lineName(f.line)])))];
  return `see the fault${faults.length === 1 ? '' : 's'} beside ${lines.join(' and ')}.`;
}

interface ErrorsBeside {
  element: HTMLParagraphElement;
  show(messages: string[]): void;
}

function errorsBeside(id: string): ErrorsBeside {
  const element = h('p', { id, class: 'hint result-error', hidden: true });
  const show = (messages: string[]) => {
    element.replaceChildren(...messages.flatMap((message, i) => (i === 0 ? [message] : [h('br'), message])));
    element.hidden = messages.length === 0;
  };
  return { element, show };
}

export function cartsView(context: ConsoleContext): View {
  let issues: OfsIssue[] = [];
  let draft: Draft | null = null;
  const listArea = h('div', {}, h('p', {}, 'Loading your carts...'));
  const editorArea = h('div');
  const resultArea = h('div', { 'aria-live': 'polite' });
  const listStatus = statusLine();
  const showListError = (error: unknown) => {
    if (error instanceof ApiError) sayRefusal(listStatus, 'The carts could not be read', error);
    else listStatus.textContent = 'The carts could not be read';
  };

  /** Every cart, page by page (100 a page, the API's most; a user keeps MAX_CARTS_PER_USER, 100 by default). */
  async function readCarts(): Promise<Cart[]> {
    const carts: Cart[] = [];
    for (let page = 1; page <= 100; page += 1) {
      const answer = await api((client) => client.listCarts({ offset: page, limit: 100 }));
      carts.push(...answer.data);
      const total = answer.totalCount;
      if (answer.data.length < 100 || carts.length >= total) break;
    }
    return carts;
  }

  async function refreshList(): Promise<void> {
    const carts = await readCarts();
    if (carts.length === 0) {
      listArea.replaceChildren(h('p', {}, 'No carts yet.'));
      return;
    }
    listArea.replaceChildren(
      table(
        'Your order carts, newest first',
        LIST_COLUMNS,
        carts.map((cart) =>
          row(LIST_COLUMNS, [
            cart.ordercartName,
            String(cart.orders.length),
            cart.executedNoTime === 1 ? 'once' : `${cart.executedNoTime} times`,
            formatInstant(cart.modifiedAt),
            h(
              'button',
              {
                type: 'button',
                'aria-label': `Open cart ${cart.ordercartName}`,
                onClick: () => void openCart(cart.ordercartId).then(() => resultArea.replaceChildren(), showListError),
              },
              'Open',
            ),
          ]),
        ),
      ),
    );
  }

  async function openCart(id: string, message = ''): Promise<void> {
    const answer = await api((client) => client.cartDetails(id));
    const cart = answer.data;
    draft = {
      id,
      storedName: cart.ordercartName,
      etag: answer.etag === '' ? null : answer.etag,
      executedNoTime: cart.executedNoTime,
      name: cart.ordercartName,
      lines: cart.orders,
      saved: null,
    };
    draft.saved = snapshot(draft);
    renderEditor(message);
  }

  /** The fields of one line, and where the faults the server names `orders[index]...` are shown. */
  function lineFields(
    line: CartLine,
    index: number,
    lines: CartLine[],
    faults: ErrorsBeside,
    controls: LineControls,
  ): HTMLFieldSetElement {
    const input = (
      name: string,
      value: string | number,
      attributes: Record<string, string | number | boolean> = {},
    ) => {
      const element = h('input', { name, value, ...attributes });
      return element;
    };
    const cannotPlace = 'this OMS cannot place it';
    const exchange = select(
      'exchange',
      choices(EXCHANGES, line.scripDetail._ExchangeName, cannotPlace),
      line.scripDetail._ExchangeName,
    );
    const symbol = input('symbol', line.scripDetail.symbol, { required: true, maxlength: 50 });
    const series = input('series', line.scripDetail._Series, { maxlength: 20 });
    const product = select('product', choices(PRODUCTS, line.ProductType, cannotPlace), line.ProductType);
    const orderType = select('order_type', choices(ORDER_TYPES, line.OrderType, cannotPlace), line.OrderType);
    const quantity = input('quantity', line.Quantity, {
      type: 'number',
      inputmode: 'numeric',
      min: 1,
      step: 1,
      required: true,
    });
    const isMarket = () => MARKET_ORDER_TYPES.includes(orderType.value);
    // A market (cut-off) line has no price of its own: the field shows 0, and the price typed comes back with RL.
    let typedPrice = isMarket() ? '' : line.Price;
    const price = input('price', isMarket() ? '0' : line.Price, {
      inputmode: 'decimal',
      required: true,
      disabled: isMarket(),
      pattern: '(0|[1-9][0-9]{0,9})(\\.[0-9]{1,4})?',
    });
    orderType.addEventListener('change', () => {
      if (isMarket()) {
        if (!price.disabled) typedPrice = price.value;
        price.value = '0';
        price.disabled = true;
      } else if (price.disabled) {
        price.value = typedPrice;
        price.disabled = false;
      }
    });
    // Every edit writes through to the line, keeping the fields this form does not show as they were. An OFS
    // line has validity "" and, like any RL or RL-MKT line, no trigger price.
    const write = () => {
      const { TriggerPrice, ...rest } = line;
      const ofs = product.value === 'OFS';
      lines[index] = {
        ...rest,
        scripDetail: {
          ...line.scripDetail,
          _ExchangeName: exchange.value,
          symbol: symbol.value.trim(),
          _Series: series.value.trim(),
        },
        ProductType: product.value as CartLine['ProductType'],
        OrderType: orderType.value as CartLine['OrderType'],
        Quantity: quantity.valueAsNumber,
        Price: isMarket() ? '0' : price.value.trim(),
        ...(ofs ? { validity: '' } : line.validity !== undefined && { validity: line.validity }),
        ...(TriggerPrice !== undefined && STOP_LOSS_ORDER_TYPES.includes(orderType.value) && { TriggerPrice }),
      };
    };
    for (const control of [exchange, symbol, series, product, orderType, quantity, price]) {
      control.addEventListener('input', write);
      control.addEventListener('change', write);
    }
    // The controls a fault of the line is said beside, by the key its field gives (api.ts Fault.key).
    Object.assign(controls, { exchange, symbol, series, product, order_type: orderType, quantity, price });
    const remove = h(
      'button',
      { type: 'button', class: 'secondary', 'aria-label': `Remove ${lineName(index)}`, disabled: lines.length === 1 },
      'Remove',
    );
    remove.addEventListener('click', () => {
      lines.splice(index, 1);
      renderEditor();
    });
    const placeable = line.ProductType === 'OFS' && !STOP_LOSS_ORDER_TYPES.includes(line.OrderType);
    return h(
      'fieldset',
      { class: 'cart-line', 'data-line': index, 'aria-describedby': faults.element.id },
      h('legend', {}, lineName(index)),
      placeable
        ? null
        : h(
            'p',
            { class: 'hint' },
            `Saved as ${line.ProductType} ${line.OrderType}: this OMS places OFS bids (RL or RL-MKT) only, so this line would not be placed. Choose OFS and RL or RL-MKT, or remove it.`,
          ),
      h(
        'div',
        { class: 'field-row' },
        field('Exchange', exchange),
        field('Symbol', symbol),
        field('Series', series),
        field('Product', product),
        field('Order type', orderType),
        field('Quantity', quantity),
        field('Price (Rs)', price),
      ),
      faults.element,
      remove,
    );
  }

  /** Draws the editor of the draft; `message` goes in its status line (the outcome of the last action). */
  function renderEditor(message = ''): void {
    if (draft === null) {
      editorArea.replaceChildren();
      return;
    }
    const current = draft;
    // Not `required`: an empty name is refused here like a blank one, with the message beside the field.
    const name = h('input', { name: 'ordercartName', 'aria-required': 'true', maxlength: 100, value: current.name });
    const nameField = field('Cart name', name);
    const nameErrors = errorsBeside(uniqueId('cart-name-errors'));
    nameField.append(nameErrors.element);
    const showNameErrors = (messages: string[]) => {
      nameErrors.show(messages);
      if (messages.length === 0) {
        name.removeAttribute('aria-invalid');
        name.removeAttribute('aria-describedby');
      } else {
        name.setAttribute('aria-invalid', 'true');
        name.setAttribute('aria-describedby', nameErrors.element.id);
      }
    };
    name.addEventListener('input', () => {
      current.name = name.value;
      if (!nameErrors.element.hidden && name.value.trim() !== '') showNameErrors([]);
    });
    const lineErrors = current.lines.map((_, index) => errorsBeside(uniqueId(`cart-line-${index}-errors`)));
    const lineControls = current.lines.map((): LineControls => ({}));
    /**
     * The faults of an answer beside what they name, once: the name, a line's field (its price, its
     * quantity...), or the line itself when no field of the form is named.
     */
    const showFaults = (faults: Fault[]) => {
      showNameErrors(faults.filter((f) => f.key === 'ordercart_name').map((f) => f.text));
      lineErrors.forEach((element, index) => {
        for (const control of Object.values(lineControls[index]!)) if (control) clearFieldError(control);
        const rest = showFaultsBeside(
          faults.filter((f) => f.line === index),
          lineControls[index]!,
        );
        element.show([...new Set(rest.map((f) => f.text))]);
      });
    };
    const issueChoice = select(
      'issue',
      issues.map((issue) => [issueKey(issue), issueName(issue)]),
    );
    const addLine = h('button', { type: 'button', class: 'secondary', disabled: issues.length === 0 }, 'Add a line');
    addLine.addEventListener('click', () => {
      const issue = issues.find((i) => issueKey(i) === issueChoice.value);
      if (issue === undefined) return;
      current.lines.push(lineFor(issue));
      renderEditor();
      editorArea.querySelector<HTMLElement>(`fieldset[data-line="${current.lines.length - 1}"] input`)?.focus();
    });
    const status = statusLine();
    status.textContent = message;
    const save = h('button', { type: 'submit' }, current.id === null ? 'Create cart' : 'Save cart');
    const execute = h('button', { type: 'button', disabled: current.id === null }, 'Execute cart');
    const remove = h('button', { type: 'button', class: 'danger', disabled: current.id === null }, 'Delete cart');

    const form = h(
      'form',
      {
        class: 'card cart-editor',
        'aria-labelledby': 'cart-editor-title',
        onSubmit: (event: Event) => {
          event.preventDefault();
          if (current.name.trim() === '') {
            showFaults([]);
            showNameErrors([BLANK_NAME]);
            status.textContent = `Not saved: ${BLANK_NAME}`;
            name.focus();
            return;
          }
          showFaults([]);
          save.disabled = true;
          status.textContent = 'Saving...';
          void saveDraft(current)
            .then((outcome) => {
              renderEditor(outcome);
              editorArea.querySelector<HTMLElement>('button[type="submit"]')?.focus();
              return refreshList();
            })
            .catch((error: unknown) => {
              if (error instanceof ApiError) {
                const faults = error.faults();
                showFaults(faults);
                // A fault of a line is said beside it; the status line says where.
                const ofLines = faults.filter((f) => f.line !== null && f.line < current.lines.length);
                sayRefusal(status, 'Not saved', error, ofLines.length > 0 ? seeLines(ofLines) : undefined);
              } else status.textContent = 'The cart could not be saved';
              save.disabled = false;
            });
        },
      },
      h(
        'h3',
        { id: 'cart-editor-title', tabindex: -1 },
        current.id === null ? 'New cart' : `Cart ${current.storedName}`,
      ),
      nameField,
      current.lines.map((line, index) =>
        lineFields(line, index, current.lines, lineErrors[index]!, lineControls[index]!),
      ),
      h('div', { class: 'field-row' }, field('Issue for a new line', issueChoice), addLine),
      h('div', { class: 'actions' }, save, execute, remove),
      status,
    );
    execute.addEventListener('click', () => {
      // The server executes the stored cart: executing with edits not saved would place other orders than
      // the ones on screen, and the reload after it would drop the edits.
      if (current.saved !== snapshot(current)) {
        status.textContent = 'Save the cart first: executing places the saved lines, not the changes on screen.';
        return;
      }
      execute.disabled = true;
      status.textContent = 'Executing...';
      void executeCart(current)
        .then((outcome) => openCart(current.id!, outcome))
        .catch((error: unknown) => {
          if (!(error instanceof ApiError)) status.textContent = 'The cart could not be executed';
          // Nothing placed: each line's faults are in its result below, said there once.
          else if (error.code === 'e-412')
            sayRefusal(status, 'Not executed', error, `${inWords(error.message)} See each line's result below.`);
          else sayRefusal(status, 'Not executed', error);
        })
        .finally(() => {
          execute.disabled = false;
          void refreshList().catch(() => {});
        });
    });
    remove.addEventListener('click', () => {
      remove.disabled = true;
      void api((client) => client.deleteCart(current.id!))
        .then(() => {
          draft = null;
          resultArea.replaceChildren();
          renderEditor();
          context.announce(`Cart ${current.name} deleted`);
          return refreshList();
        })
        .catch((error: unknown) => {
          if (error instanceof ApiError) sayRefusal(status, 'Not deleted', error);
          else status.textContent = 'The cart could not be deleted';
          remove.disabled = false;
        });
    });
    editorArea.replaceChildren(form);
  }

  async function saveDraft(current: Draft): Promise<string> {
    const { userId } = context.session;
    const body = {
      ordercartName: current.name,
      orders: JSON.stringify(current.lines),
      version: '1',
      createdBy: userId,
      modifiedBy: userId,
      executedNoTime: current.executedNoTime,
    };
    if (current.id === null) {
      const answer = await entry(['createCart', body], (client, key) => client.createCart(body as NewCart, key));
      const id = answer.data.ordercartId;
      current.id = id;
      current.storedName = current.name;
      const details = await api((client) => client.cartDetails(id));
      current.etag = details.etag === '' ? null : details.etag;
      current.saved = snapshot(current);
      return `Cart created: ${current.name}`;
    }
    // The answer's ETag is the one this update made: a GET after it could already carry someone else's.
    const id = current.id;
    const ifMatch = current.etag === null ? {} : { ifMatch: current.etag };
    const updated = await api((client) => client.updateCart({ ...body, ordercartId: id } as CartChange, ifMatch));
    current.etag = updated.etag === '' ? null : updated.etag;
    current.storedName = current.name;
    current.saved = snapshot(current);
    return `Cart saved: ${current.name}`;
  }

  function showResults(lines: CartLine[], results: CartLineResult[]): void {
    const rows = results.map((result) => {
      const line = lines[result.index];
      const instrument =
        line === undefined
          ? '-'
          : `${line.scripDetail.symbol} ${line.scripDetail._Series} ${line.ProductType} ${lineTerms(line)}`;
      // The row names its line: each fault is said once, in words, without its path; the code for support.
      const outcome =
        result.status === 'success'
          ? h('span', { class: 'result-ok' }, 'Placed: order ', h('code', {}, result.orderId))
          : h(
              'span',
              { class: 'result-error' },
              `Not placed: ${[...new Set(faultsOf(result.errors, result.message).map((f) => f.text))].join(' ')}`,
              supportLine(result.code),
            );
      return row(RESULT_COLUMNS, [lineName(result.index), instrument, outcome], {
        'data-line': result.index,
        'data-result': result.status,
      });
    });
    resultArea.replaceChildren(
      h('div', { class: 'table-wrap' }, table('The execution, line by line', RESULT_COLUMNS, rows, 'results')),
    );
  }

  async function executeCart(current: Draft): Promise<string> {
    const lines = [...current.lines];
    try {
      const id = current.id!;
      const answer = await entry(['executeCart', id], (client, key) => client.executeCart(id, key));
      showResults(lines, answer.data);
      return inWords(answer.message);
    } catch (error) {
      // Nothing placed (e-412): its errors name each line's faults as orders[i].Field.
      if (error instanceof ApiError && error.code === 'e-412') {
        const results: CartLineResult[] = lines.map((_, index) => {
          const faults = error.errors.filter((e) => e.field.startsWith(`orders[${index}]`));
          return { index, status: 'error', code: error.code, message: 'not placed', errors: faults };
        });
        showResults(lines, results);
      }
      throw error;
    }
  }

  // The issues a new cart's first line is made from: a click before they are read waits for them (a new cart
  // made without them had no line, and "Add a line" stayed disabled).
  const issuesRead = loadIssues().then((loaded) => (issues = loaded));
  const newCart = h('button', { type: 'button' }, 'New cart');
  newCart.addEventListener('click', () => void issuesRead.catch(() => undefined).then(openNewCart));
  function openNewCart(): void {
    draft = {
      id: null,
      storedName: '',
      etag: null,
      executedNoTime: 0,
      name: 'My cart',
      lines: issues.length > 0 ? [lineFor(issues[0]!)] : [],
      saved: null,
    };
    resultArea.replaceChildren();
    renderEditor();
    editorArea.querySelector<HTMLInputElement>('input[name="ordercartName"]')?.focus();
  }

  void Promise.all([issuesRead, refreshList()]).catch(showListError);

  const element = h(
    'section',
    { 'aria-labelledby': 'view-title' },
    h('div', { class: 'view-head' }, h('h2', { id: 'view-title', tabindex: -1 }, 'Order carts'), newCart),
    listStatus,
    h('div', { class: 'table-wrap' }, listArea),
    editorArea,
    resultArea,
  );
  return { element };
}
