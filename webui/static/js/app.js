// simdex review UI: a hash router over views that each fetch what they
// show from /api/v1. Routes:
//
//   #/signin                 paste an API token
//   #/search?q=TEXT          search by name, key or id; drop a file
//   #/documents/ID           a document, its near-copies, family, parent, children
//   #/diff/A/B               side-by-side word diff of two documents
//   #/flags?status=&kind=&matter=&after=   the review queue
//   #/holds, #/holds/MATTER  matters and legal holds

import { call, clearToken, setUnauthorizedHandler, token } from './api.js';
import { errorBox, go, h } from './dom.js';
import { signinView } from './signin.js';
import { searchView } from './search.js';
import { documentView } from './document.js';
import { diffView } from './diff.js';
import { flagsView } from './flags.js';
import { holdsView, holdView } from './holds.js';

/** Session is who is signed in, as GET /api/v1/whoami says. */
class Session {
  constructor(who) {
    this.actor = who.actor || '';
    // name is the person the token is for; the token id is shown beside
    // it on hover, for forensics.
    this.name = who.name || this.actor;
    this.tokenId = who.token_id || '';
    this.role = who.role || '';
    this.matters = who.matters || [];
    this.permissions = new Set(who.permissions || []);
  }
  can(perm) { return this.permissions.has(perm); }
}

const routes = [
  { re: /^\/signin$/, nav: '', view: signinView, public: true },
  { re: /^\/(?:search)?$/, nav: 'search', view: searchView },
  { re: /^\/documents\/(\d+)$/, nav: 'search', view: documentView },
  { re: /^\/diff\/(\d+)\/(\d+)$/, nav: 'search', view: diffView },
  { re: /^\/flags$/, nav: 'flags', view: flagsView },
  { re: /^\/holds$/, nav: 'holds', view: holdsView },
  { re: /^\/holds\/(.+)$/, nav: 'holds', view: holdView },
];

const state = { session: null, returnTo: '', seq: 0 };

function parseHash() {
  const raw = location.hash.replace(/^#/, '') || '/search';
  const i = raw.indexOf('?');
  const path = i < 0 ? raw : raw.slice(0, i);
  const query = new URLSearchParams(i < 0 ? '' : raw.slice(i + 1));
  return { raw, path, query };
}


function signedOut() {
  state.session = null;
  updateChrome();
  const { raw } = parseHash();
  if (raw !== '/signin') state.returnTo = `#${raw}`;
  if (location.hash !== '#/signin') location.hash = '#/signin';
  else render();
}

function updateChrome() {
  const nav = document.getElementById('nav');
  const who = document.getElementById('who');
  const s = state.session;
  nav.hidden = !s;
  who.hidden = !s;
  if (!s) {
    document.getElementById('about').hidden = true;
    return;
  }
  const name = document.getElementById('who-name');
  name.textContent = `${s.name} (${s.role})`;
  name.title = s.tokenId ? `token ${s.tokenId}` : '';
  for (const a of nav.querySelectorAll('a[data-perm]')) {
    a.hidden = !s.can(a.dataset.perm);
  }
}

function markNav(name) {
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.dataset.nav === name) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
}

async function loadSession() {
  const who = await call('/whoami');
  state.session = new Session(who);
  updateChrome();
  showAbout();
  return state.session;
}

/** showAbout fills the footer with what `simdex version` prints. */
async function showAbout() {
  const el = document.getElementById('about');
  try {
    const a = await call('/about');
    const commit = a.commit ? ` (${a.commit.slice(0, 12)}${a.modified ? ', modified' : ''})` : '';
    el.textContent = `simdex ${a.version}${commit} · ${a.go_version} · normal form ${a.normal_form_version} · fingerprint scheme ${a.fingerprint_scheme} · index schema ${a.index_schema_version}`;
    el.hidden = false;
  } catch {
    el.hidden = true; // the footer is a courtesy: its absence breaks nothing
  }
}

async function render() {
  const seq = ++state.seq;
  const main = document.getElementById('main');
  const { path, query } = parseHash();
  const route = routes.find((r) => r.re.test(path));
  if (!route) {
    main.replaceChildren(h('h1', {}, 'Not found'), h('p', {}, 'No page here. ', h('a', { href: '#/search' }, 'Search documents')));
    return;
  }
  if (!route.public && !token()) {
    signedOut();
    return;
  }
  if (!route.public && !state.session) {
    try {
      await loadSession();
    } catch (e) {
      if (e.status === 401) return; // signedOut already ran
      main.replaceChildren(h('h1', {}, 'simdex'), errorBox(e));
      return;
    }
    if (seq !== state.seq) return;
  }
  markNav(route.nav);
  const root = h('div', { class: 'view' });
  main.replaceChildren(root);
  const ctx = {
    root,
    params: path.match(route.re).slice(1).map(decodeURIComponent),
    query,
    session: state.session,
    current: () => seq === state.seq,
    signedIn: async () => {
      await loadSession();
      const to = state.returnTo && state.returnTo !== '#/signin' ? state.returnTo : '#/search';
      state.returnTo = '';
      go(to);
    },
  };
  try {
    await route.view(ctx);
  } catch (e) {
    if (e.status === 401) return;
    root.appendChild(errorBox(e));
  }
  if (seq === state.seq) document.body.dataset.view = route.nav || 'signin';
}

function start() {
  setUnauthorizedHandler(signedOut);
  document.getElementById('signout').addEventListener('click', () => {
    clearToken();
    state.returnTo = '';
    signedOut();
  });
  window.addEventListener('hashchange', () => {
    render();
    document.getElementById('main').focus({ preventScroll: true });
  });
  render();
}

start();
