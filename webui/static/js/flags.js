// The review queue: one page of flags at a time (keyset pagination with
// after = the last id seen), filters, a checkbox per row, select-all, and
// approve or dismiss with a reason, one flag or many.

import { call, qs } from './api.js';
import { errorBox, go, h, link, messageOf, score, when } from './dom.js';

const PAGE_MAX = 100;
const KINDS = ['hold-match', 'disposition-due', 'duplicate-upload', 'hold-unenforced', 'hold-source-changed'];
const STATUSES = ['open', 'approved', 'refused', 'dismissed', 'executed', 'any'];

// The after values of the pages before the current one, per filter, so
// that "Previous page" can go back without counting from the start.
const trails = new Map();

export async function flagsView(ctx) {
  performance.clearMarks('flags-start');
  performance.clearMeasures('flags-render');
  performance.mark('flags-start');
  const q = ctx.query;
  const filter = {
    status: q.has('status') ? q.get('status') : 'open',
    kind: q.get('kind') || '',
    matter: q.get('matter') || '',
  };
  const limit = Math.min(PAGE_MAX, Math.max(1, Number(q.get('limit')) || 50));
  const after = Math.max(0, Number(q.get('after')) || 0);
  const key = JSON.stringify([filter, limit]);
  const stack = trails.get(key) || [];
  // Arriving on the first page (a link, a new filter) forgets the trail.
  if (!after) stack.length = 0;
  trails.set(key, stack);
  const canReview = ctx.session.can('flags.review');

  const form = filterForm(filter, limit, ctx.session.matters);
  const summary = h('div', { id: 'flags-status', 'aria-live': 'polite' });
  const body = h('section', { id: 'flags' });
  ctx.root.append(h('h1', {}, 'Review queue'), form, summary, body);

  let page;
  try {
    page = await call(`/flags${qs({ ...filter, status: filter.status === 'any' ? '' : filter.status, after: after || '', limit })}`);
  } catch (e) {
    if (e.status === 401) return;
    body.appendChild(errorBox(e));
    return;
  }
  const flags = (page.flags || []).slice(0, PAGE_MAX);
  const nextAfter = page.next_after || 0;

  const selected = new Set();
  const reason = h('input', { id: 'bulk-reason', type: 'text', size: 40, placeholder: 'why (recorded in the audit log)', autocomplete: 'off' });
  const count = h('span', { id: 'selected-count', class: 'muted' }, 'None selected');
  const approveSel = h('button', { type: 'button', id: 'bulk-approve', disabled: true }, 'Approve selected');
  const dismissSel = h('button', { type: 'button', id: 'bulk-dismiss', class: 'danger', disabled: true }, 'Dismiss selected');
  const selectAll = h('input', { type: 'checkbox', id: 'select-all', 'aria-label': 'Select every flag on this page' });
  const rows = new Map(); // id -> {tr, box, status, actions, flag}

  const refreshSelection = () => {
    const n = selected.size;
    count.textContent = n ? `${n} selected` : 'None selected';
    approveSel.disabled = dismissSel.disabled = n === 0;
    const selectable = [...rows.values()].filter((r) => !r.box.disabled);
    selectAll.checked = n > 0 && n === selectable.length;
    selectAll.indeterminate = n > 0 && n < selectable.length;
  };

  const setStatus = (id, status, error) => {
    const r = rows.get(id);
    if (!r) return;
    if (status) {
      r.flag.status = status;
      r.status.textContent = status;
      r.status.className = `status status-${status}`;
    }
    r.note.textContent = error || '';
    r.note.className = error ? 'error-inline error' : '';
    r.actions.replaceChildren(...actionButtons(r.flag));
    if (status && status !== 'open' && status !== 'approved') {
      r.box.checked = false;
      r.box.disabled = true;
      selected.delete(id);
    }
  };

  const needReason = () => {
    const v = reason.value.trim();
    if (!v) {
      summary.replaceChildren(errorBox(new Error('Give a reason first: every approval and dismissal records one.')));
      reason.focus();
    }
    return v;
  };

  const act = async (ids, action, bulk) => {
    const why = needReason();
    if (!why) return;
    summary.replaceChildren(h('p', { class: 'muted' }, `${action === 'approve' ? 'Approving' : 'Dismissing'} ${ids.length} flag${ids.length === 1 ? '' : 's'}…`));
    approveSel.disabled = dismissSel.disabled = true;
    try {
      let results;
      if (!bulk) {
        try {
          const f = await call(`/flags/${ids[0]}/${action}`, { json: { reason: why } });
          results = [{ id: ids[0], status: f.status }];
        } catch (e) {
          if (e.status === 401) throw e;
          results = [{ id: ids[0], error: messageOf(e) }];
        }
      } else {
        results = (await call('/flags/bulk', { json: { ids, action, reason: why } })).results || [];
      }
      let ok = 0;
      const failed = [];
      for (const r of results) {
        if (r.error) failed.push(r);
        else ok++;
        setStatus(r.id, r.error ? '' : r.status, r.error || '');
      }
      const done = action === 'approve' ? 'approved' : 'dismissed';
      summary.replaceChildren(h('p', { class: failed.length ? 'error' : 'notice success', role: failed.length ? 'alert' : 'status' },
        `${ok} ${done}`, failed.length ? `, ${failed.length} refused: ${failed.map((f) => `#${f.id}: ${f.error}`).join('; ')}` : '.'));
    } catch (e) {
      if (e.status === 401) return;
      summary.replaceChildren(errorBox(e));
    } finally {
      refreshSelection();
    }
  };

  const actionButtons = (f) => {
    if (!canReview) return [];
    const out = [];
    if (f.status === 'open') out.push(h('button', { type: 'button', class: 'secondary approve', 'aria-label': `Approve flag ${f.id}`, onclick: () => act([f.id], 'approve') }, 'Approve'));
    if (f.status === 'open' || f.status === 'approved' || f.status === 'refused') out.push(' ', h('button', { type: 'button', class: 'danger dismiss', 'aria-label': `Dismiss flag ${f.id}`, onclick: () => act([f.id], 'dismiss') }, 'Dismiss'));
    return out;
  };

  // Build the rows off-document and attach them at once: one layout.
  const frag = document.createDocumentFragment();
  for (const f of flags) {
    const box = h('input', { type: 'checkbox', class: 'pick', 'aria-label': `Select flag ${f.id}`, disabled: !(f.status === 'open' || f.status === 'approved') });
    box.addEventListener('change', () => {
      if (box.checked) selected.add(f.id);
      else selected.delete(f.id);
      refreshSelection();
    });
    // A refused deletion is tagged, with why it was not carried out
    // (held for a matter, stale, gone, not deletable at its source).
    const status = h('span', { class: `status status-${f.status}${f.status === 'refused' ? ' tag' : ''}` }, f.status);
    const actions = h('td', { class: 'actions' });
    const note = h('div', {}, f.status === 'refused' && f.reason ? h('div', { class: 'refusal muted' }, f.reason) : null);
    const tr = h('tr', { dataset: { id: String(f.id) } },
      canReview ? h('td', {}, box) : null,
      h('td', { class: 'num' }, String(f.id)),
      h('td', {}, h('span', { class: 'tag' }, f.kind)),
      h('td', { class: 'name' }, link(`#/documents/${f.document}`, f.name || f.key || `#${f.document}`), h('div', { class: 'muted' }, f.source || '')),
      h('td', {}, f.matter ? link(`#/holds/${encodeURIComponent(f.matter)}`, f.matter) : ''),
      h('td', {}, f.rule || ''),
      h('td', {}, evidence(f)),
      h('td', {}, status, note),
      h('td', {}, when(f.created)),
      actions);
    rows.set(f.id, { tr, box, status, actions, note, flag: f });
    actions.append(...actionButtons(f));
    frag.appendChild(tr);
  }
  selectAll.addEventListener('change', () => {
    for (const [id, r] of rows) {
      if (r.box.disabled) continue;
      r.box.checked = selectAll.checked;
      if (selectAll.checked) selected.add(id);
      else selected.delete(id);
    }
    refreshSelection();
  });
  approveSel.addEventListener('click', () => act([...selected], 'approve', true));
  dismissSel.addEventListener('click', () => act([...selected], 'dismiss', true));

  const headers = [
    canReview ? h('th', { scope: 'col' }, selectAll) : null,
    h('th', { scope: 'col', class: 'num' }, 'Id'), h('th', { scope: 'col' }, 'Kind'), h('th', { scope: 'col' }, 'Document'),
    h('th', { scope: 'col' }, 'Matter'), h('th', { scope: 'col' }, 'Rule'), h('th', { scope: 'col' }, 'Evidence'),
    h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'Raised'), h('th', { scope: 'col' }, h('span', { class: 'sr-only' }, 'Actions')),
  ];
  const tbl = h('div', { class: 'table-wrap' }, h('table', { class: 'flags', id: 'flags-table' }, h('thead', {}, h('tr', {}, headers)), h('tbody', {}, frag)));

  const pager = h('nav', { class: 'pager', 'aria-label': 'Pages' },
    h('button', { type: 'button', class: 'secondary', id: 'first-page', disabled: !after, onclick: () => { stack.length = 0; go(`#/flags${qs({ ...filter, limit })}`); } }, 'First page'),
    h('button', { type: 'button', class: 'secondary', id: 'prev-page', disabled: !after, onclick: () => { const prev = stack.pop() || 0; go(`#/flags${qs({ ...filter, limit, after: prev || '' })}`); } }, 'Previous page'),
    h('span', { class: 'muted', id: 'page-info' }, flags.length ? `Flags ${flags[0].id}–${flags[flags.length - 1].id} (${flags.length} on this page)` : 'No flags'),
    h('button', { type: 'button', class: 'secondary', id: 'next-page', disabled: !nextAfter, onclick: () => { stack.push(after); go(`#/flags${qs({ ...filter, limit, after: nextAfter })}`); } }, 'Next page'));

  body.append(
    canReview && flags.length ? h('div', { class: 'bulk', role: 'group', 'aria-label': 'Act on the selected flags' },
      h('div', { class: 'field' }, h('label', { for: 'bulk-reason' }, 'Reason'), reason),
      approveSel, dismissSel, count) : '',
    flags.length ? tbl : h('p', { class: 'notice', id: 'no-flags' }, after ? 'No more flags.' : 'No flags match these filters.'),
    pager);
  performance.measure('flags-render', 'flags-start');
  document.body.dataset.flagsRendered = String(flags.length);
}

function evidence(f) {
  const ev = f.evidence || {};
  const parts = [];
  if (ev.role) parts.push(ev.role);
  if (ev.scores) parts.push(`resemblance ${score(ev.scores.resemblance)}`, `containment ${score(Math.max(ev.scores.containment_ab || 0, ev.scores.containment_ba || 0))}`);
  if (ev.scores && ev.scores.exact) parts.push('identical text');
  if (ev.due && !ev.due.startsWith('0001-')) parts.push(`due ${when(ev.due)}`);
  if (ev.action) parts.push(ev.action);
  const out = [parts.join(', ')];
  if (f.source_document) out.push(h('div', { class: 'muted' }, 'like ', link(`#/documents/${f.source_document.id}`, f.source_document.name || `#${f.source_document.id}`)));
  if (f.source_document && f.source_document.id !== f.document) out.push(h('div', {}, link(`#/diff/${f.source_document.id}/${f.document}`, 'diff')));
  if (ev.note) out.push(h('div', { class: 'muted' }, ev.note));
  if (f.reason) out.push(h('div', { class: 'muted' }, `${f.actor || ''}: ${f.reason}`));
  return out;
}

function filterForm(filter, limit, matters) {
  const status = h('select', { id: 'f-status', name: 'status' }, STATUSES.map((s) => h('option', { value: s, selected: s === filter.status }, s)));
  const kind = h('select', { id: 'f-kind', name: 'kind' }, ['', ...KINDS].map((k) => h('option', { value: k, selected: k === filter.kind }, k || 'any')));
  const matter = h('input', { id: 'f-matter', name: 'matter', type: 'text', value: filter.matter, list: 'matters-list', size: 16, autocomplete: 'off' });
  const size = h('select', { id: 'f-limit', name: 'limit' }, [25, 50, 100].map((n) => h('option', { value: n, selected: n === limit }, String(n))));
  const form = h('form', { class: 'row', id: 'flags-filter', 'aria-label': 'Filter flags' },
    h('div', { class: 'field' }, h('label', { for: 'f-status' }, 'Status'), status),
    h('div', { class: 'field' }, h('label', { for: 'f-kind' }, 'Kind'), kind),
    h('div', { class: 'field' }, h('label', { for: 'f-matter' }, 'Matter'), matter,
      h('datalist', { id: 'matters-list' }, (matters || []).map((m) => h('option', { value: m })))),
    h('div', { class: 'field' }, h('label', { for: 'f-limit' }, 'Per page'), size),
    h('div', { class: 'field' }, h('button', { type: 'submit' }, 'Show')));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    go(`#/flags${qs({ status: status.value, kind: kind.value, matter: matter.value.trim(), limit: size.value })}`);
  });
  return form;
}
