// A document page: its metadata, parent and children, every near-copy
// with its scores, and its family as a graph and a similarity histogram.

import { call } from './api.js';
import { bytes, errorBox, h, link, score, table, when } from './dom.js';
import { documentsTable, matchesTable } from './tables.js';
import { familyGraph, histogram } from './charts.js';

export async function documentView(ctx) {
  const id = Number(ctx.params[0]);
  const head = h('div', { id: 'doc-head' }, h('h1', {}, `Document ${id}`));
  const meta = h('section', { id: 'doc-meta' });
  const similar = h('section', { id: 'similar', 'aria-labelledby': 'similar-h' }, h('h2', { id: 'similar-h' }, 'Copies and near-copies'), h('p', { class: 'muted' }, 'Loading…'));
  const related = h('section', { id: 'related', 'aria-labelledby': 'related-h' }, h('h2', { id: 'related-h' }, 'Parent and children'));
  const parentBox = h('div', { id: 'parent' });
  const childrenBox = h('div', { id: 'children' }, h('p', { class: 'muted' }, 'Loading…'));
  related.append(parentBox, childrenBox);
  const family = h('section', { id: 'family', 'aria-labelledby': 'family-h' }, h('h2', { id: 'family-h' }, 'Family'), h('p', { class: 'muted' }, 'Loading…'));
  const dist = h('section', { id: 'distribution', 'aria-labelledby': 'dist-h' }, h('h2', { id: 'dist-h' }, 'Similarity distribution'));
  ctx.root.append(head, meta, similar, h('div', { class: 'grid2' }, family, dist), related);

  const docP = call(`/documents/${id}`);
  const simP = call(`/documents/${id}/similar`);
  const famP = call(`/documents/${id}/family`);
  const kidsP = call(`/documents/${id}/children`);
  // Every section shows its own error; none stops the others.
  for (const p of [docP, simP, famP, kidsP]) p.catch(() => {});

  let doc;
  try {
    doc = await docP;
  } catch (e) {
    if (e.status === 401) return;
    head.replaceChildren(h('h1', {}, `Document ${id}`), errorBox(e));
  }
  if (doc) {
    document.title = `${doc.name || doc.key} · simdex`;
    head.replaceChildren(h('h1', {}, doc.name || doc.key || `Document ${id}`));
    meta.replaceChildren(metaList(doc));
    parentBox.replaceChildren(doc.parent
      ? h('p', {}, 'Inside ', link(`#/documents/${doc.parent}`, `document ${doc.parent}`, { id: 'parent-link' }), doc.path && doc.path.length > 1 ? ` as ${doc.path.join(' / ')}` : '')
      : h('p', { class: 'muted' }, 'A top-level document (no parent).'));
    if (doc.meta && doc.meta.thread_id) {
      const thread = h('section', { id: 'thread', 'aria-labelledby': 'thread-h' }, h('h2', { id: 'thread-h' }, 'E-mail thread'), h('p', { class: 'muted' }, 'Loading…'));
      similar.before(thread);
      call(`/documents/${id}/thread`).then((t) => renderThread(thread, t, id)).catch((e) => {
        if (e.status !== 401) thread.replaceChildren(h('h2', { id: 'thread-h' }, 'E-mail thread'), errorBox(e));
      });
    }
    if (doc.parent) {
      call(`/documents/${doc.parent}`).then((p) => {
        const a = parentBox.querySelector('#parent-link');
        if (a && (p.name || p.key)) a.textContent = p.name || p.key;
      }).catch(() => {}); // the link works with the id alone
    }
  }

  let matches = [];
  try {
    matches = (await simP).matches || [];
    similar.replaceChildren(h('h2', { id: 'similar-h' }, `Copies and near-copies (${matches.length})`),
      matches.length ? matchesTable(matches, id) : h('p', { class: 'notice' }, 'No other stored document is a copy or near-copy of this one.'));
  } catch (e) {
    if (e.status === 401) return;
    similar.replaceChildren(h('h2', { id: 'similar-h' }, 'Copies and near-copies'), errorBox(e));
  }

  try {
    const kids = (await kidsP).documents || [];
    childrenBox.replaceChildren(kids.length
      ? h('div', {}, h('h3', {}, `Children: attachments and archive members (${kids.length})`), documentsTable(kids, 'documents children'))
      : h('p', { class: 'muted' }, 'No attachments or archive members.'));
  } catch (e) {
    if (e.status === 401) return;
    childrenBox.replaceChildren(errorBox(e));
  }

  let fam = null;
  try {
    fam = await famP;
  } catch (e) {
    if (e.status === 401) return;
    family.replaceChildren(h('h2', { id: 'family-h' }, 'Family'), errorBox(e));
  }
  if (fam) renderFamily(family, fam, id);
  renderDistribution(dist, fam ? fam.edges || [] : [], matches);
}

function metaList(d) {
  const rows = [
    ['Id', String(d.id)], ['Key', d.key], ['Version', d.version_id], ['Source', d.source],
    ['Path', d.path && d.path.length > 1 ? d.path.join(' / ') : ''], ['Type', d.media_type],
    ['Size', d.raw_size != null ? `${bytes(d.raw_size)} (text ${bytes(d.text_size)})` : ''],
    ['Content', d.content ? String(d.content) : ''], ['Modified', when(d.mod_time)], ['Indexed', when(d.indexed_at)],
    ['Not extracted', d.error],
  ];
  for (const [k, v] of Object.entries(d.meta || {})) rows.push([k, v]);
  // The origin's metadata, which its uploader chose: labelled apart from simdex's own.
  for (const [k, v] of Object.entries(d.origin || {})) rows.push([`origin: ${k}`, v]);
  return h('dl', { class: 'meta' }, rows.filter(([, v]) => v).map(([k, v]) => [h('dt', {}, k), h('dd', {}, v)]));
}

function renderFamily(section, fam, id) {
  const members = fam.members || [];
  const edges = fam.edges || [];
  const byId = new Map(members.map((m) => [m.id, m]));
  const head = h('h2', { id: 'family-h' }, `Family (${members.length} document${members.length === 1 ? '' : 's'})`);
  if (members.length <= 1) {
    section.replaceChildren(head, h('p', { class: 'notice' }, 'This document has no near-copies: its family is itself alone.'));
    return;
  }
  const graph = h('div', { id: 'family-graph', role: 'img', 'aria-label': `Family graph of ${members.length} documents; the list below has the same content` });
  const pivot = fam.pivot || id;
  // The closest link of each member to the pivot, for the list.
  const toPivot = new Map();
  for (const e of edges) {
    const other = e.a === pivot ? e.b : e.b === pivot ? e.a : 0;
    if (other) toPivot.set(other, e);
  }
  const rows = members.map((m) => {
    const e = toPivot.get(m.id);
    return h('tr', { dataset: { id: String(m.id) } },
      h('td', { class: 'name' }, m.id === id ? h('strong', {}, m.name || m.key) : link(`#/documents/${m.id}`, m.name || m.key || `#${m.id}`)),
      h('td', {}, m.id === pivot ? 'pivot' : ''),
      h('td', { class: 'num' }, e ? score(e.resemblance) : ''));
  });
  section.replaceChildren(head,
    fam.truncated ? h('p', { class: 'notice' }, 'The family is large: only part of it is shown.') : '',
    graph,
    h('p', { class: 'legend' }, 'Each node is a document; the pivot is outlined and larger. Thicker, darker links are more alike. Click a node to open it.'),
    h('details', {}, h('summary', {}, 'Members as a list'),
      table(['Document', '', h('th', { scope: 'col', class: 'num' }, 'Resemblance to pivot')], rows, { class: 'family-members' })));
  try {
    familyGraph(graph, { members, edges, pivot, current: id, byId });
  } catch (e) {
    graph.replaceWith(errorBox(new Error(`The graph cannot be drawn here: ${e.message}`)));
  }
}

function renderDistribution(section, edges, matches) {
  const head = h('h2', { id: 'dist-h' }, 'Similarity distribution');
  const series = [];
  if (matches.length) series.push({ label: 'near-copies of this document', values: matches.map((m) => m.resemblance) });
  if (edges.length) series.push({ label: 'pairs within the family', values: edges.map((e) => e.resemblance) });
  if (!series.length) {
    section.replaceChildren(head, h('p', { class: 'muted' }, 'Nothing to compare.'));
    return;
  }
  const chart = h('div', { id: 'histogram', role: 'img', 'aria-label': 'Histogram of resemblance; the table below has the same counts' });
  section.replaceChildren(head, chart);
  try {
    const { bins, counts } = histogram(chart, series);
    section.appendChild(h('details', {}, h('summary', {}, 'Counts as a table'),
      table(['Resemblance', ...series.map((s) => h('th', { scope: 'col', class: 'num' }, s.label))],
        bins.map((b, i) => h('tr', {}, h('td', {}, `${b.toFixed(1)}–${(b + 0.1).toFixed(1)}`), series.map((_, j) => h('td', { class: 'num' }, String(counts[j][i]))))),
        { class: 'histogram-table' })));
  } catch (e) {
    chart.replaceWith(errorBox(new Error(`The histogram cannot be drawn here: ${e.message}`)));
  }
}

/**
 * renderThread lists a thread's messages in date order, the inclusive ones
 * marked: reviewing those covers the whole thread. A box keeps only them.
 */
function renderThread(section, t, id) {
  const msgs = t.messages || [];
  const rows = msgs.map((m) => {
    const d = m.document;
    const name = d.meta && d.meta.subject ? d.meta.subject : d.name || d.key;
    return h('tr', { dataset: { id: String(d.id), inclusive: String(m.inclusive) } },
      h('td', {}, (d.meta && d.meta.date) || ''),
      h('td', {}, (d.meta && d.meta.from) || ''),
      h('td', { class: 'name' }, d.id === id ? h('strong', {}, name) : link(`#/documents/${d.id}`, name)),
      h('td', {}, m.inclusive ? `inclusive (${m.reason})` : (m.contained_in ? h('span', {}, 'in ', link(`#/documents/${m.contained_in}`, `document ${m.contained_in}`)) : 'contained later')));
  });
  const only = h('input', { type: 'checkbox', id: 'thread-inclusive' });
  const body = table(['Date', 'From', 'Message', 'Inclusive'], rows, { class: 'thread' });
  only.addEventListener('change', () => {
    for (const tr of body.querySelectorAll('tbody tr')) tr.hidden = only.checked && tr.dataset.inclusive !== 'true';
  });
  const inclusive = msgs.filter((m) => m.inclusive).length;
  section.replaceChildren(
    h('h2', { id: 'thread-h' }, `E-mail thread (${msgs.length} message${msgs.length === 1 ? '' : 's'}, ${inclusive} inclusive)`),
    h('p', { class: 'muted' }, `Thread ${t.id}. A message is inclusive when no later message of the thread holds all of its text and attachments: reviewing the inclusive messages covers the thread.`),
    h('label', { class: 'check' }, only, ' Inclusive messages only'),
    body);
}
