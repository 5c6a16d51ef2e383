/**
 * The console's shell: the login, then a header with the views (one per hash route: #/issues, #/offers, #/orders,
 * #/carts, #/funds and, for operators, #/book) and the state of the order-event stream that keeps the orders
 * current, and one polite live region that reads order status changes (and the stream's losses) aloud. Views
 * reached from another view's page rather than from the header (for operators, an offer's book at
 * #/offers/<offer_id>/book, linked from the offer's card) carry what they show in their hash.
 */
import '../app.css';
import { ApiError, forgetSession, logOut, onSessionEnded, type Session } from './api.js';
import type { ConsoleContext, View } from './context.js';
import { h } from './dom.js';
import { headerMenu } from './header-menu.js';
import { formatPrice, formatQuantity } from './format.js';
import { OrderEventStream } from './order-events.js';
import { OrderStore } from './orders-store.js';
import { streamStatus, type StreamStatus } from './stream-status.js';
import { cartsView } from './views/carts.js';
import { fundsView } from './views/funds.js';
import { issuesView } from './views/issues.js';
import { offersView } from './views/offers.js';
import { loginView } from './views/login.js';
import { offerBookView } from './views/offer-book.js';
import { operatorBookView } from './views/operator-book.js';
import { ordersView } from './views/orders.js';

interface Route {
  path: string;
  label: string;
  operatorOnly?: boolean;
  view(context: ConsoleContext): View;
}

const ROUTES: Route[] = [
  { path: '#/issues', label: 'OFS issues', view: issuesView },
  { path: '#/offers', label: 'OFS offers', view: offersView },
  { path: '#/orders', label: 'Orders', view: ordersView },
  { path: '#/carts', label: 'Carts', view: cartsView },
  { path: '#/funds', label: 'Funds and holdings', view: fundsView },
  { path: '#/book', label: 'OFS book', operatorOnly: true, view: () => operatorBookView() },
];

/** A view reached from a link on another view's page: its hash carries what it shows (one parameter). */
interface LinkedRoute {
  /** The hashes it answers; the first group is the parameter, URI-encoded. */
  pattern: RegExp;
  /** The view of the header it belongs under: its link is marked as the current section. */
  parent: string;
  label(parameter: string): string;
  operatorOnly?: boolean;
  view(context: ConsoleContext, parameter: string): View;
}

const LINKED_ROUTES: LinkedRoute[] = [
  {
    pattern: /^#\/offers\/([^/]+)\/book$/,
    parent: '#/offers',
    label: (offerId) => `Book of offer ${offerId}`,
    operatorOnly: true,
    view: (_context, offerId) => offerBookView(offerId),
  },
];

/** What a hash shows: the link of the header it is under (`exact` when it is that view itself), a title, the view. */
interface Target {
  navPath: string;
  exact: boolean;
  label: string;
  view(context: ConsoleContext): View;
}

const main = document.getElementById('main')!;
const nav = document.getElementById('nav')!;
const sessionArea = document.getElementById('session')!;
const streamArea = document.getElementById('stream')!;
const menu = headerMenu(
  document.querySelector<HTMLElement>('header.top')!,
  document.querySelector<HTMLButtonElement>('#menu-button')!,
  document.getElementById('menu')!,
);
const announcer = document.getElementById('announcer')!;

let stream: OrderEventStream | null = null;
let streamIndicator: StreamStatus | null = null;
let current: View | null = null;
let context: ConsoleContext | null = null;

function announce(text: string): void {
  // A new node each time: screen readers read additions to the region, and the last few stay for context.
  announcer.append(h('p', {}, text));
  while (announcer.childElementCount > 5) announcer.firstElementChild?.remove();
}

function routesFor(session: Session): Route[] {
  return ROUTES.filter((route) => !route.operatorOnly || session.operator);
}

const headerTarget = (route: Route): Target => ({
  navPath: route.path,
  exact: true,
  label: route.label,
  view: route.view,
});

/** The view a hash shows for this session; undefined when it is no route of the session's. */
function targetOf(hash: string, session: Session): Target | undefined {
  const route = routesFor(session).find((r) => r.path === hash);
  if (route !== undefined) return headerTarget(route);
  for (const linked of LINKED_ROUTES) {
    const match = linked.pattern.exec(hash);
    if (match === null || (linked.operatorOnly && !session.operator)) continue;
    let parameter: string;
    try {
      parameter = decodeURIComponent(match[1]!);
    } catch {
      return undefined;
    }
    return {
      navPath: linked.parent,
      exact: false,
      label: linked.label(parameter),
      view: (c) => linked.view(c, parameter),
    };
  }
  return undefined;
}

function show(target: Target, moveFocus: boolean): void {
  if (context === null) return;
  current?.dispose?.();
  current = target.view(context);
  main.replaceChildren(current.element);
  // The header's link of the view shown is the current page; under a view reached from it, the current section.
  for (const link of nav.querySelectorAll('a')) {
    if (link.getAttribute('href') === target.navPath) link.setAttribute('aria-current', target.exact ? 'page' : 'true');
    else link.removeAttribute('aria-current');
  }
  document.title = `${target.label} - ordergate console`;
  if (moveFocus) main.querySelector<HTMLElement>('h2')?.focus();
}

function route(moveFocus: boolean): void {
  if (context === null) return;
  const target = targetOf(location.hash, context.session);
  // Other fragments (the skip link's #main) are not routes: they leave the view as it is.
  if (target === undefined && current !== null && location.hash !== '') return;
  show(target ?? headerTarget(routesFor(context.session)[0]!), moveFocus);
}

function showLogin(notice: string | null): void {
  stream?.stop();
  stream = null;
  streamIndicator?.dispose();
  streamIndicator = null;
  current?.dispose?.();
  current = null;
  context = null;
  nav.hidden = true;
  nav.replaceChildren();
  sessionArea.replaceChildren();
  streamArea.replaceChildren();
  menu.enable(false);
  main.replaceChildren(loginView(notice, start));
  document.title = 'Log in - ordergate console';
}

function start(session: Session): void {
  const orders = new OrderStore();
  context = { session, orders, announce };
  orders.subscribe((order, previous) => {
    if (previous !== undefined && previous.status === order.status) return;
    const price = order.order_type === 'RL-MKT' ? 'cut-off' : formatPrice(order.order_price);
    announce(
      `Order ${order.order_id}, ${order.symbol} ${formatQuantity(order.total_quantity)} at ${price}: ${order.status}${order.error_reason === '' ? '' : `, ${order.error_reason}`}`,
    );
  });
  let loaded = false;
  const indicator = streamStatus(announce);
  streamIndicator = indicator;
  stream = new OrderEventStream(session.token, {
    onEvent: (event) => orders.apply(event),
    onOpen: () => {
      // The book is read once the stream is open, so that no change falls between the two.
      if (loaded) return;
      loaded = true;
      orders
        .load()
        .catch((error: unknown) =>
          announce(error instanceof ApiError ? error.describe() : 'The order book could not be read'),
        );
    },
    onSessionEnd: (error) => endSession(error),
    onState: (state) => indicator.show(state),
  });
  stream.start();

  nav.replaceChildren(
    h(
      'ul',
      {},
      routesFor(session).map((r) => h('li', {}, h('a', { href: r.path }, r.label))),
    ),
  );
  nav.hidden = false;
  const logout = h('button', { type: 'button', class: 'secondary' }, 'Log out');
  logout.addEventListener('click', () => {
    stream?.stop();
    void logOut().then(() => showLogin('You are logged out.'));
  });
  streamArea.replaceChildren(indicator.element);
  sessionArea.replaceChildren(h('span', {}, `${session.userId}${session.operator ? ' (operator)' : ''}`), logout);
  menu.enable(true);
  current = null;
  route(true);
}

function endSession(error: ApiError): void {
  if (context === null) return;
  forgetSession();
  showLogin(`Your session ended: ${error.message} Log in again.`);
}

onSessionEnded(endSession);
window.addEventListener('hashchange', () => route(true));
// A click on the view already shown changes no hash: it draws the view again, freshly read, with the focus
// on its heading, as a click on any other view does.
nav.addEventListener('click', (event) => {
  const link = (event.target as Element).closest('a');
  if (link === null || link.getAttribute('href') !== location.hash) return;
  event.preventDefault();
  route(true);
});
showLogin(null);
