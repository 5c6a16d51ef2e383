/**
 * The header on a phone: one row (the brand, the order stream's state and a Menu button) with the views and
 * the session folded behind the button, so that the header stays under 64 px. On wider screens the button
 * is not shown and the views and the session sit in the row (app.css). The menu closes when a view is
 * chosen, on Escape (the focus back on the button), and at logout.
 */
export interface HeaderMenu {
  /** Shows the button (after login) or hides it with the menu (at logout). */
  enable(enabled: boolean): void;
}

export function headerMenu(header: HTMLElement, button: HTMLButtonElement, menu: HTMLElement): HeaderMenu {
  const setOpen = (open: boolean) => {
    button.setAttribute('aria-expanded', String(open));
    header.classList.toggle('menu-open', open);
  };
  button.addEventListener('click', () => setOpen(button.getAttribute('aria-expanded') !== 'true'));
  menu.addEventListener('click', (event) => {
    if ((event.target as Element).closest('a') !== null) setOpen(false);
  });
  menu.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || button.getAttribute('aria-expanded') !== 'true') return;
    setOpen(false);
    button.focus();
  });
  return {
    enable(enabled) {
      button.hidden = !enabled;
      if (!enabled) setOpen(false);
    },
  };
}
