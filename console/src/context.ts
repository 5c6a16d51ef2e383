/** What every view is given, and what it gives back. */
import type { Session } from './api.js';
import type { OrderStore } from './orders-store.js';

export interface ConsoleContext {
  session: Session;
  orders: OrderStore;
  /** Says something to screen-reader users without moving their focus (the page's polite live region). */
  announce(text: string): void;
}

export interface View {
  element: HTMLElement;
  /** Stops the view's timers and subscriptions when another view replaces it. */
  dispose?(): void;
}
