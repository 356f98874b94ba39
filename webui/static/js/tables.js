// Tables shared by several views.

import { bytes, h, link, pct, score, table, when, yesNo } from './dom.js';

/**
 * matchesTable lists near-copies with every score. from: the id of the
 * stored document they were compared with (adds a diff link per row), or 0
 * for an uploaded file.
 */
export function matchesTable(matches, from) {
  const headers = [
    'Document', 'Key',
    h('th', { scope: 'col', class: 'num', title: 'How alike the two are as wholes (Jaccard estimate over shingles)' }, 'Resemblance'),
    h('th', { scope: 'col', class: 'num', title: 'Share of this document found in the match' }, 'This in match'),
    h('th', { scope: 'col', class: 'num', title: 'Share of the match found in this document' }, 'Match in this'),
    h('th', { scope: 'col', class: 'num', title: 'Lower bound of text in common, from whole shared chunks' }, 'Bytes in common'),
    h('th', { scope: 'col', class: 'num', title: 'SimHash distance in bits (0: alike)' }, 'Hamming'),
    'Identical text', 'Same bytes',
  ];
  if (!from) headers.splice(1, 0, 'Part of upload');
  if (from) headers.push('Diff');
  const rows = matches.map((m) => {
    const cells = [
      h('td', { class: 'name' }, link(`#/documents/${m.id}`, m.name || `#${m.id}`), m.path && m.path.length > 1 ? h('div', { class: 'muted' }, m.path.join(' / ')) : null),
      h('td', { class: 'name' }, m.key || ''),
      h('td', { class: 'num' }, score(m.resemblance), ' ', h('span', { class: 'bar', style: `width:${Math.round((m.resemblance || 0) * 40)}px`, 'aria-hidden': 'true' })),
      h('td', { class: 'num' }, pct(m.containment_ab)),
      h('td', { class: 'num' }, pct(m.containment_ba)),
      h('td', { class: 'num' }, bytes(m.bytes_in_common)),
      h('td', { class: 'num' }, String(m.hamming ?? '')),
      h('td', {}, yesNo(m.exact)),
      h('td', {}, yesNo(m.same_bytes)),
    ];
    if (!from) cells.splice(1, 0, h('td', { class: 'name' }, m.query || '(the file)'));
    if (from) cells.push(h('td', {}, link(`#/diff/${from}/${m.id}`, 'diff', { 'aria-label': `diff with ${m.name || m.id}`, class: 'diff-link' })));
    return h('tr', { dataset: { id: String(m.id) } }, cells);
  });
  return table(headers, rows, { class: 'matches' });
}

/** documentsTable lists stored documents. */
export function documentsTable(docs, cls = 'documents') {
  const rows = docs.map((d) => h('tr', { dataset: { id: String(d.id) } },
    h('td', { class: 'num' }, String(d.id)),
    h('td', { class: 'name' }, link(`#/documents/${d.id}`, d.name || d.key || `#${d.id}`), d.path && d.path.length > 1 ? h('div', { class: 'muted' }, d.path.join(' / ')) : null),
    h('td', { class: 'name' }, d.key || ''),
    h('td', {}, d.source || ''),
    h('td', {}, d.media_type || ''),
    h('td', { class: 'num' }, bytes(d.raw_size)),
    h('td', {}, when(d.indexed_at)),
    h('td', {}, d.error ? h('span', { class: 'tag', title: d.error }, 'not extracted') : ''),
  ));
  return table(['Id', 'Name', 'Key', 'Source', 'Type', 'Size', 'Indexed', ''], rows, { class: cls });
}
