// DOM helpers. Every string given here becomes a text node or an
// attribute value, never markup: document names and text are untrusted.

/**
 * h builds an element. attrs: "class", "text" (text content), "on<event>"
 * handlers, booleans (set when true), "dataset" (object); anything else is
 * set with setAttribute. children: nodes, strings (text), arrays, or
 * null/undefined/false (skipped).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === 'class') el.className = v;
    else if (k === 'text') el.textContent = String(v);
    else if (k === 'dataset') Object.assign(el.dataset, v);
    else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (v === true) el.setAttribute(k, '');
    else el.setAttribute(k, String(v));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c === undefined || c === null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else if (c instanceof Node) el.appendChild(c);
    else el.appendChild(document.createTextNode(String(c)));
  }
}

/** link makes an <a href> with text. */
export function link(href, text, attrs = {}) {
  return h('a', { href, ...attrs }, text);
}

/** errorBox shows an error message (role=alert, read out by screen readers). */
export function errorBox(err) {
  return h('div', { class: 'error', role: 'alert' }, messageOf(err));
}

/** messageOf returns the text of an error for a person. */
export function messageOf(err) {
  if (!err) return 'unknown error';
  if (err.status) return `${err.message} (HTTP ${err.status})`;
  return err.message || String(err);
}

/** table builds a table from column headers and row nodes. */
export function table(headers, rows, attrs = {}) {
  return h('div', { class: 'table-wrap' },
    h('table', attrs,
      h('thead', {}, h('tr', {}, headers.map((c) => typeof c === 'string' ? h('th', { scope: 'col' }, c) : c))),
      h('tbody', {}, rows)));
}

/** num formats a score with 3 decimals. */
export function score(x) {
  return typeof x === 'number' ? x.toFixed(3) : '';
}

/** pct formats a share 0..1 as a percentage. */
export function pct(x) {
  return typeof x === 'number' ? `${(x * 100).toFixed(1)}%` : '';
}

/** bytes formats a size. */
export function bytes(n) {
  if (typeof n !== 'number') return '';
  if (n < 1024) return `${n} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = n / 1024, i = 0;
  while (v >= 1024 && i < units.length - 1) { v /= 1024; i++; }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** when formats an RFC 3339 time for display, or '' when absent. */
export function when(s) {
  if (!s || s.startsWith('0001-')) return '';
  const d = new Date(s);
  return isNaN(d) ? s : d.toLocaleString();
}

/** yesNo formats a boolean. */
export function yesNo(b) { return b ? 'yes' : 'no'; }

/** go navigates to a hash route, rendering it again if it is the current one. */
export function go(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}
