/** The login form: user id, password, an optional TOTP code, and the API key that order entry needs. */
import { ApiError, logIn, type Session } from '../api.js';
import { field, h } from '../dom.js';

export function loginView(notice: string | null, loggedIn: (session: Session) => void): HTMLElement {
  const userId = h('input', { name: 'user_id', autocomplete: 'username', required: true, maxlength: 64, autocapitalize: 'none', spellcheck: 'false' });
  const password = h('input', { name: 'password', type: 'password', autocomplete: 'current-password', required: true, maxlength: 256 });
  const totp = h('input', { name: 'totp', inputmode: 'numeric', autocomplete: 'one-time-code', pattern: '[0-9]{6}', maxlength: 6 });
  const apiKey = h('input', { name: 'api_key', type: 'password', autocomplete: 'off', required: true, maxlength: 256 });
  const submit = h('button', { type: 'submit' }, 'Log in');
  const status = h('p', { role: 'alert', class: 'status-line' }, notice ?? '');

  const form = h(
    'form',
    {
      class: 'card login',
      'aria-labelledby': 'login-title',
      onSubmit: (event: Event) => {
        event.preventDefault();
        submit.disabled = true;
        status.textContent = 'Logging in...';
        logIn({ userId: userId.value.trim(), password: password.value, totp: totp.value.trim(), apiKey: apiKey.value.trim() })
          .then((session) => {
            password.value = '';
            loggedIn(session);
          })
          .catch((error: unknown) => {
            status.textContent = error instanceof ApiError ? error.describe() : 'The login failed';
            submit.disabled = false;
            password.focus();
          });
      },
    },
    h('h2', { id: 'login-title', tabindex: -1 }, 'Log in'),
    field('User id', userId),
    field('Password', password),
    field('TOTP code', totp, 'Only if your user is enrolled in TOTP: the 6 digits of your authenticator app.'),
    field('API key', apiKey, 'Needed to place, modify and cancel bids and to execute carts; kept in this page only.'),
    submit,
    status,
  );
  queueMicrotask(() => userId.focus());
  return form;
}
