// Matters and legal holds: the list, one hold with its seeds, and (for a
// legal-admin) placing and releasing holds.

import { call, qs } from './api.js';
import { errorBox, go, h, link, score, table, when } from './dom.js';

export async function holdsView(ctx) {
  const canManage = ctx.session.can('holds.manage');
  const list = h('section', { id: 'holds' }, h('p', { class: 'muted' }, 'Loading…'));
  ctx.root.append(h('h1', {}, 'Matters and legal holds'), list);
  if (canManage) ctx.root.appendChild(createForm());
  let holds;
  try {
    holds = (await call('/holds')).holds || [];
  } catch (e) {
    if (e.status === 401) return;
    list.replaceChildren(errorBox(e));
    return;
  }
  const rows = holds.map((hd) => h('tr', { dataset: { matter: hd.matter } },
    h('td', {}, link(`#/holds/${encodeURIComponent(hd.matter)}`, hd.matter)),
    h('td', { class: 'name' }, hd.name || ''),
    h('td', {}, h('span', { class: `tag status-${hd.status}` }, hd.status)),
    h('td', { class: 'name' }, hd.reason || ''),
    h('td', {}, hd.owner || ''),
    h('td', { class: 'num' }, String((hd.seeds || []).length)),
    h('td', { class: 'num' }, String(hd.held ?? '')),
    h('td', {}, when(hd.created), hd.created_by ? h('div', { class: 'muted' }, hd.created_by) : null),
    h('td', {}, when(hd.released), hd.released_by ? h('div', { class: 'muted' }, hd.released_by) : null),
    h('td', {}, link(`#/flags${qs({ matter: hd.matter, status: 'open' })}`, 'open flags'))));
  list.replaceChildren(holds.length
    ? table(['Matter', 'Name', 'Status', 'Reason', 'Owner', h('th', { scope: 'col', class: 'num' }, 'Seeds'), h('th', { scope: 'col', class: 'num' }, 'Held'), 'Placed', 'Released', ''], rows, { class: 'holds' })
    : h('p', { class: 'notice' }, 'No legal holds.'));
}

/** parseIDs reads document ids separated by spaces, commas or new lines. */
function parseIDs(s) {
  const out = [];
  for (const t of s.split(/[\s,;]+/).filter(Boolean)) {
    if (!/^\d+$/.test(t)) throw new Error(`Seed document ids: “${t}” is not a number.`);
    out.push(Number(t));
  }
  return out;
}

function createForm() {
  const field = (id, label, input, help) => h('div', { class: 'field' }, h('label', { for: id }, label), input, help ? h('span', { class: 'muted' }, help) : null);
  const matter = h('input', { id: 'h-matter', type: 'text', required: true, autocomplete: 'off' });
  const name = h('input', { id: 'h-name', type: 'text', autocomplete: 'off', size: 40 });
  const reason = h('input', { id: 'h-reason', type: 'text', required: true, autocomplete: 'off', size: 40 });
  const seeds = h('input', { id: 'h-seeds', type: 'text', autocomplete: 'off', size: 30 });
  const keys = h('textarea', { id: 'h-keys', rows: 3, cols: 50 });
  const status = h('div', { id: 'hold-status', 'aria-live': 'polite' });
  const form = h('form', { id: 'hold-form', class: 'panel' },
    h('h2', {}, 'Place a legal hold'),
    h('p', { class: 'muted' }, 'Every copy and near-copy of the seed documents is held and flagged for review, now and as new documents arrive.'),
    h('div', { class: 'row' }, field('h-matter', 'Matter', matter), field('h-name', 'Name', name), field('h-reason', 'Reason', reason)),
    h('div', { class: 'row' }, field('h-seeds', 'Seed document ids', seeds, 'e.g. 12, 57'), field('h-keys', 'Seed keys', keys, 'one index key per line')),
    h('button', { type: 'submit' }, 'Place hold'), status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.replaceChildren();
    let body;
    try {
      body = {
        matter: matter.value.trim(), name: name.value.trim(), reason: reason.value.trim(),
        seeds: parseIDs(seeds.value), seed_keys: keys.value.split('\n').map((k) => k.trim()).filter(Boolean),
      };
      if (!body.matter || !body.reason) throw new Error('A matter and a reason are required.');
      if (!body.seeds.length && !body.seed_keys.length) throw new Error('Give at least one seed document id or key.');
    } catch (e) {
      status.appendChild(errorBox(e));
      return;
    }
    try {
      const res = await call('/holds', { json: body });
      const p = res.placement || {};
      status.replaceChildren(h('p', { class: 'notice success', role: 'status' },
        `Hold ${body.matter} placed: ${p.held ?? 0} documents held, ${p.flagged ?? 0} flagged for review.`,
        p.enforce_errors && p.enforce_errors.length ? ` ${p.enforce_errors.length} could not be locked at the source yet and will be retried.` : ''));
      setTimeout(() => go(`#/holds/${encodeURIComponent(body.matter)}`), 0);
    } catch (e) {
      if (e.status === 401) return;
      status.appendChild(errorBox(e));
    }
  });
  return form;
}

export async function holdView(ctx) {
  const matter = ctx.params[0];
  const box = h('section', { id: 'hold' }, h('p', { class: 'muted' }, 'Loading…'));
  ctx.root.append(h('h1', {}, `Matter ${matter}`), box);
  let hd;
  try {
    hd = await call(`/holds/${encodeURIComponent(matter)}`);
  } catch (e) {
    if (e.status === 401) return;
    box.replaceChildren(errorBox(e));
    return;
  }
  const dl = h('dl', { class: 'meta' }, [
    ['Name', hd.name], ['Status', hd.status], ['Reason', hd.reason], ['Owner', hd.owner], ['Mode', hd.mode],
    ['Documents held', String(hd.held ?? '')], ['Placed', `${when(hd.created)} ${hd.created_by || ''}`.trim()],
    ['Released', hd.released && !hd.released.startsWith('0001-') ? `${when(hd.released)} ${hd.released_by || ''}: ${hd.release_reason || ''}` : ''],
    ['Scope', hd.scope ? `resemblance ≥ ${hd.scope.resemblance ?? ''}, containment ≥ ${hd.scope.containment ?? ''}` : ''],
  ].filter(([, v]) => v).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
  // Seeds and held documents by name, each with why it is held.
  let held = [];
  try {
    held = (await call(`/holds/${encodeURIComponent(matter)}/documents`)).documents || [];
  } catch (e) {
    if (e.status === 401) return;
  }
  const named = new Map(held.map((d) => [d.document.id, d.document.name || d.document.key]));
  const seeds = (hd.seeds || []).map((id) => h('li', {}, link(`#/documents/${id}`, named.get(id) || `document ${id}`)));
  const why = (d) => {
    if (d.seed) return 'seed';
    const s = d.scores ? ` (resemblance ${score(d.scores.resemblance)}, containment ${score(Math.max(d.scores.containment_ab || 0, d.scores.containment_ba || 0))})` : '';
    const of = d.matched_seed ? h('span', {}, ' of ', link(`#/documents/${d.matched_seed.id}`, d.matched_seed.name || d.matched_seed.key)) : '';
    return h('span', {}, `${d.role || 'held'}${s}`, of);
  };
  const rows = held.map((d) => h('tr', { dataset: { id: String(d.document.id) } },
    h('td', { class: 'name' }, link(`#/documents/${d.document.id}`, d.document.name || d.document.key)),
    h('td', {}, why(d)),
    h('td', {}, when(d.placed))));
  box.replaceChildren(dl,
    h('h2', {}, `Seeds (${seeds.length})`), seeds.length ? h('ul', { id: 'seeds' }, seeds) : h('p', { class: 'muted' }, 'No seed documents (selectors only).'),
    h('h2', {}, `Held documents (${held.length})`),
    held.length ? table(['Document', 'Why it is held', 'Held since'], rows, { class: 'held' }) : h('p', { class: 'muted' }, 'No documents held yet.'),
    h('p', {}, link(`#/flags${qs({ matter, status: 'open' })}`, 'Open flags of this matter')));
  if ((hd.status === 'active' || hd.status === 'placing') && ctx.session.can('holds.manage')) box.appendChild(releaseForm(matter));
}

function releaseForm(matter) {
  const reason = h('input', { id: 'release-reason', type: 'text', required: true, size: 40, autocomplete: 'off' });
  const status = h('div', { id: 'release-status', 'aria-live': 'polite' });
  const form = h('form', { id: 'release-form', class: 'bulk' },
    h('div', { class: 'field' }, h('label', { for: 'release-reason' }, 'Reason for release'), reason),
    h('button', { type: 'submit', class: 'danger' }, 'Release hold'), status);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const why = reason.value.trim();
    if (!why) {
      status.replaceChildren(errorBox(new Error('A reason is required to release a hold.')));
      return;
    }
    try {
      await call(`/holds/${encodeURIComponent(matter)}/release`, { json: { reason: why } });
      go(`#/holds/${encodeURIComponent(matter)}`);
    } catch (e) {
      if (e.status === 401) return;
      status.replaceChildren(errorBox(e));
    }
  });
  return form;
}
