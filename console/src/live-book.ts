/**
 * The live reading of an operator's book, one for the issue's book and the offer's (views/operator-book.ts,
 * views/offer-book.ts): the book's area, when it was read, a status line, and a Live checkbox; read every
 * LIVE_BOOK_READ_MS while live and until the book can no longer change. Neither the book nor the time it
 * was read is a live region: a read every two seconds would be read aloud every two seconds; the status
 * line (polite) speaks when what it says changes.
 */
import { ApiError } from './api.js';
import { h, statusLine } from './dom.js';
import { formatClock } from './format.js';
import { livePoll } from './live-poll.js';

export const LIVE_BOOK_READ_MS = 2_000;

/** One read of a book: what to draw (undefined: unchanged), what the status line says, whether it is settled. */
export interface BookRead {
  draw?: HTMLElement[];
  status: string;
  /** Nothing in it can change any more: no read follows. */
  settled: boolean;
}

export interface LiveBook {
  area: HTMLElement;
  readAt: HTMLElement;
  status: HTMLElement;
  live: HTMLInputElement;
  /** Reads now (Refresh, another book chosen). */
  again(): void;
  disposed(): boolean;
  dispose(): void;
}

/**
 * `read` answers the book read, or null when its answer is no longer wanted (another book was chosen
 * meanwhile); a failure is shown in the area, and `readAfter(error)` says whether to read again (a 4xx
 * refusal, say, is not read again). `loading`: what the area says before the first read.
 */
export function liveBook(
  read: () => Promise<BookRead | null>,
  options: { readAfter: (error: unknown) => boolean; failure: string; loading?: HTMLElement },
): LiveBook {
  let disposed = false;
  const area = h('div', { 'aria-busy': 'false' }, ...(options.loading === undefined ? [] : [options.loading]));
  const readAt = h('p', { class: 'read-at' });
  const status = statusLine();
  const live = h('input', { name: 'live', type: 'checkbox', checked: true });
  const say = (text: string) => {
    if (status.textContent !== text) status.textContent = text;
  };

  async function once(): Promise<boolean> {
    try {
      const book = await read();
      if (disposed || book === null) return false;
      if (book.draw !== undefined) area.replaceChildren(...book.draw);
      const more = !book.settled && live.checked;
      readAt.textContent = `Read at ${formatClock(Date.now())}${more ? `; read again every ${LIVE_BOOK_READ_MS / 1000} s` : ''}.`;
      say(book.status);
      return more;
    } catch (error) {
      if (disposed) return false;
      area.replaceChildren(h('p', { role: 'alert' }, error instanceof ApiError ? error.describe() : options.failure));
      // Asked whether live or not: a view may forget what it drew (so that the next read draws again).
      const readAgain = options.readAfter(error);
      return live.checked && readAgain;
    }
  }

  const poll = livePoll(area, once, LIVE_BOOK_READ_MS);
  live.addEventListener('change', poll.again);
  return {
    area,
    readAt,
    status,
    live,
    again: poll.again,
    disposed: () => disposed,
    dispose: () => {
      disposed = true;
      poll.dispose();
    },
  };
}
