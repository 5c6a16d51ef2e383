/** The login form: user id, password, an optional TOTP code, and the API key that order entry needs. */
import { ApiError, logIn, type Session } from '../api.js';
import { clearFieldError, field, h, showFieldError } from '../dom.js';

export function loginView(notice: string | null, loggedIn: (session: Session) => void): HTMLElement {
  const userId = h('input', {
    name: 'user_id',
    autocomplete: 'username',
    required: true,
    maxlength: 64,
    autocapitalize: 'none',
    spellcheck: 'false',
  });
  const password = h('input', {
    name: 'password',
    type: 'password',
    autocomplete: 'current-password',
    required: true,
    maxlength: 256,
  });
  const totp = h('input', {
    name: 'totp',
    inputmode: 'numeric',
    autocomplete: 'one-time-code',
    pattern: '[0-9]{6}',
    maxlength: 6,
  });
  const apiKey = h('input', { name: 'api_key', type: 'password', autocomplete: 'off', required: true, maxlength: 256 });
  const submit = h('button', { type: 'submit' }, 'Log in');
  const status = h('p', { role: 'alert', class: 'status-line' }, notice ?? '');
  const controls: Record<LoginField, HTMLInputElement> = { userId, password, totp, apiKey };

  const form = h(
    'form',
    {
      class: 'card login',
      'aria-labelledby': 'login-title',
      onSubmit: (event: Event) => {
        event.preventDefault();
        for (const control of Object.values(controls)) clearFieldError(control);
        submit.disabled = true;
        status.textContent = 'Logging in...';
        logIn({
          userId: userId.value.trim(),
          password: password.value,
          totp: totp.value.trim(),
          apiKey: apiKey.value.trim(),
        })
          .then((session) => {
            password.value = '';
            loggedIn(session);
          })
          .catch((error: unknown) => {
            submit.disabled = false;
            const refusal =
              error instanceof ApiError
                ? loginRefusal(error)
                : { text: 'The login failed: the server did not answer. Try again.', field: null };
            const at = refusal.field === null ? null : controls[refusal.field];
            // Said once: beside the field it is about (which gets the focus), or else in the status line.
            status.textContent = at === null ? refusal.text : '';
            if (at !== null) showFieldError(at, refusal.text);
            (at ?? password).focus();
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

type LoginField = 'userId' | 'password' | 'totp' | 'apiKey';

/**
 * A refused login in a trader's words, and the field it is about. The API's message stays in the envelope;
 * the console says what to do.
 */
export function loginRefusal(error: ApiError): { text: string; field: LoginField | null } {
  switch (error.code) {
    case 'e-208':
      return { text: 'Wrong user id or password.', field: 'password' };
    case 'e-209':
      return { text: 'Enter the 6-digit code of your authenticator app.', field: 'totp' };
    case 'e-210':
      return { text: 'That code is wrong, expired or used already: enter the current one.', field: 'totp' };
    case 'e-211':
      return {
        text: 'This API key is not an active key of this user: check it, or ask your broker for a new one.',
        field: 'apiKey',
      };
    case 'e-213':
      return { text: 'This server needs your API key to log in.', field: 'apiKey' };
    case 'e-215':
      return {
        text: 'This API key may not be used from your address: your broker registers the addresses of each key.',
        field: 'apiKey',
      };
    case 'e-212':
      return { text: 'This user is disabled: ask your broker.', field: null };
    case 'e-216':
      return { text: 'Your broker requires a second factor: ask them to enrol you in TOTP.', field: null };
    case 'e-429':
      return { text: 'Too many attempts: wait a little, then try again.', field: null };
    default:
      return { text: error.message, field: null };
  }
}
