// Sign-in: the reviewer pastes an API token; it is kept in sessionStorage
// (this tab only, gone when it closes) and checked with GET /whoami.

import { call, clearToken, setToken, validToken } from './api.js';
import { errorBox, h } from './dom.js';

export async function signinView(ctx) {
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', spellcheck: 'false', required: true, 'aria-describedby': 'token-help' });
  const status = h('div', { 'aria-live': 'polite' });
  const form = h('form', { class: 'signin', id: 'signin-form' },
    h('h1', {}, 'Sign in to simdex'),
    h('div', { class: 'field' },
      h('label', { for: 'token' }, 'API token'),
      input,
      h('span', { id: 'token-help', class: 'muted' }, 'Paste a token made with ', h('code', {}, 'simdex token create'), ': sdx_ followed by 16 hex digits, _ and the secret. It is kept in this tab only.')),
    h('button', { type: 'submit' }, 'Sign in'),
    status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const t = input.value.trim();
    status.replaceChildren();
    if (!validToken(t)) {
      status.appendChild(errorBox(new Error('That is not an API token: want sdx_<16 hex digits>_<secret>.')));
      input.focus();
      return;
    }
    setToken(t);
    try {
      await call('/whoami', { keepOn401: true });
    } catch (e) {
      clearToken();
      status.appendChild(errorBox(e.status === 401 ? new Error('The server refused this token (unknown, revoked or expired).') : e));
      input.focus();
      return;
    }
    await ctx.signedIn();
  });
  ctx.root.appendChild(form);
  input.focus();
}
