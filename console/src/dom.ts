/**
 * Building the page: elements are made with these two functions and filled with textContent only, never
 * innerHTML, so no value from the server is ever parsed as markup.
 */
import type { ApiError, Fault } from './api.js';
import { instantParts, parseInstant } from './format.js';

type Child = Node | string | number | null | undefined | false;
type AttributeValue = string | number | boolean | null | undefined | ((event: Event) => void);
export type Attributes = Record<string, AttributeValue>;

function apply(element: Element, attributes: Attributes, children: (Child | Child[])[]): void {
  for (const [name, value] of Object.entries(attributes)) {
    if (typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
}

/** An HTML element: `h('button', { type: 'button', onClick: save }, 'Save')`. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  apply(element, attributes, children);
  return element;
}

/** An SVG element. */
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): SVGElementTagNameMap[K] {
  const element = document.createElementNS('http://www.w3.org/2000/svg', tag);
  apply(element, attributes, children);
  return element;
}

let nextId = 0;
/** A page-unique id, to tie a label, a description or a caption to its element. */
export function uniqueId(prefix: string): string {
  nextId += 1;
  return `${prefix}-${nextId}`;
}

/** A labelled form field: the label above its control, and an optional hint tied by aria-describedby. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement, hint?: string): HTMLDivElement {
  control.id ||= uniqueId('field');
  const hintElement = hint === undefined ? null : h('small', { id: `${control.id}-hint`, class: 'hint' }, hint);
  if (hintElement) control.setAttribute('aria-describedby', hintElement.id);
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hintElement);
}

/** A select with its options (`[value, text]`), the `selected` one chosen. */
export function select(name: string, options: [string, string][], selected?: string): HTMLSelectElement {
  return h(
    'select',
    { name },
    options.map(([value, text]) => h('option', { value, selected: value === selected }, text)),
  );
}

/** A table whose cells stack under their column names at phone width (the names come from data-label). */
export function table(
  caption: string,
  columns: string[],
  rows: HTMLTableRowElement[],
  className = '',
): HTMLTableElement {
  return h(
    'table',
    { class: `responsive ${className}`.trim() },
    h('caption', {}, caption),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        columns.map((column) => h('th', { scope: 'col' }, column)),
      ),
    ),
    h('tbody', {}, rows),
  );
}

/** A row of `table`: each cell carries its column's name for the stacked layout. */
export function row(columns: string[], cells: (Child | Child[])[], attributes: Attributes = {}): HTMLTableRowElement {
  return h(
    'tr',
    attributes,
    cells.map((cell, index) => h('td', { 'data-label': columns[index] ?? '' }, cell)),
  );
}

/** A status line that screen readers read when it changes (role=status is a polite live region). */
export function statusLine(): HTMLParagraphElement {
  return h('p', { role: 'status', class: 'status-line' });
}

/**
 * Shows `text` beside a field of `field()` as its error, once: tied to the control by aria-describedby and
 * marked aria-invalid, so that a screen reader reads it with the field.
 */
export function showFieldError(control: HTMLInputElement | HTMLSelectElement, text: string): void {
  clearFieldError(control);
  const error = h('small', { id: `${control.id}-error`, class: 'field-error', role: 'alert' }, text);
  control.after(error);
  control.setAttribute('aria-invalid', 'true');
  control.setAttribute(
    'aria-describedby',
    [control.getAttribute('aria-describedby'), error.id].filter(Boolean).join(' '),
  );
}

type Control = HTMLInputElement | HTMLSelectElement;

/**
 * Shows each fault of an answer beside the control its field names (`controls`, by the key Fault.key gives:
 * price, quantity, order_type...), once: two faults of one control are said together, a repeat is not said
 * again. Returns the faults no control was found for, for the caller to say elsewhere.
 */
export function showFaultsBeside(faults: Fault[], controls: Partial<Record<string, Control>>): Fault[] {
  const beside = new Map<Control, string[]>();
  const rest: Fault[] = [];
  for (const fault of faults) {
    const control = fault.key === null ? undefined : controls[fault.key];
    if (control === undefined) rest.push(fault);
    else {
      const texts = beside.get(control) ?? [];
      if (!texts.includes(fault.text)) texts.push(fault.text);
      beside.set(control, texts);
    }
  }
  for (const [control, texts] of beside) showFieldError(control, texts.join(' '));
  return rest;
}

/** The details a trader quotes to support, under a message and muted: "For support: e-380 · request 01a2...". */
export function supportLine(details: string): HTMLElement {
  return h('small', { class: 'support-line' }, `For support: ${details}`);
}

/** What a refused call says in a status line: its faults in words, and the details for support under them. */
export function sayRefusal(status: HTMLElement, what: string, error: ApiError, text = error.describe()): void {
  status.replaceChildren(`${what}: ${text}`, supportLine(error.support()));
}

/**
 * A form's refusal: each fault beside the control its field names (cleared first, so only this answer's
 * faults show), the rest in the status line, which then points at the fields if nothing is left for it.
 */
export function sayFormRefusal(
  status: HTMLElement,
  what: string,
  error: ApiError,
  controls: Partial<Record<string, HTMLInputElement | HTMLSelectElement>>,
): void {
  for (const control of Object.values(controls)) if (control !== undefined) clearFieldError(control);
  const faults = error.faults();
  const rest = showFaultsBeside(faults, controls);
  if (rest.length === faults.length) return sayRefusal(status, what, error);
  sayRefusal(
    status,
    what,
    error,
    rest.length === 0 ? 'see the field above.' : rest.map((fault) => fault.sentence).join(' '),
  );
}

/** Removes the error `showFieldError` put beside the field. */
export function clearFieldError(control: HTMLInputElement | HTMLSelectElement): void {
  const id = `${control.id}-error`;
  document.getElementById(id)?.remove();
  control.removeAttribute('aria-invalid');
  const rest = (control.getAttribute('aria-describedby') ?? '')
    .split(' ')
    .filter((ref) => ref !== '' && ref !== id)
    .join(' ');
  if (rest === '') control.removeAttribute('aria-describedby');
  else control.setAttribute('aria-describedby', rest);
}

/**
 * An instant from the API as a <time>: formatInstant's "17 Apr 2026, 12:46:34 IST", its date in a span that
 * a short line may leave out when it is today's (class instant-today).
 */
export function instantElement(text: string): HTMLElement | string {
  const parts = instantParts(text);
  if (parts === null) return text;
  return h(
    'time',
    { datetime: new Date(parseInstant(text)).toISOString(), class: parts.today ? 'instant-today' : null },
    h('span', { class: 'instant-date' }, `${parts.date}, `),
    parts.clock,
  );
}
