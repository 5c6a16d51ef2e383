/**
 * A view's live reads (the offers, an issue's book, an offer's book): `read` is made one at a time (one asked
 * for while another runs is made when it ends), then again after `intervalMs` for as long as it answers true;
 * paused while the page is hidden and made at once when it shows again. `read` handles its own errors.
 */
export interface LivePoll {
  /** Reads now (Refresh, a change of what is shown): the next timed read counts from this one. */
  again(): void;
  dispose(): void;
}

export function livePoll(busy: HTMLElement, read: () => Promise<boolean>, intervalMs: number): LivePoll {
  let timer: ReturnType<typeof setTimeout> | undefined;
  let reading = false;
  let readAgain = false;
  let disposed = false;

  function show(): void {
    if (disposed) return;
    if (reading) {
      readAgain = true;
      return;
    }
    reading = true;
    busy.setAttribute('aria-busy', 'true');
    let more = false;
    // Fire and forget: `read` handles its own errors (above), so nothing rejects here.
    void read()
      .then((answer) => {
        more = answer;
      })
      .finally(() => {
        reading = false;
        busy.setAttribute('aria-busy', 'false');
        if (readAgain) {
          readAgain = false;
          again();
        } else if (more && !disposed && !document.hidden) {
          timer = setTimeout(show, intervalMs);
        }
      });
  }
  const again = () => {
    clearTimeout(timer);
    show();
  };
  const onVisibility = () => {
    if (!document.hidden) again();
  };
  document.addEventListener('visibilitychange', onVisibility);
  return {
    again,
    dispose: () => {
      disposed = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', onVisibility);
    },
  };
}
