/**
 * The header's indicator of the order-event stream: "Live", "Connecting...", "Reconnecting..." or "Offline,
 * retrying in 8 s", in words (the dot beside them only repeats what they say). It is not a live region: its
 * countdown would be read every second. Screen readers hear it through the page's announcer instead, twice
 * per outage at most: when the live updates are lost, and when they are back (not at each retry).
 */
import { h } from './dom.js';
import type { StreamState } from './order-events.js';

export interface StreamStatus {
  element: HTMLElement;
  show(state: StreamState): void;
  dispose(): void;
}

export function streamStatus(announce: (text: string) => void): StreamStatus {
  const text = h('span', { class: 'stream-state-text' }, 'Connecting...');
  const element = h(
    'p',
    { class: 'stream-state', 'data-state': 'connecting' },
    h('span', { class: 'visually-hidden' }, 'Order updates: '),
    text,
  );
  let ticker: ReturnType<typeof setInterval> | undefined;
  /** The loss was announced: the return will be. */
  let lost = false;

  const countdown = (retryAt: number) => {
    const seconds = Math.max(1, Math.ceil((retryAt - Date.now()) / 1000));
    text.textContent = `Offline, retrying in ${seconds} s`;
  };

  return {
    element,
    show(state) {
      clearInterval(ticker);
      ticker = undefined;
      element.dataset.state = state.state;
      switch (state.state) {
        case 'connecting':
          text.textContent = state.again ? 'Reconnecting...' : 'Connecting...';
          return;
        case 'live':
          text.textContent = 'Live';
          if (lost) announce('Live order updates are back: statuses are current again.');
          lost = false;
          return;
        case 'offline':
          countdown(state.retryAt);
          ticker = setInterval(() => countdown(state.retryAt), 1000);
          if (!lost)
            announce('Live order updates are offline: order statuses may be out of date until the console reconnects.');
          lost = true;
          return;
      }
    },
    dispose: () => clearInterval(ticker),
  };
}
